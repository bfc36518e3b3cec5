"""The experiments tests' CliniFact split files (tiny, hand-made), shared here."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_exp_conftest", Path(__file__).resolve().parents[1] / "experiments" / "conftest.py")
_exp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_exp)
clinifact_data = _exp.clinifact_data
