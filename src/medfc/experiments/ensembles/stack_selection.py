"""A stacked ensemble (``method: stack``): what it combines (its best member, the ``average``, the ``stack`` or the
``recalibrated`` best member) chosen on the members' out-of-fold predictions by nested cross-validation and a
bootstrap margin over the best member (docs/experiments.md, "Cheap baselines, gradient boosting and ensembles").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medfc.common.report import SkipReport
from medfc.experiments.ensembles.ensemble import StackingOptions, aligned, has_probs, inner_assignment, runs_by_id

EPS = 1e-6  # probabilities are clipped to [EPS, 1] before their log
BEST = "best member"


def _macro_f1(gold: np.ndarray, pred: np.ndarray, n_labels: int) -> float:
    """Macro-F1 (0–1) of label indices over the labels that occur in gold or prediction (the scorers' macro-F1)."""
    return float(_resampled_macro_f1(np.ones((1, len(gold))), gold, pred, n_labels)[0])


def _resampled_macro_f1(weights: np.ndarray, gold: np.ndarray, pred: np.ndarray, n_labels: int) -> np.ndarray:
    """Macro-F1 of each row of ``weights`` (resamples × items: how often each item is drawn)."""
    f1 = np.zeros((len(weights), n_labels))
    present = np.zeros((len(weights), n_labels), dtype=bool)
    for c in range(n_labels):
        g, p = (gold == c).astype(float), (pred == c).astype(float)
        tp, both = weights @ (g * p), weights @ g + weights @ p
        present[:, c] = both > 0
        f1[:, c] = np.divide(2 * tp, both, out=np.zeros_like(tp), where=both > 0)
    return f1.sum(axis=1) / np.maximum(present.sum(axis=1), 1)


def margin(gold: np.ndarray, pred: np.ndarray, reference: np.ndarray, n_labels: int, level: float, resamples: int,
           seed: int) -> float:
    """The lower ``level`` quantile of macro-F1(pred) − macro-F1(reference) over paired bootstrap resamples of the items."""
    rng = np.random.default_rng(seed)
    n = len(gold)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(float)
    diff = _resampled_macro_f1(weights, gold, pred, n_labels) - _resampled_macro_f1(weights, gold, reference, n_labels)
    return float(np.quantile(diff, level))


def _parts(y: np.ndarray, seed: int, k: int) -> np.ndarray:
    """Stratified parts of the items (fewer when a label has fewer items; at least 2)."""
    ids = [str(i) for i in range(len(y))]
    counts = np.bincount(y)
    k = max(2, min(k, int(counts[counts > 0].min()) if counts.any() else 2, len(y)))
    part = inner_assignment(ids, [str(v) for v in y], k, seed)
    return np.array([part[i] for i in ids])


def _features(X: Mapping[str, np.ndarray], members: Sequence[str], kind: str) -> np.ndarray:
    """The meta-model's inputs: each member's probabilities (``probs``) or their logs (``log_probs``), side by side."""
    return np.hstack([np.log(np.clip(X[m], EPS, 1.0)) if kind == "log_probs" else X[m] for m in members])


@dataclass(eq=False)
class _Meta:
    """The meta-model: class-weighted multinomial logistic regression (lbfgs); ``constant``: the one class it saw."""

    C: float
    n_labels: int
    clf: Any = None
    constant: int | None = None

    def fit(self, F: np.ndarray, y: np.ndarray) -> _Meta:
        from sklearn.linear_model import LogisticRegression

        if len(set(y.tolist())) < 2:  # one class among these items: predict it
            self.constant = int(y[0])
            return self
        self.clf = LogisticRegression(C=self.C, class_weight="balanced", max_iter=2000).fit(F, y)
        return self

    def probs(self, F: np.ndarray) -> np.ndarray:
        out = np.zeros((len(F), self.n_labels))
        if self.constant is not None:
            out[:, self.constant] = 1.0
            return out
        out[:, self.clf.classes_.astype(int)] = self.clf.predict_proba(F)
        return out


@dataclass
class Fitted:
    """A candidate fit on some items: its members (in order), its meta-model (None: no learned weights), its kind."""

    kind: str
    members: list[str]
    meta: _Meta | None = None
    features: str = "log_probs"

    def record(self, probs: Mapping[str, Mapping[str, Any]], labels: Sequence[str]) -> tuple[dict[str, float], str]:
        """One item's probabilities (6 places) and label from its members' (member → ``label → p``)."""
        p = self.apply({m: np.array([[float(probs[m][lab]) for lab in labels]]) for m in self.members})[0]
        rounded = {lab: round(float(v), 6) for lab, v in zip(labels, p)}
        return rounded, max(labels, key=rounded.__getitem__)

    def state(self) -> tuple[dict[str, Any], Any]:
        """What a kept stack holds: its plain values (JSON) and its meta-model's fitted regression (None: none learned)."""
        meta = self.meta
        plain = {"kind": self.kind, "members": list(self.members), "features": self.features,
                 "meta": None if meta is None else {"C": meta.C, "n_labels": meta.n_labels, "constant": meta.constant}}
        return plain, None if meta is None else meta.clf

    @classmethod
    def from_state(cls, plain: Mapping[str, Any], clf: Any) -> Fitted:
        """The stack :meth:`state` described, its regression ``clf`` (None where it learned none)."""
        state = plain.get("meta")
        constant = None if state is None or state["constant"] is None else int(state["constant"])
        meta = None if state is None else _Meta(float(state["C"]), int(state["n_labels"]), clf, constant)
        return cls(str(plain["kind"]), [str(m) for m in plain["members"]], meta, str(plain["features"]))

    def apply(self, X: Mapping[str, np.ndarray]) -> np.ndarray:
        """The ensemble's probabilities (items × labels) from the members' (member → items × labels)."""
        if self.meta is not None:
            return self.meta.probs(_features(X, self.members, self.features))
        return np.mean([X[m] for m in self.members], axis=0)


def _meta_fit(X: Mapping[str, np.ndarray], y: np.ndarray, members: Sequence[str], options: StackingOptions, n_labels: int) -> _Meta:
    """The meta-model on ``members``, its C chosen by cross-validation (the smaller of equals), fit on all."""
    F = _features(X, members, options.features)
    C = options.C_grid[0]
    if len(options.C_grid) > 1:
        parts = _parts(y, options.seed, options.outer_folds)
        best = -1.0
        for c in options.C_grid:
            pred = np.zeros(len(y), dtype=np.int64)
            for k in sorted(set(parts.tolist())):
                held = parts == k
                pred[held] = _Meta(c, n_labels).fit(F[~held], y[~held]).probs(F[held]).argmax(axis=1)
            score = _macro_f1(y, pred, n_labels)
            if score > best or (score == best and c < C):
                best, C = score, c
    return _Meta(C, n_labels).fit(F, y)


def _fitter(kind: str, members: Sequence[str], options: StackingOptions, n_labels: int
            ) -> Callable[[Mapping[str, np.ndarray], np.ndarray], Fitted]:
    """How candidate ``kind`` (or the reference, :data:`BEST`) is fit on some items' out-of-fold predictions."""
    def fit(X: Mapping[str, np.ndarray], y: np.ndarray) -> Fitted:
        if kind == "average":
            return Fitted(kind, list(members))
        if kind == "stack":
            return Fitted(kind, list(members), _meta_fit(X, y, members, options, n_labels), options.features)
        # the member with the highest macro-F1 over these items (the first of equals)
        best = members[int(np.argmax([_macro_f1(y, X[m].argmax(axis=1), n_labels) for m in members]))]
        if kind == "recalibrated":
            return Fitted(kind, [best], _meta_fit(X, y, [best], options, n_labels), options.features)
        return Fitted(BEST, [best])
    return fit


def honest_predictions(fit: Callable[[Mapping[str, np.ndarray], np.ndarray], Fitted], X: Mapping[str, np.ndarray], y: np.ndarray,
                       parts: np.ndarray) -> np.ndarray:
    """Each item's predicted label from the candidate fit on the other parts only (nested cross-validation)."""
    pred = np.zeros(len(y), dtype=np.int64)
    for k in sorted(set(parts.tolist())):
        held = parts == k
        fitted = fit({m: v[~held] for m, v in X.items()}, y[~held])
        pred[held] = fitted.apply({m: v[held] for m, v in X.items()}).argmax(axis=1)
    return pred


@dataclass
class StackChoice:
    """What the out-of-fold predictions chose: the fitted candidate, each member's weight, every score."""

    fitted: Fitted
    weights: dict[str, float]
    scores: dict[str, Any]


def choose_stack(X: Mapping[str, np.ndarray], y: np.ndarray, members: Sequence[str], options: StackingOptions, n_labels: int) -> StackChoice:
    """The candidate beating the best member by the bootstrap margin on ``X`` and ``y``, else that member."""
    members = list(members)
    parts = _parts(y, options.seed, options.outer_folds)
    tried = [c for c in dict.fromkeys(options.candidates) if c == "recalibrated" or len(members) > 1]
    honest = {name: honest_predictions(_fitter(name, members, options, n_labels), X, y, parts) for name in (BEST, *tried)}
    estimates = {name: _macro_f1(y, pred, n_labels) for name, pred in honest.items()}
    level = options.alpha / max(1, len(tried))
    margins = {name: margin(y, honest[name], honest[BEST], n_labels, level, options.resamples, options.seed) for name in tried}
    passing = [name for name in tried if margins[name] > 0]
    chosen = max(passing, key=lambda name: (estimates[name], -tried.index(name))) if passing else BEST
    fitted = _fitter(chosen, members, options, n_labels)(X, y)
    scores: dict[str, Any] = {
        "members": {m: round(100 * _macro_f1(y, X[m].argmax(axis=1), n_labels), 2) for m in members},
        "estimates": {name: round(100 * v, 2) for name, v in estimates.items()},
        "margins": {name: round(100 * v, 2) for name, v in margins.items()},
        "level": round(level, 6), "outer_folds": int(parts.max()) + 1,
        "chosen": f"{fitted.members[0]} alone" if chosen == BEST else chosen,
    }
    return StackChoice(fitted, _weights(fitted, members, X), scores)


def _weights(fitted: Fitted, members: Sequence[str], X: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Each member's share of the ensemble's decision (a meta-model's: |coefficient| × spread)."""
    weights = dict.fromkeys(members, 0.0)
    if fitted.meta is not None and fitted.meta.clf is not None:
        F = _features(X, fitted.members, fitted.features)
        n = fitted.meta.n_labels
        scale = np.abs(fitted.meta.clf.coef_) * F.std(axis=0)
        per = {m: float(scale[:, i * n:(i + 1) * n].sum()) for i, m in enumerate(fitted.members)}
        total = sum(per.values()) or 1.0
        weights.update({m: round(v / total, 4) for m, v in per.items()})
    else:
        weights.update({m: round(1.0 / len(fitted.members), 4) for m in fitted.members})
    return weights


def stack_predictions(test_files: Sequence[str | os.PathLike], inner_files: Sequence[str | os.PathLike], members: Sequence[str],
                      options: StackingOptions, report: SkipReport) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The stacked ensemble of ``members``: their test predictions combined as chosen on their out-of-fold
    ``inner_files``; an item some member lacks is left out and counted. Returns the records and the info's entries."""
    if len(test_files) != len(members) or len(inner_files) != len(members):
        raise ValueError(f"{len(test_files)} prediction files and {len(inner_files)} inner-CV files for {len(members)} members")
    test = runs_by_id(test_files)
    choice, labels, n_inner = _fit(runs_by_id(inner_files), test, members, options, report)
    out = []
    for _, first, recs in aligned(test, members, report):
        probs, label = choice.fitted.record({m: r["probs"] for m, r in zip(members, recs)}, labels)
        out.append({**first, "probs": probs, "pred_label": label})
    report.count("records", len(out))
    report.count("inner_items", n_inner)
    info = {"method": "stack", "selected": choice.fitted.members, "weights": choice.weights, "inner_cv": choice.scores,
            "meta_model": _meta_info(choice.fitted, labels)}
    return out, info


def _fit(inner: Sequence[Mapping[str, Mapping[str, Any]]], test: Sequence[Mapping[str, Mapping[str, Any]]], members: Sequence[str],
         options: StackingOptions, report: SkipReport) -> tuple[StackChoice, list[str], int]:
    """The stack chosen on the members' out-of-fold ``inner`` records, its labels and its item count."""
    # the label order: the keys of the first member's first usable probabilities (every run writes all its labels)
    labels = next((list(r["probs"]) for run in (*test, *inner) for r in run.values() if has_probs(r)), None)
    if labels is None:
        raise ValueError("no member prediction has probabilities")
    ids = []
    for rid in sorted(inner[0]):
        recs = [run.get(rid) for run in inner]
        missing = [m for m, r in zip(members, recs) if not has_probs(r)]
        if missing:
            report.skip(rid, "inner_member_without_prediction", ", ".join(missing))
            continue
        if recs[0]["label"] not in labels:
            report.skip(rid, "inner_unknown_label", str(recs[0]["label"]))
            continue
        ids.append(rid)
    if not ids:
        raise ValueError(f"no training item has an out-of-fold prediction from every member ({', '.join(members)})")
    X = {m: np.array([[float(run[rid]["probs"][lab]) for lab in labels] for rid in ids]) for m, run in zip(members, inner)}
    y = np.array([labels.index(inner[0][rid]["label"]) for rid in ids])
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # hundreds of small fits: more threads only cost time
        return choose_stack(X, y, members, options, len(labels)), labels, len(ids)


def fit_stack(out_of_fold: Sequence[Sequence[str | os.PathLike]], members: Sequence[str], options: StackingOptions,
              report: SkipReport) -> StackChoice:
    """The stack of ``members`` chosen on ``out_of_fold`` (per member, its files), as the ensemble step does."""
    if len(out_of_fold) != len(members):
        raise ValueError(f"{len(out_of_fold)} members' prediction files for {len(members)} members")
    runs = [{rid: rec for run in runs_by_id(files) for rid, rec in run.items()} for files in out_of_fold]
    return _fit(runs, runs, members, options, report)[0]


def _meta_info(fitted: Fitted, labels: Sequence[str]) -> dict[str, Any] | None:
    if fitted.meta is None:
        return None
    meta = fitted.meta
    info: dict[str, Any] = {"kind": "logistic_regression", "C": meta.C, "class_weight": "balanced", "features": fitted.features,
                            "members": fitted.members}
    if meta.clf is not None:
        info["classes"] = [labels[int(c)] for c in meta.clf.classes_]
        info["coef"] = np.round(meta.clf.coef_, 4).tolist()
        info["intercept"] = np.round(meta.clf.intercept_, 4).tolist()
    else:
        info["constant"] = labels[meta.constant or 0]
    return info
