"""What the scikit-learn baselines (:mod:`~medfc.experiments.models.tfidf`, :mod:`~medfc.experiments.models.gbm`) share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from medfc.experiments.examples import Example


class WholeTexts:
    """The encode statistics of a model that reads every text whole: nothing is truncated."""

    def as_dict(self) -> dict[str, int]:
        return {"truncated": 0}


def limit_threads(threads: int | None) -> None:
    """Limit the BLAS/OpenMP libraries loaded so far to the job's ``threads`` (None: leave them)."""
    if threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=max(1, threads))


def class_weight(option: Literal["none", "balanced"]) -> str | None:
    """scikit-learn's ``class_weight`` for the config's ``class_weights``."""
    return "balanced" if option == "balanced" else None


def label_indices(labels: Sequence[str], examples: Sequence[Example], desc: str) -> np.ndarray:
    """The examples' gold labels as indices into ``labels``; a single class cannot train a classifier."""
    index = {lab: i for i, lab in enumerate(labels)}
    y = np.array([index[ex.label] for ex in examples], dtype=np.int64)
    if len(set(y.tolist())) < 2:
        raise ValueError(f"{desc}: the training examples hold a single class; a classifier needs two")
    return y


def stratified_folds(y: np.ndarray, cv_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled stratified folds of ``y``, at most ``cv_folds`` (none when the rarest class allows < 2)."""
    from sklearn.model_selection import StratifiedKFold

    counts = np.bincount(y)
    n = min(cv_folds, int(counts[counts > 0].min()))
    if n < 2:
        return []
    return list(StratifiedKFold(n_splits=n, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def add_probs(out: np.ndarray, classes: np.ndarray, probs: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """Add ``probs`` (columns in ``classes`` order) into ``out`` (all labels' order), times ``weight``."""
    for j, c in enumerate(classes):
        out[:, int(c)] += weight * probs[:, j]
    return out
