"""Label metrics (accuracy, per-class and macro P/R/F1, confusion matrix) for checkpoint selection and scoring, by
the conventions of docs/scoring.md ("Definitions"): ``labels`` fixes the classes, a zero denominator gives 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TypedDict

import numpy as np


def _check_lengths(*seqs: Sequence[object]) -> int:
    n = len(seqs[0])
    if any(len(s) != n for s in seqs[1:]):
        raise ValueError(f"sequences differ in length: {[len(s) for s in seqs]}")
    return n


def _ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den else 0.0


def f1_from_counts(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """(precision, recall, F1) from counts; each is 0 when its denominator is 0."""
    p, r = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return p, r, _ratio(2 * p * r, p + r)


def confusion_matrix(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts, gold labels as rows and predictions as columns, in ``labels`` order (unknown predictions left out)."""
    _check_lengths(gold, pred)
    index = {lab: i for i, lab in enumerate(labels)}
    if len(index) != len(labels):
        raise ValueError(f"duplicate labels in {list(labels)}")
    mat = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for g, p in zip(gold, pred):
        if g not in index:
            raise ValueError(f"gold label {g!r} is not one of {list(labels)}")
        j = index.get(p)
        if j is not None:
            mat[index[g], j] += 1
    return mat


def per_class_scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{label: {precision, recall, f1, support, n_pred}}`` for every label."""
    mat = confusion_matrix(gold, pred, labels)
    support = Counter(gold)  # every gold label is one of labels (confusion_matrix checks)
    out = {}
    for i, lab in enumerate(labels):
        tp = int(mat[i, i])
        fp = int(mat[:, i].sum()) - tp
        p, r, f1 = f1_from_counts(tp, fp, support[lab] - tp)
        out[lab] = {"precision": p, "recall": r, "f1": f1, "support": support[lab], "n_pred": tp + fp}
    return out


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Share of items whose prediction equals the gold label (0 for no items)."""
    n = _check_lengths(gold, pred)
    return _ratio(sum(g == p for g, p in zip(gold, pred)), n)


class Confusion(TypedDict):
    labels: list[str]
    matrix: list[list[int]]  # rows: gold labels, columns: predicted


class ClassificationScores(TypedDict):
    """:func:`classification_scores`."""

    n: int
    accuracy: float
    macro_precision: float
    macro_recall: float
    macro_f1: float
    per_class: dict[str, dict[str, float]]
    confusion: Confusion
    n_unknown_pred: int


def classification_scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> ClassificationScores:
    """All label metrics as one JSON-able dict (``confusion``: ``{"labels": [...], "matrix": [[...]]}``, rows = gold)."""
    n = _check_lengths(gold, pred)
    labels = list(labels)
    per = per_class_scores(gold, pred, labels)
    mat = confusion_matrix(gold, pred, labels)
    known = set(labels)
    return {
        "n": n,
        "accuracy": accuracy(gold, pred),
        "macro_precision": float(np.mean([v["precision"] for v in per.values()])) if labels else 0.0,
        "macro_recall": float(np.mean([v["recall"] for v in per.values()])) if labels else 0.0,
        "macro_f1": float(np.mean([v["f1"] for v in per.values()])) if labels else 0.0,
        "per_class": per,
        "confusion": {"labels": labels, "matrix": mat.tolist()},
        "n_unknown_pred": sum(p not in known for p in pred),
    }
