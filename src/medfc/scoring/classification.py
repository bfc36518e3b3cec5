"""Label metrics of every stage (:mod:`medfc.common.metrics`'s), the McNemar–Bowker test between two systems,
bootstrap intervals of accuracy and macro-F1, and mean ± std over folds (docs/scoring.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypedDict

import numpy as np
from numpy.typing import ArrayLike

from medfc.common.metrics import (  # noqa: F401 (the scorers' label metrics, used here and by callers)
    _check_lengths, accuracy, classification_scores, confusion_matrix, f1_from_counts, per_class_scores)


class MeanStd(TypedDict):
    """:func:`mean_std` (None where undefined)."""

    mean: float | None
    std: float | None
    n: int


def bootstrap_intervals(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str], *, n_resamples: int,
                        seed: int, alpha: float = 0.05, chunk: int = 1000) -> dict[str, object]:
    """Percentile bootstrap intervals of accuracy and macro-F1 over items (a prediction outside ``labels`` wrong),
    drawn from ``numpy.random.default_rng(seed)``. With no items both intervals are 0–0."""
    n = _check_lengths(gold, pred)
    labels = list(labels)
    k = len(labels)
    if len(set(labels)) != k:
        raise ValueError(f"duplicate labels in {labels}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    head = {"n_resamples": int(n_resamples), "seed": int(seed), "alpha": float(alpha), "method": "percentile"}
    if n == 0 or k == 0:
        return {**head, "accuracy": {"low": 0.0, "high": 0.0}, "macro_f1": {"low": 0.0, "high": 0.0}}
    index = {lab: i for i, lab in enumerate(labels)}
    g = np.array([index[x] if x in index else -1 for x in gold])
    if (g < 0).any():
        raise ValueError(f"gold label {gold[int(np.argmax(g < 0))]!r} is not one of {labels}")
    p = np.array([index.get(x, k) for x in pred])  # k: a prediction outside labels
    cell = g * (k + 1) + p  # one of k × (k + 1) (gold, pred) cells per item
    rng = np.random.default_rng(seed)
    acc, mf1 = np.empty(n_resamples), np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        draws = cell[rng.integers(0, n, size=(b, n))] + (np.arange(b) * k * (k + 1))[:, None]
        mats = np.bincount(draws.ravel(), minlength=b * k * (k + 1)).reshape(b, k, k + 1).astype(np.float64)
        tp = mats[:, np.arange(k), np.arange(k)]
        support, n_pred = mats.sum(axis=2), mats[:, :, :k].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.where(n_pred > 0, tp / n_pred, 0.0)
            rec = np.where(support > 0, tp / support, 0.0)
            f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
        acc[start:start + b] = tp.sum(axis=1) / n
        mf1[start:start + b] = f1.mean(axis=1)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    return {**head, **{name: dict(zip(("low", "high"), map(float, np.percentile(values, q))))
                       for name, values in (("accuracy", acc), ("macro_f1", mf1))}}


def bowker_symmetry(table: ArrayLike, shift_zeros: bool = True) -> dict[str, float | int]:
    """Bowker's test of symmetry on a k × k table, as statsmodels' ``SquareTable(table,
    shift_zeros).symmetry(method="bowker")`` (docs/scoring.md); ``shift_zeros=False`` gives the textbook statistic.
    With k < 2: χ² = 0, df = 0, p = 1."""
    table = np.asarray(table, dtype=float)
    k = table.shape[0]
    if k < 2:
        return {"statistic": 0.0, "df": 0, "p_value": 1.0}
    from statsmodels.stats.contingency_tables import SquareTable

    res = SquareTable(table, shift_zeros=shift_zeros).symmetry(method="bowker")
    return {"statistic": float(res.statistic), "df": int(res.df), "p_value": float(res.pvalue)}


def mcnemar_bowker(pred_a: Sequence[str], pred_b: Sequence[str], labels: Sequence[str] | None = None,
                   shift_zeros: bool = True) -> dict[str, object]:
    """McNemar–Bowker test between two systems' labels on the same items, with its k × k table of A's label (rows)
    against B's (columns); df over all ``labels`` (default: every label either system gives)."""
    _check_lengths(pred_a, pred_b)
    labels = sorted(set(pred_a) | set(pred_b)) if labels is None else list(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for a, b in zip(pred_a, pred_b):
        if a not in index or b not in index:
            raise ValueError(f"label {a if a not in index else b!r} is not one of {labels}")
        table[index[a], index[b]] += 1
    return {**bowker_symmetry(table, shift_zeros), "shift_zeros": bool(shift_zeros), "n": int(table.sum()),
            "n_disagree": int(table.sum() - np.trace(table)), "labels": labels, "table": table.tolist()}


def mcnemar(gold: Sequence[str], pred_a: Sequence[str], pred_b: Sequence[str]) -> dict[str, object]:
    """McNemar's test on correctness (2 × 2 Bowker table of right/wrong), no continuity correction."""
    _check_lengths(gold, pred_a, pred_b)
    right_a, right_b = (["right" if g == x else "wrong" for g, x in zip(gold, pred)] for pred in (pred_a, pred_b))
    return mcnemar_bowker(right_a, right_b, labels=["right", "wrong"])


def mean_std(values: Sequence[float], ddof: int = 1) -> MeanStd:
    """``{"mean", "std", "n"}``; ``std`` uses ``ddof`` (sample std by default) and is None when n <= ddof."""
    arr = np.asarray([float(v) for v in values], dtype=float)
    n = int(arr.size)
    if n == 0:
        return {"mean": None, "std": None, "n": 0}
    std = float(arr.std(ddof=ddof)) if n > ddof else None
    return {"mean": float(arr.mean()), "std": std, "n": n}


def _flatten(d: Mapping[str, object], prefix: str = "") -> dict[str, float]:
    flat: dict[str, float] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            flat[name] = float(value)
    return flat


def aggregate_folds(fold_scores: Sequence[Mapping[str, object]], ddof: int = 1) -> dict[str, MeanStd]:
    """Mean ± std of every numeric entry over folds (nested keys joined by dots; lists left out); a key missing from
    some folds is aggregated over those that have it (its ``n``)."""
    flats = [_flatten(s) for s in fold_scores]
    keys = sorted({k for f in flats for k in f})
    return {k: mean_std([f[k] for f in flats if k in f], ddof=ddof) for k in keys}
