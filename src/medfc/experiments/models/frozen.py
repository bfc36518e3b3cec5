"""Model kind ``frozen`` (``frozen:<encoder>``): a frozen sentence encoder's embeddings into logistic regression
(docs/experiments.md, "Frozen-encoder features")."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from medfc.experiments.models.embeddings import FrozenEncoder
from medfc.experiments.models.keeper import keep_state, read_state
from medfc.experiments.models.options import FrozenOptions
from medfc.experiments.records import CardFields, Example, ModelCard
from medfc.experiments.models.sklearn_common import (FittedSklearn, Info, SklearnModel, add_probs, class_weight,
                                                     label_indices, stratified_folds, validation_scores)

if TYPE_CHECKING:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

log = logging.getLogger(__name__)


def evidence_text(ex: Example) -> str:
    """The second text as one string: ``prefix_b. text_b`` (CliniFact's title and abstract), or ``text_b``."""
    return f"{ex.prefix_b}. {ex.text_b or ''}" if ex.prefix_b else (ex.text_b or "")


def system_side(trim: str) -> Literal["head", "tail"]:
    """The end of a second text an embedding keeps when the system's encoder trims ``trim`` (``left``: the ``tail``)."""
    return "tail" if trim == "left" else "head"


def pair_vectors(encoder: FrozenEncoder, examples: Sequence[Example], claim_length: int, evidence_length: int | None,
                 side: Literal["head", "tail"], desc: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(u, v): the claims' and the second texts' vectors (v None without an ``evidence_length``)."""
    u = encoder.embed([ex.text_a or "" for ex in examples], claim_length, "head", desc=f"{desc}/claims")
    if evidence_length is None:
        return u, None
    return u, encoder.embed([evidence_text(ex) for ex in examples], evidence_length, side, desc=f"{desc}/evidence")


@dataclass
class FrozenInfo(Info):
    """What the fit did: the chosen C, the CV macro-F1 of every C, sizes, the cut side, seconds."""

    C: float = 0.0
    cv: dict[str, float] = field(default_factory=dict)
    cv_folds: int = 0
    n_features: int = 0
    n_train: int = 0
    pairs: bool = False
    evidence_side: str = ""
    validation: dict[str, float] = field(default_factory=dict)
    train_seconds: float = 0.0


class FittedFrozen(FittedSklearn):
    """The fitted scaler and logistic regression over a frozen encoder's features (``probs`` as every kind)."""

    def __init__(self, options: FrozenOptions, encoder: FrozenEncoder, labels: Sequence[str], pairs: bool, side: Literal["head", "tail"]):
        self.options, self.encoder, self.labels, self.pairs, self.side = options, encoder, list(labels), pairs, side
        self.scaler: StandardScaler | None = None
        self.clf: LogisticRegression | None = None
        self.result = FrozenInfo(pairs=pairs, evidence_side=side if pairs else "")
        self.encode_stats = encoder.stats  # the info files' "encode" entry: texts stored, encoded, cut

    def matrix(self, examples: Sequence[Example], desc: str = "frozen") -> np.ndarray:
        """[u, v, |u − v|, u · v] per row, or u alone without second texts."""
        o = self.options
        evidence_length = o.evidence_length if self.pairs else None
        u, v = pair_vectors(self.encoder, examples, o.claim_length, evidence_length, self.side, desc)
        return u if v is None else np.hstack([u, v, np.abs(u - v), u * v]).astype(np.float32)

    def _probs(self, out: np.ndarray, examples: Sequence[Example], desc: str) -> np.ndarray:
        X = self.scaler.transform(self.matrix(examples, desc))
        return add_probs(out, self.clf.classes_, self.clf.predict_proba(X))


def _fit_lr(options: FrozenOptions, C: float, X: np.ndarray, y: np.ndarray) -> tuple[StandardScaler, LogisticRegression]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X)
    clf = LogisticRegression(C=C, class_weight=class_weight(options.class_weights), max_iter=options.max_iter, random_state=options.seed)
    return scaler, clf.fit(scaler.transform(X), y)


def choose_C(options: FrozenOptions, labels: Sequence[str], X: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, float], int]:
    """(best C by mean CV macro-F1, each C's score, folds used); the first C when nothing can be scored."""
    folds = stratified_folds(y, options.cv_folds, options.seed) if len(options.C_grid) > 1 else []
    if not folds:
        return float(options.C_grid[0]), {}, 0
    scores: dict[str, float] = {}
    for C in options.C_grid:
        runs = []
        for tr, ev in folds:
            scaler, clf = _fit_lr(options, C, X[tr], y[tr])
            pred = clf.predict(scaler.transform(X[ev]))
            runs.append(validation_scores([labels[i] for i in y[ev]], [labels[int(i)] for i in pred], labels)["macro_f1"])
        scores[f"{C:g}"] = float(np.mean(runs))
    best = max(range(len(options.C_grid)), key=lambda i: (scores[f"{options.C_grid[i]:g}"], -i))
    return float(options.C_grid[best]), scores, len(folds)


