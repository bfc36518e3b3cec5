"""Model kind ``gbm``: gradient boosting over hand-written claim–abstract features (CliniFact; a model alias mapping to
``sklearn:gbm``). The features are :mod:`medfc.experiments.clinifact_features`; the classifier is
scikit-learn's HistGradientBoostingClassifier, its probabilities averaged over ``seeds``. With
``refit_with_validation`` the final models are fit on the training and validation examples together
(the hyperparameters are fixed, so the validation split has nothing left to choose). Seconds on a CPU.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medfc.experiments.clinifact_features import features, fit_idf
from medfc.experiments.examples import Example
from medfc.experiments.options import GbmOptions
from medfc.experiments.sklearn_common import WholeTexts, add_probs, class_weight, label_indices, limit_threads

log = logging.getLogger(__name__)


@dataclass
class GbmInfo:
    n_features: int = 0
    n_train: int = 0
    refit_with_validation: bool = False
    train_seconds: float = 0.0
    validation: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class FittedGbm:
    """Fitted boosted trees with the interface of the other fitted models (``probs``)."""

    def __init__(self, options: GbmOptions, labels: Sequence[str], idf: dict[str, float], keys: list[str], models: list):
        self.options, self.labels, self.idf, self.keys, self.models = options, list(labels), idf, keys, models
        self.result = GbmInfo(n_features=len(keys))
        self.encode_stats = WholeTexts()  # the features read every abstract whole

    def matrix(self, examples: Sequence[Example]) -> np.ndarray:
        rows = [features(ex.text_a or "", ex.prefix_b or "", ex.text_b or "", self.idf) for ex in examples]
        return np.array([[r[k] for k in self.keys] for r in rows], dtype=np.float64).reshape(len(rows), len(self.keys))

    def probs(self, examples: Sequence[Example], desc: str = "predict") -> np.ndarray:
        out = np.zeros((len(examples), len(self.labels)), dtype=np.float32)
        if not examples:
            return out
        X = self.matrix(examples)
        for m in self.models:
            add_probs(out, m.classes_, m.predict_proba(X), 1.0 / len(self.models))
        return out


def _fit(options: GbmOptions, X: np.ndarray, y: np.ndarray) -> list:
    from sklearn.ensemble import HistGradientBoostingClassifier  # here, not at the top: an encoder's job never loads scikit-learn

    return [HistGradientBoostingClassifier(learning_rate=options.learning_rate, max_iter=options.max_iter, max_leaf_nodes=options.max_leaf_nodes,
                                           min_samples_leaf=options.min_samples_leaf, l2_regularization=options.l2_regularization,
                                           class_weight=class_weight(options.class_weights), random_state=seed).fit(X, y) for seed in options.seeds]


def fit_gbm(options: GbmOptions, labels: Sequence[str], train_examples: Sequence[Example],
            val_examples: Sequence[Example] | None = None, *, desc: str = "gbm") -> FittedGbm:
    """Fit on ``train_examples`` (and ``val_examples`` too with ``refit_with_validation``; otherwise they
    are only scored, for the info file)."""
    from medfc.experiments.metrics import validation_scores

    start = time.perf_counter()
    fit_on = list(train_examples) + (list(val_examples or []) if options.refit_with_validation else [])
    y = label_indices(labels, fit_on, desc)
    idf = fit_idf(ex.text_b or "" for ex in fit_on)
    keys = list(features("", "", "", idf))
    fitted = FittedGbm(options, labels, idf, keys, [])
    fitted.models = _fit(options, fitted.matrix(fit_on), y)
    if val_examples and not options.refit_with_validation:
        pred = [fitted.labels[i] for i in fitted.probs(val_examples).argmax(axis=1)]
        fitted.result.validation = validation_scores([ex.label for ex in val_examples], pred, fitted.labels)
    fitted.result.n_train, fitted.result.refit_with_validation = len(y), options.refit_with_validation
    fitted.result.train_seconds = time.perf_counter() - start
    log.info("%s: %d examples, %d features, %d seeds (%.1f s)", desc, len(y), len(keys), len(options.seeds), fitted.result.train_seconds)
    return fitted


class GbmModel:
    """Kind ``gbm`` behind the one model interface (:mod:`medfc.experiments.models`): :func:`fit_gbm`, the
    trees' OpenMP threads on the job's ``threads``."""

    def __init__(self, config: GbmOptions, threads: int | None = None) -> None:
        import sklearn.ensemble  # noqa: F401 (loads the OpenMP runtime the thread limit applies to)

        self.config = config
        limit_threads(threads)

    def fit(self, examples: Sequence[Example], labels: Sequence[str], validation: Sequence[Example] | None = None, *,
            checkpoint_dir: object = None, trim: str = "right", desc: str = "gbm") -> FittedGbm:
        """The features read every abstract whole and nothing is written (``checkpoint_dir``, ``trim``: an encoder's)."""
        return fit_gbm(self.config, labels, examples, validation, desc=desc)
