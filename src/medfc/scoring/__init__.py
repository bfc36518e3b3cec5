"""Scoring library: label metrics, AVeriTeC (HU-METEOR evidence, AVeriTeC score), MedSNIP (FF1,
OR-FALSE, paired bootstrap). Definitions and the CLI in docs/scoring.md.

Importing this package does not load NLTK data; only METEOR scoring needs it (see
``medfc.scoring.nltk_data.ensure_nltk_data``).
"""

from medfc.scoring.classification import (
    accuracy,
    aggregate_folds,
    classification_scores,
    confusion_matrix,
    macro_f1,
    mcnemar,
    mcnemar_bowker,
    mean_std,
)

__all__ = [
    "accuracy",
    "aggregate_folds",
    "classification_scores",
    "confusion_matrix",
    "macro_f1",
    "mcnemar",
    "mcnemar_bowker",
    "mean_std",
]
