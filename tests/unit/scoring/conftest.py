"""Fixtures for the scoring tests.

METEOR tests need WordNet and Punkt built by ``scripts/install_nltk_data.sh`` (CI runs it). They look in
$NLTK_DATA, else in ``.nltk_data`` at the repository root, and skip with a clear message when absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def meteor():
    if not os.environ.get("NLTK_DATA") and (REPO_ROOT / ".nltk_data").is_dir():
        os.environ["NLTK_DATA"] = str(REPO_ROOT / ".nltk_data")
    from medfc.scoring.meteor import default_meteor
    from medfc.scoring.nltk_data import NltkDataMissing

    try:
        return default_meteor()
    except NltkDataMissing as exc:
        pytest.skip(f"WordNet/Punkt data absent; run scripts/install_nltk_data.sh to enable METEOR tests ({exc})")

