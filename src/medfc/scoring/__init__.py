"""Scoring library: label metrics, AVeriTeC (HU-METEOR evidence, AVeriTeC score), MedSNIP (FF1,
OR-FALSE, paired bootstrap). Definitions and the CLI in docs/scoring.md.

Importing this package does not load NLTK data; only METEOR scoring needs it (see
``medfc.scoring.nltk_data.ensure_nltk_data``).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["accuracy", "aggregate_folds", "classification_scores", "confusion_matrix", "macro_f1", "mcnemar", "mcnemar_bowker", "mean_std"]


def __getattr__(name: str) -> Any:
    """The metrics above, from :mod:`medfc.scoring.classification` when first asked: importing the package (or its
    light :mod:`medfc.scoring.options`, which the plan reads) loads no numpy."""
    if name in __all__:
        return getattr(importlib.import_module("medfc.scoring.classification"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
