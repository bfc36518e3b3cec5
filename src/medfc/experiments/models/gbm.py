"""Model kind ``gbm`` (``sklearn:gbm``): gradient boosting over hand-written claim–abstract features
(:mod:`medfc.experiments.models.features`; docs/experiments.md, "Gradient boosting over features")."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from medfc.experiments.models.features import features, fit_idf
from medfc.experiments.models.embeddings import FrozenEncoder
from medfc.experiments.models.frozen import pair_vectors, system_side
from medfc.experiments.models.keeper import keep_state, read_state
from medfc.experiments.models.options import GbmOptions
from medfc.experiments.records import CardFields, Example, ModelCard
from medfc.experiments.models.sklearn_common import (FittedSklearn, Info, SklearnModel, WholeTexts, add_probs,
                                                     class_weight, label_indices)

log = logging.getLogger(__name__)


@dataclass
class GbmInfo(Info):
    n_features: int = 0
    n_embedding_features: int = 0
    n_train: int = 0
    refit_with_validation: bool = False
    train_seconds: float = 0.0
    validation: dict[str, float] = field(default_factory=dict)


class FittedGbm(FittedSklearn):
    """Fitted boosted trees with the interface of the other fitted models (``probs``)."""

    def __init__(self, options: GbmOptions, labels: Sequence[str], idf: dict[str, float], keys: list[str], models: list,
                 encoder: FrozenEncoder | None = None, side: Literal["head", "tail"] = "tail"):
        self.options, self.labels, self.idf, self.keys, self.models = options, list(labels), idf, keys, models
        self.encoder, self.side = encoder, side
        self.result = GbmInfo(n_features=len(keys))
        # the hand features read every abstract whole; the embeddings' store counts what it encoded and cut
        self.encode_stats = encoder.stats if encoder is not None else WholeTexts()

    def matrix(self, examples: Sequence[Example], desc: str = "gbm") -> np.ndarray:
        rows = [features(ex.text_a or "", ex.prefix_b or "", ex.text_b or "", self.idf) for ex in examples]
        X = np.array([[r[k] for k in self.keys] for r in rows], dtype=np.float64).reshape(len(rows), len(self.keys))
        if self.encoder is None or not examples:
            return X
        # then the embedding_features of each example's (claim, ``title. abstract``) embeddings, in the order named
        o = self.options
        u, v = pair_vectors(self.encoder, examples, o.embedding_claim_length, o.embedding_evidence_length, self.side, desc)
        blocks = {"cos": lambda: (u * v).sum(axis=1, keepdims=True), "difference": lambda: np.abs(u - v), "product": lambda: u * v}
        return np.hstack([X, np.hstack([blocks[name]() for name in o.embedding_features]).astype(np.float64)])

    def _probs(self, out: np.ndarray, examples: Sequence[Example], desc: str) -> np.ndarray:
        X = self.matrix(examples, desc)
        for m in self.models:
            add_probs(out, m.classes_, m.predict_proba(X), 1.0 / len(self.models))
        return out


def _fit(options: GbmOptions, X: np.ndarray, y: np.ndarray) -> list:
    from sklearn.ensemble import HistGradientBoostingClassifier  # here, not at the top: an encoder's job never loads scikit-learn

    return [HistGradientBoostingClassifier(learning_rate=options.learning_rate, max_iter=options.max_iter, max_leaf_nodes=options.max_leaf_nodes,
                                           min_samples_leaf=options.min_samples_leaf, l2_regularization=options.l2_regularization,
                                           class_weight=class_weight(options.class_weights), random_state=seed).fit(X, y) for seed in options.seeds]


def embedding_encoder(options: GbmOptions, threads: int | None = None) -> FrozenEncoder | None:
    """The frozen encoder of ``embedding_model`` (None without one), on ``threads``."""
    if not options.embedding_model:
        return None
    return FrozenEncoder(options.embedding_model, cache_dir=options.cache_dir, batch_size=options.embedding_batch_size, device=options.device,
                         threads=threads, progress=options.progress,
                         lengths_key="experiments.gbm.embedding_claim_length / embedding_evidence_length, or the alias's models.options")


def fit_gbm(options: GbmOptions, labels: Sequence[str], train_examples: Sequence[Example],
            val_examples: Sequence[Example] | None = None, *, encoder: FrozenEncoder | None = None, trim: str = "right",
            desc: str = "gbm") -> FittedGbm:
    """Fit on ``train_examples`` (+ validation with ``refit_with_validation``, else only scored)."""
    start = time.perf_counter()
    if encoder is None:
        encoder = embedding_encoder(options)
    fit_on = list(train_examples) + (list(val_examples or []) if options.refit_with_validation else [])
    y = label_indices(labels, fit_on, desc)
    idf = fit_idf(ex.text_b or "" for ex in fit_on)
    keys = list(features("", "", "", idf))
    fitted = FittedGbm(options, labels, idf, keys, [], encoder, system_side(trim))
    X = fitted.matrix(fit_on, desc)
    fitted.models = _fit(options, X, y)
    r = fitted.result
    r.n_features, r.n_embedding_features = int(X.shape[1]), int(X.shape[1]) - len(keys)
    if val_examples and not options.refit_with_validation:
        r.validation = fitted.validation_scores(val_examples, desc)
    r.n_train, r.refit_with_validation = len(y), options.refit_with_validation
    r.train_seconds = time.perf_counter() - start
    log.info("%s: %d examples, %d features (%d from embeddings), %d seeds (%.1f s)", desc, len(y), r.n_features, r.n_embedding_features,
             len(options.seeds), r.train_seconds)
    return fitted


class GbmModel(SklearnModel):
    """Kind ``gbm``: :func:`fit_gbm` (``trim``: which end of an abstract the ``embedding_model``'s vectors keep)."""

    library = "sklearn.ensemble"
    fit_function = fit_gbm
    make_encoder = embedding_encoder


def keep_gbm(fitted: FittedGbm, directory: Path) -> CardFields:
    """Kept: options, labels, idf table, feature keys and the embeddings' cut side (JSON), the trees (skops)."""
    return keep_state(directory, {"options": fitted.options.to_mapping(), "labels": fitted.labels, "idf": fitted.idf,
                                  "keys": fitted.keys, "side": fitted.side}, {"models": fitted.models})


def load_gbm(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedGbm:
    """The fitted GBM of a kept directory; an ``embedding_model`` embeds every text again on ``device`` (no store)."""
    options, state, estimators = read_state(directory, GbmOptions)
    options = options.replace(cache_dir=None, device=device, progress=False, embedding_batch_size=batch_size or options.embedding_batch_size)
    return FittedGbm(options, state["labels"], state["idf"], state["keys"], list(estimators["models"]), embedding_encoder(options), state["side"])
