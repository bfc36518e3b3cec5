"""Scores used *inside* training (checkpoint selection) and for quick summaries of predictions.

The project's scorers live in ``medfc.scoring``; :func:`classification_scores` delegates to
``medfc.scoring.classification.classification_scores`` when that module exists and otherwise
computes the same quantities here (accuracy, macro and per-class precision / recall / F1, with
zero division counted as 0).  :func:`validation_scores` is the small, stable dict the training loop
selects checkpoints by (``accuracy``, ``macro_f1``, ``macro_precision``, ``macro_recall``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _prf(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    per_class: dict[str, dict[str, float]] = {}
    for label in labels:
        tp = sum(1 for g, p in zip(gold, pred) if g == label and p == label)
        n_pred = sum(1 for p in pred if p == label)
        n_gold = sum(1 for g in gold if g == label)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "support": n_gold}
    k = max(1, len(labels))
    return {
        "accuracy": sum(1 for g, p in zip(gold, pred) if g == p) / max(1, len(gold)),
        "macro_precision": sum(c["precision"] for c in per_class.values()) / k,
        "macro_recall": sum(c["recall"] for c in per_class.values()) / k,
        "macro_f1": sum(c["f1"] for c in per_class.values()) / k,
        "per_class": per_class,
        "n": len(gold),
    }


def validation_scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """Accuracy and macro P/R/F1 over ``labels`` (flat floats, for checkpoint selection)."""
    if len(gold) != len(pred):
        raise ValueError("gold and pred differ in length")
    scores = _prf(gold, pred, labels)
    return {k: float(scores[k]) for k in ("accuracy", "macro_precision", "macro_recall", "macro_f1")}


def classification_scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    """The project scorer when available, else the local equivalent."""
    try:
        from medfc.scoring.classification import classification_scores as project_scores
    except ImportError:
        return _prf(gold, pred, labels)
    return project_scores(gold, pred, labels)
