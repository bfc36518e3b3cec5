"""What the model kinds share (the validation scores that pick checkpoints, a fit's :class:`Info`) and what the
scikit-learn kinds (:mod:`~medfc.experiments.models.tfidf`, :mod:`~medfc.experiments.models.gbm`,
:mod:`~medfc.experiments.models.frozen`) share: a model base, a fitted base, label and fold helpers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from medfc.common.metrics import classification_scores
from medfc.experiments.records import Example


def validation_scores(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """Accuracy and macro P/R/F1 over ``labels`` (flat floats, for checkpoint selection)."""
    scores = classification_scores(gold, pred, labels)
    return {k: float(scores[k]) for k in ("accuracy", "macro_precision", "macro_recall", "macro_f1")}


class WholeTexts:
    """The encode statistics of a model that reads every text whole: nothing is truncated."""

    def as_dict(self) -> dict[str, int]:
        return {"truncated": 0}


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


class Info:
    """What a fit did, for the info files (``as_dict``): a dataclass's fields."""

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


class FittedSklearn:
    """What the fitted scikit-learn kinds share: :meth:`probs` (filled by the kind's ``_probs``), validation scores."""

    labels: list[str]

    def probs(self, examples: Sequence[Example], desc: str = "predict") -> np.ndarray:
        """Class probabilities in the order of ``labels``, shape ``[len(examples), n_labels]``."""
        out = np.zeros((len(examples), len(self.labels)), dtype=np.float32)
        if not examples:
            return out
        return self._probs(out, examples, desc)

    def validation_scores(self, examples: Sequence[Example], desc: str) -> dict[str, float]:
        """The scores of the predictions on ``examples`` (validation examples only scored, not fit on)."""
        pred = [self.labels[i] for i in self.probs(examples, f"{desc}/validation").argmax(axis=1)]
        return validation_scores([ex.label for ex in examples], pred, self.labels)


class SklearnModel:
    """A scikit-learn kind's model: its libraries loaded and limited to the job's ``threads``, ``fit`` by the kind's
    ``fit_function`` (nothing written but an embeddings' store; ``checkpoint_dir``: an encoder's)."""

    library: ClassVar[str] = "sklearn.linear_model"  # loads the BLAS / OpenMP runtime the thread limit applies to
    # (options, labels, examples, validation, *, desc[, encoder, trim]) → the fitted model
    fit_function: ClassVar[Callable[..., Any]]
    make_encoder: ClassVar[Callable[[Any, int | None], Any] | None] = None  # (options, threads) → its frozen encoder

    def __init__(self, config: Any, threads: int | None = None) -> None:
        __import__(self.library)

        self.config = config
        if threads is not None:  # the BLAS / OpenMP libraries loaded so far on the job's threads
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=max(1, threads))
        self.encoder = type(self).make_encoder(config, threads) if type(self).make_encoder else None

    def fit(self, examples: Sequence[Example], labels: Sequence[str], validation: Sequence[Example] | None = None, *,
            checkpoint_dir: object = None, trim: str = "right", desc: str | None = None) -> Any:
        reads = {"encoder": self.encoder, "trim": trim} if type(self).make_encoder else {}  # a kind with an encoder
        return type(self).fit_function(self.config, labels, examples, validation, desc=desc or self.config.kind,
                                       **reads)
