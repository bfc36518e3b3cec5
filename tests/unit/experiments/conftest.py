"""Fixtures of this folder: tiny models and datasets (tests/helpers/experiment_data.py)."""

from tests.helpers.experiment_data import clinifact_data, healthfc_data, healthfc_recs, tiny_bert, tiny_gpt2, tiny_llama, train_cfg  # noqa: F401
