"""Fixtures of this folder: the tiny CliniFact splits (tests/helpers/experiment_data.py)."""

from tests.helpers.experiment_data import clinifact_data  # noqa: F401
