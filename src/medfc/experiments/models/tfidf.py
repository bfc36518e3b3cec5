"""Model kind ``tfidf`` (``sklearn:tfidf``), the cheap baseline: TF-IDF + logistic regression over the same example
pairs as the encoders, its candidates chosen as docs/experiments.md says ("TF-IDF + logistic regression")."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import scipy.sparse as sp

from medfc.experiments.models.keeper import keep_state, read_state
from medfc.experiments.models.options import TfidfOptions
from medfc.experiments.records import CardFields, Example, ModelCard
from medfc.experiments.models.sklearn_common import (FittedSklearn, Info, SklearnModel, WholeTexts, add_probs,
                                                     class_weight, label_indices, stratified_folds, validation_scores)

if TYPE_CHECKING:  # scikit-learn is imported where it is used: an encoder's job never loads it (about 3 s of CPU per job)
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

log = logging.getLogger(__name__)

SEP = " [SEP] "


@dataclass(frozen=True)
class Variant:
    """One feature space: how the texts of a pair are vectorized."""

    space: Literal["joint", "separate"]
    analyzer: Literal["word", "word+char"]

    def key(self, C: float) -> str:
        return f"{self.space}/{self.analyzer}/C={C:g}"


def _texts(examples: Sequence[Example]) -> tuple[list[str], list[str]]:
    a = [ex.text_a or "" for ex in examples]
    b = [" ".join(x for x in (ex.prefix_b, ex.text_b) if x) for ex in examples]
    return a, b


class Space:
    """The vectorizers of one :class:`Variant`, fitted on some examples."""

    def __init__(self, options: TfidfOptions, variant: Variant):
        self.options = options
        self.variant = variant
        self.columns: list[list[TfidfVectorizer]] = []

    def _vectorizers(self) -> list[TfidfVectorizer]:
        from sklearn.feature_extraction.text import TfidfVectorizer

        o = self.options
        common = {"sublinear_tf": True, "min_df": o.min_df, "lowercase": True}
        out = [TfidfVectorizer(analyzer="word", ngram_range=tuple(o.word_ngrams), max_features=o.max_word_features, **common)]
        if self.variant.analyzer == "word+char":
            out.append(TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(o.char_ngrams), max_features=o.max_char_features, **common))
        return out

    def _column_texts(self, examples: Sequence[Example], n_columns: int) -> list[list[str]]:
        a, b = _texts(examples)
        if self.variant.space == "joint":
            return [[x + SEP + y if y else x for x, y in zip(a, b)]]
        return [a, b][:n_columns]

    def fit_transform(self, examples: Sequence[Example]) -> sp.csr_matrix:
        a, b = _texts(examples)
        n_columns = 2 if self.variant.space == "separate" and any(b) else 1
        self.columns = [self._vectorizers() for _ in range(n_columns)]
        texts = self._column_texts(examples, n_columns)
        return sp.hstack([v.fit_transform(t) for vecs, t in zip(self.columns, texts) for v in vecs]).tocsr()

    def transform(self, examples: Sequence[Example]) -> sp.csr_matrix:
        texts = self._column_texts(examples, len(self.columns))
        return sp.hstack([v.transform(t) for vecs, t in zip(self.columns, texts) for v in vecs]).tocsr()


def variants(options: TfidfOptions, examples: Sequence[Example]) -> list[Variant]:
    """The candidate feature spaces, in config order; ``separate`` only where a pair has a second text."""
    spaces = list(options.spaces)
    if not any(_texts(examples)[1]):  # single texts: joint and separate are the same space
        spaces = spaces[:1]
    return [Variant(s, a) for s, a in product(spaces, options.analyzers)]


@dataclass
class TfidfInfo(Info):
    """What the fit did: the chosen variant and C, the selection scores per candidate, sizes, seconds."""

    C: float = 0.0
    variant: str = ""
    selection: str = ""
    cv_folds: int = 0
    validation: dict[str, dict[str, float]] = field(default_factory=dict)
    n_features: int = 0
    n_train: int = 0
    train_seconds: float = 0.0


class FittedTfidf(FittedSklearn):
    """A fitted TF-IDF + logistic regression with the interface of a fitted encoder (``probs``)."""

    def __init__(self, options: TfidfOptions, labels: Sequence[str]):
        self.options = options
        self.labels = list(labels)
        self.space: Space | None = None
        self.clf: LogisticRegression | None = None
        self.result = TfidfInfo()
        self.encode_stats = WholeTexts()  # the info files of every model carry an "encode" entry

    def _probs(self, out: np.ndarray, examples: Sequence[Example], desc: str) -> np.ndarray:
        return add_probs(out, self.clf.classes_, self.clf.predict_proba(self.space.transform(examples)))


def _classifier(options: TfidfOptions, C: float) -> LogisticRegression:
    from sklearn.linear_model import LogisticRegression

    # newton-cg: the same optimum as lbfgs, in 2-5x less time on these sparse problems (5-7 Newton steps
    # against 24-64 lbfgs iterations on the CliniFact release's 1,260 pairs)
    return LogisticRegression(C=C, solver="newton-cg", class_weight=class_weight(options.class_weights), max_iter=options.max_iter, random_state=options.seed)


def _score_candidates(options: TfidfOptions, labels: Sequence[str], cands: list[Variant], fit_ex: Sequence[Example],
                      eval_ex: Sequence[Example], scores: dict[str, list[dict[str, float]]], desc: str) -> None:
    """Fit every candidate on ``fit_ex`` and append its scores on ``eval_ex`` to ``scores[key]``."""
    y = label_indices(labels, fit_ex, desc)
    gold = [ex.label for ex in eval_ex]
    for variant in cands:
        space = Space(options, variant)
        X, Xe = space.fit_transform(fit_ex), space.transform(eval_ex)
        for C in options.C_grid:
            clf = _classifier(options, C).fit(X, y)
            pred = [labels[int(i)] for i in clf.predict(Xe)]
            scores.setdefault(variant.key(C), []).append(validation_scores(gold, pred, labels))


def fit_tfidf(options: TfidfOptions, labels: Sequence[str], train_examples: Sequence[Example],
              val_examples: Sequence[Example] | None = None, *, desc: str = "tfidf") -> FittedTfidf:
    """Fit on ``train_examples`` (+ ``val_examples`` with ``refit_with_validation``), choosing as ``options.selection``
    says; every text is read whole."""
    start = time.perf_counter()
    fitted = FittedTfidf(options, labels)
    labels = fitted.labels
    val_examples = list(val_examples or [])
    final = list(train_examples) + (val_examples if options.refit_with_validation else [])
    y = label_indices(labels, final, desc)  # a single class stops here, before any selection
    cands = variants(options, final)
    scores: dict[str, list[dict[str, float]]] = {}
    if len(cands) * len(options.C_grid) == 1:
        pass  # one candidate: nothing to choose
    elif options.selection == "cv":
        splits = stratified_folds(y, options.cv_folds, options.seed)
        for k, (tr, ev) in enumerate(splits):
            _score_candidates(options, labels, cands, [final[i] for i in tr], [final[i] for i in ev], scores, f"{desc}/cv{k}")
        fitted.result.cv_folds = len(splits)
    elif val_examples:
        _score_candidates(options, labels, cands, list(train_examples), val_examples, scores, f"{desc}/validation")
    by_key = {v.key(C): (v, C) for v in cands for C in options.C_grid}
    keys = list(by_key)
    best = keys[0]
    if scores:
        mean = {k: {m: float(np.mean([run[m] for run in scores[k]])) for m in scores[k][0]} for k in keys}
        fitted.result.validation = mean
        best = max(keys, key=lambda k: (mean[k]["macro_f1"], -keys.index(k)))
    variant, C = by_key[best]
    fitted.space = Space(options, variant)
    X = fitted.space.fit_transform(final)
    fitted.clf = _classifier(options, C).fit(X, y)
    fitted.result.C, fitted.result.variant, fitted.result.selection = float(C), f"{variant.space}/{variant.analyzer}", options.selection
    fitted.result.n_features, fitted.result.n_train = int(X.shape[1]), len(final)
    fitted.result.train_seconds = time.perf_counter() - start
    log.info("%s: %d examples, %d features, %s (%.1f s)", desc, len(final), X.shape[1], best, fitted.result.train_seconds)
    return fitted


class TfidfModel(SklearnModel):
    """Kind ``tfidf``: :func:`fit_tfidf`."""

    fit_function = fit_tfidf


def keep_tfidf(fitted: FittedTfidf, directory: Path) -> CardFields:
    """Kept: options, labels, variant and each vectorizer's terms (JSON), idf weights and classifier (skops)."""
    assert fitted.space is not None and fitted.clf is not None
    variant = fitted.space.variant
    columns = fitted.space.columns
    return keep_state(directory, {"options": fitted.options.to_mapping(), "labels": fitted.labels,
                                  "variant": {"space": variant.space, "analyzer": variant.analyzer},
                                  # each vectorizer's terms in the order of their columns
                                  "terms": [[sorted(v.vocabulary_, key=v.vocabulary_.get) for v in vectorizers]
                                            for vectorizers in columns]},
                      {"clf": fitted.clf, "idf": [[v.idf_ for v in vectorizers] for vectorizers in columns]})


def load_tfidf(directory: Path, card: ModelCard, device: str, batch_size: int | None) -> FittedTfidf:
    """The fitted TF-IDF model of a kept directory (on the CPU), its vectorizers rebuilt with the kept terms and idf."""
    options, state, estimators = read_state(directory, TfidfOptions)
    fitted = FittedTfidf(options, state["labels"])
    fitted.space = Space(options, Variant(**state["variant"]))
    for terms, idfs in zip(state["terms"], estimators["idf"], strict=True):
        vectorizers = fitted.space._vectorizers()
        if not len(vectorizers) == len(terms) == len(idfs):
            raise ValueError(f"{directory}: {len(terms)} kept vectorizers for a column of the {fitted.space.variant} space, not {len(vectorizers)}")
        for vectorizer, kept_terms, idf in zip(vectorizers, terms, idfs):
            vectorizer.vocabulary_ = {term: column for column, term in enumerate(kept_terms)}
            vectorizer.fixed_vocabulary_ = False
            vectorizer.idf_ = np.asarray(idf, dtype=np.float64)
        fitted.space.columns.append(vectorizers)
    fitted.clf = estimators["clf"]
    return fitted
