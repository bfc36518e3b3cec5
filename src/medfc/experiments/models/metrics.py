"""The validation scores training selects checkpoints by (:func:`medfc.common.metrics.classification_scores`)."""

from __future__ import annotations

from collections.abc import Sequence

from medfc.common.metrics import classification_scores


def validation_scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """Accuracy and macro P/R/F1 over ``labels`` (flat floats, for checkpoint selection)."""
    if len(gold) != len(pred):
        raise ValueError("gold and pred differ in length")
    scores = classification_scores(gold, pred, labels)
    return {k: float(scores[k]) for k in ("accuracy", "macro_precision", "macro_recall", "macro_f1")}