def fit_frozen(options: FrozenOptions, labels: Sequence[str], train_examples: Sequence[Example],
               val_examples: Sequence[Example] | None = None, *, encoder: FrozenEncoder, trim: str = "right",
               desc: str = "frozen") -> FittedFrozen:
    """Fit on ``train_examples`` (+ validation with ``refit_with_validation``, else only scored)."""
    start = time.perf_counter()
    final = list(train_examples) + (list(val_examples or []) if options.refit_with_validation else [])
    y = label_indices(labels, final, desc)
    side: Literal["head", "tail"] = system_side(trim) if options.truncation == "system" else options.truncation
    fitted = FittedFrozen(options, encoder, labels, any(ex.text_b is not None or ex.prefix_b for ex in final), side)
    X = fitted.matrix(final, desc)
    C, scores, n_folds = choose_C(options, fitted.labels, X, y)
    fitted.scaler, fitted.clf = _fit_lr(options, C, X, y)
    r = fitted.result
    r.C, r.cv, r.cv_folds, r.n_features, r.n_train = C, scores, n_folds, int(X.shape[1]), len(final)
    if val_examples and not options.refit_with_validation:
        r.validation = fitted.validation_scores(val_examples, desc)
    r.train_seconds = time.perf_counter() - start
    log.info("%s: %d examples, %d features, C=%g (%.1f s; %s)", desc, len(final), X.shape[1], C, r.train_seconds, encoder.stats.as_dict())
    return fitted


def frozen_encoder(options: FrozenOptions, threads: int | None) -> FrozenEncoder:
    """The job's encoder (loaded only for texts not stored), on ``threads``."""
    return FrozenEncoder(options.encoder, cache_dir=options.cache_dir, batch_size=options.batch_size,
                         device=options.device, threads=threads, progress=options.progress)


class FrozenModel(SklearnModel):
    """Kind ``frozen``: the job's encoder and :func:`fit_frozen`'s regressions."""

    fit_function = fit_frozen
    make_encoder = frozen_encoder


def keep_frozen(fitted: FittedFrozen, directory: Path) -> CardFields:
    """Kept: options, labels, whether it reads pairs and the evidence's cut side (JSON), scaler and regression (skops)."""
    return keep_state(directory, {"options": fitted.options.to_mapping(), "labels": fitted.labels, "pairs": fitted.pairs,
                                  "side": fitted.side}, {"scaler": fitted.scaler, "clf": fitted.clf})


def load_frozen(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedFrozen:
    """The fitted frozen-encoder model of a kept directory, embedding every text again on ``device`` (no store)."""
    options, state, estimators = read_state(directory, FrozenOptions)
    encoder = FrozenEncoder(options.encoder, cache_dir=None, batch_size=batch_size or options.batch_size, device=device, progress=False)
    fitted = FittedFrozen(options, encoder, state["labels"], state["pairs"], state["side"])
    fitted.scaler, fitted.clf = estimators["scaler"], estimators["clf"]
    return fitted
