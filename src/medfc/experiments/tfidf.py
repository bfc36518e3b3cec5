"""The cheap baseline: TF-IDF over word and character n-grams + logistic regression (scikit-learn).

It takes the same :class:`~medfc.experiments.classifier.Example` pairs as the fine-tuned encoders, so
every HealthFC system but ``joint`` and the CliniFact classifier run with it (a model alias that maps
to ``sklearn:tfidf``). The two texts of a pair get their own vectorizers (claim words and evidence
words weigh differently); each text is represented by word n-grams and character n-grams within word
boundaries, sub-linear tf, and the logistic regression is class-weighted (``class_weights``). The
regularisation ``C`` is chosen on the validation examples (macro-F1) from ``C_grid``; the final model is fit
on the training examples, or on training and validation examples together with ``refit_with_validation``;
without validation examples the first value is used. Seconds on a CPU.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion

from medfc.common.options import Options
from medfc.experiments.classifier import Example
from medfc.experiments.metrics import validation_scores
from medfc.experiments.sklearn_common import WholeTexts, add_probs, class_weight, label_indices

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class TfidfOptions(Options):
    """The ``experiments.tfidf`` section (+ ``model``, the alias target ``sklearn:tfidf``)."""

    model: str
    word_ngrams: tuple[int, int]
    char_ngrams: tuple[int, int]
    min_df: int
    max_word_features: int | None
    max_char_features: int | None
    C_grid: tuple[float, ...]
    class_weights: Literal["none", "balanced"]
    max_iter: int
    seed: int
    refit_with_validation: bool


def is_tfidf(model: str) -> bool:
    """Whether a model name (an alias target) is the TF-IDF baseline."""
    return model == "sklearn:tfidf"


def _vectorizer(options: TfidfOptions) -> FeatureUnion:
    common = {"sublinear_tf": True, "min_df": options.min_df, "lowercase": True}
    return FeatureUnion([
        ("word", TfidfVectorizer(analyzer="word", ngram_range=tuple(options.word_ngrams), max_features=options.max_word_features, **common)),
        ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(options.char_ngrams), max_features=options.max_char_features, **common)),
    ])


def _texts(examples: Sequence[Example]) -> tuple[list[str], list[str]]:
    a = [ex.text_a or "" for ex in examples]
    b = [" ".join(x for x in (ex.prefix_b, ex.text_b) if x) for ex in examples]
    return a, b


@dataclass
class TfidfInfo:
    """What the fit did: the chosen C, validation scores per C, feature counts, seconds."""

    C: float = 0.0
    validation: dict[str, dict[str, float]] = field(default_factory=dict)
    n_features: int = 0
    n_train: int = 0
    train_seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class FittedTfidf:
    """A fitted TF-IDF + logistic regression with the interface of a fitted encoder (``probs``)."""

    def __init__(self, options: TfidfOptions, labels: Sequence[str]):
        self.options = options
        self.labels = list(labels)
        self.vec_a = _vectorizer(options)
        self.vec_b = _vectorizer(options)
        self.pair = False
        self.clf: LogisticRegression | None = None
        self.result = TfidfInfo()
        self.encode_stats = WholeTexts()  # the info files of every model carry an "encode" entry

    def _fit_vectors(self, examples: Sequence[Example]) -> sp.csr_matrix:
        a, b = _texts(examples)
        self.pair = any(b)
        parts = [self.vec_a.fit_transform(a)] + ([self.vec_b.fit_transform(b)] if self.pair else [])
        return sp.hstack(parts).tocsr()

    def _vectors(self, examples: Sequence[Example]) -> sp.csr_matrix:
        a, b = _texts(examples)
        parts = [self.vec_a.transform(a)] + ([self.vec_b.transform(b)] if self.pair else [])
        return sp.hstack(parts).tocsr()

    def _classifier(self, C: float) -> LogisticRegression:
        return LogisticRegression(C=C, class_weight=class_weight(self.options.class_weights), max_iter=self.options.max_iter, random_state=self.options.seed)

    def probs(self, examples: Sequence[Example], desc: str = "predict") -> np.ndarray:
        """Class probabilities in the order of ``labels``, shape ``[len(examples), n_labels]``."""
        out = np.zeros((len(examples), len(self.labels)), dtype=np.float32)
        if not examples:
            return out
        return add_probs(out, self.clf.classes_, self.clf.predict_proba(self._vectors(examples)))


def fit_tfidf(options: TfidfOptions, labels: Sequence[str], train_examples: Sequence[Example],
              val_examples: Sequence[Example] | None = None, *, desc: str = "tfidf") -> FittedTfidf:
    """Fit on ``train_examples``; with ``val_examples`` pick ``C`` from ``options.C_grid`` by macro-F1."""
    start = time.perf_counter()
    fitted = FittedTfidf(options, labels)
    y = label_indices(fitted.labels, train_examples, desc)
    X = fitted._fit_vectors(train_examples)
    best_c, best_clf = options.C_grid[0], None
    if val_examples and len(options.C_grid) > 1:
        Xv = fitted._vectors(val_examples)
        gold = [ex.label for ex in val_examples]
        best = -1.0
        for C in options.C_grid:
            clf = fitted._classifier(C).fit(X, y)
            pred = [fitted.labels[int(i)] for i in clf.predict(Xv)]
            scores = validation_scores(gold, pred, fitted.labels)
            fitted.result.validation[f"{C:g}"] = scores
            if scores["macro_f1"] > best:
                best, best_c, best_clf = scores["macro_f1"], C, clf
    if val_examples and options.refit_with_validation:  # C is chosen: fit the vocabulary and the model on both
        X = fitted._fit_vectors(list(train_examples) + list(val_examples))
        y = label_indices(fitted.labels, list(train_examples) + list(val_examples), desc)
        best_clf = None
    # the grid's fit of the best C is the model unless the data changed since
    fitted.clf = best_clf if best_clf is not None else fitted._classifier(best_c).fit(X, y)
    fitted.result.C, fitted.result.n_features, fitted.result.n_train = float(best_c), int(X.shape[1]), len(y)
    fitted.result.train_seconds = time.perf_counter() - start
    log.info("%s: %d examples, %d features, C=%g (%.1f s)", desc, len(y), X.shape[1], best_c, fitted.result.train_seconds)
    return fitted
