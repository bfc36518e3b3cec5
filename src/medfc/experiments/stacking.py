"""Learned stacking of ensembles: each member's out-of-fold predictions on a run's training split from
inner cross-validation, and the meta-model fit on them.

Inner cross-validation (rules ``healthfc_inner_cv`` and ``clinifact_inner_cv``, one job per member and
run, shared by every stacked ensemble with that member)
    A run's training split — HealthFC: the claims of every fold but the run's test fold; CliniFact: train
    + validation — is cut into ``inner_folds`` parts, stratified by gold label (:func:`inner_assignment`).
    The member is trained ``inner_folds`` times with its own recipe, each time on all parts but one
    (HealthFC: with the run's ``val_fraction`` held out of them; CliniFact: the train items of those parts
    as train, their validation items as validation), and predicts the part left out. So every training
    item gets one prediction from a model that never saw it; the test split is never read.

The meta-model (:func:`stack_predictions`, the ``ensemble`` step with ``method: stack``)
    A class-weighted multinomial logistic regression on the members' log-probabilities, fit on the
    out-of-fold predictions and applied to the members' test predictions. On log-probabilities it can
    reproduce a single member exactly and weigh members against each other (a weighted geometric mean with
    class biases). Members enter one at a time (forward selection) while they raise the meta-model's
    cross-validated macro-F1 over the out-of-fold predictions by more than ``min_gain``; a member that
    adds nothing keeps weight 0. When no meta-model beats the best member's own out-of-fold macro-F1, the
    ensemble is that member's predictions unchanged. ``info.json`` records every member's weight (its share
    of the meta-model's absolute coefficients times its features' spread), the inner-CV scores of each member, of the plain average
    and of every combination tried.

Only :mod:`medfc.experiments.healthfc` / :mod:`medfc.experiments.clinifact` pieces and scikit-learn's
logistic regression are used; the meta-model is deterministic (lbfgs), so a rerun writes the same bytes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medfc.common.report import SkipReport
from medfc.experiments.ensemble import CliniFactInnerOptions, HealthFCInnerOptions, StackingOptions, aligned, has_probs, runs_by_id
from medfc.experiments.metrics import validation_scores

log = logging.getLogger(__name__)

EPS = 1e-6  # probabilities are clipped to [EPS, 1] before their log


# ----------------------------------------------------------------------------------- inner folds


def inner_assignment(ids: Sequence[str], labels: Sequence[str], k: int, seed: int) -> dict[str, int]:
    """id → inner fold (0..k-1), stratified: each label's items, in a seeded order, dealt round-robin, the
    count carried from one label to the next (so the parts' sizes differ by at most one). Depends on the
    ids and labels only, not on their order."""
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} ids for {len(labels)} labels")
    rng = np.random.default_rng(seed)
    by_label: dict[str, list[str]] = {}
    for i, lab in sorted(zip(ids, labels)):
        by_label.setdefault(str(lab), []).append(i)
    out: dict[str, int] = {}
    dealt = 0
    for lab in sorted(by_label):
        group = by_label[lab]
        for j in rng.permutation(len(group)):
            out[group[int(j)]] = dealt % k
            dealt += 1
    return out


def healthfc_inner_cv(dataset: str | os.PathLike, folds: str | os.PathLike, options: HealthFCInnerOptions, *, threads: int | None = None,
                      evidence: str | os.PathLike | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The member's out-of-fold predictions over the training claims of run ``options.run`` (every fold but
    its test fold), from ``inner_folds`` models trained as :func:`medfc.experiments.healthfc.run_fold` trains
    one. Records as a run's (``inner_fold`` added), sorted by id; the info has each part's sizes and scores."""
    from medfc.experiments import healthfc
    from medfc.experiments.models import build_model
    from medfc.experiments.systems import system

    run = options.run
    spec = system(run.system)
    if spec.source is not None and evidence is None:
        raise ValueError(f"system {spec.name} needs the evidence file of source {spec.source}")
    report = SkipReport(f"healthfc-{spec.name}-fold{run.fold}-inner")
    model = build_model(run.train, threads)
    claims = healthfc.load_claims(dataset, run.lang, report)
    train_c, _ = healthfc.split_fold(claims, healthfc.load_folds(folds), run.fold, report)
    snippets: dict[str, list[str]] = {}
    if spec.source is not None:
        from medfc.healthfc.evidence_file import evidence_by_claim

        snippets = evidence_by_claim(evidence)
    eligible = [c for c in train_c if spec.eligible is None or spec.eligible(c)]
    part = inner_assignment([c.id for c in eligible], [spec.gold(c) for c in eligible], options.inner.inner_folds, options.inner.seed)
    records: list[dict[str, Any]] = []
    parts = []
    started = time.perf_counter()
    for k in range(options.inner.inner_folds):
        fit_c = [c for c in train_c if part.get(c.id) != k]  # the ineligible claims stay where the run has them (counted, never predicted)
        held = [c for c in eligible if part[c.id] == k]
        fit_c, val_c = healthfc.stratified_holdout(fit_c, run.system_options.val_fraction, run.train.seed)
        fold = healthfc.Fold(fit_c, val_c, held, snippets, run.fold, run.lang)
        log.info("HealthFC %s fold %d, inner part %d/%d: %d train, %d validation, %d predicted", spec.name, run.fold, k + 1,
                 options.inner.inner_folds, len(fit_c), len(val_c), len(held))
        recs, _ = healthfc.TRAINERS[spec.trainer](spec, fold, run, model, None, threads, SkipReport(f"inner-{k}"))
        for r in recs:
            r["inner_fold"] = k
        records.extend(recs)
        parts.append({"inner_fold": k, "n_train": len(fit_c), "n_validation": len(val_c), "n_predicted": len(recs),
                      "scores": _scores(recs, spec.labels)})
    report.count("records", len(records))
    info = {"system": spec.name, "fold": run.fold, "lang": run.lang, "inner_folds": options.inner.inner_folds, "seed": options.inner.seed,
            "n_train": len(train_c), "parts": parts, "scores": _scores(records, spec.labels), "config": run.train.as_dict(),
            "seconds": round(time.perf_counter() - started, 1), "skips": report.as_dict()}
    return sorted(records, key=lambda r: r["id"]), info


def clinifact_inner_cv(train_csv: str | os.PathLike, validation_csv: str | os.PathLike, options: CliniFactInnerOptions, *,
                       threads: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The member's out-of-fold predictions over CliniFact's train + validation pairs (:func:`clinifact_inner_cv_pairs`
    on the split files)."""
    from medfc.experiments.clinifact_data import load_pairs

    report = SkipReport("clinifact-inner")
    splits = {"train": load_pairs(train_csv, report), "validation": load_pairs(validation_csv, report)}
    records, info = clinifact_inner_cv_pairs(splits, options, threads=threads)
    info["skips"] = report.as_dict()
    return records, info


def clinifact_inner_cv_pairs(splits: Mapping[str, Sequence[Any]], options: CliniFactInnerOptions, *,
                             threads: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Out-of-fold predictions over the pairs of ``splits`` (``train`` and ``validation``), each part predicted
    by the member fit (as :func:`medfc.experiments.clinifact.run_discriminative` fits it) on the train and
    validation pairs of the other parts. Records as a run's, ``split`` their own split, ``inner_fold`` added."""
    from medfc.common.labels import CLINIFACT_LABELS
    from medfc.experiments.clinifact_data import pair_example, prediction_record
    from medfc.experiments.models import build_model

    run = options.run
    pool = [(s, p) for s in ("train", "validation") for p in splits[s]]
    part = inner_assignment([p.id for _, p in pool], [p.label for _, p in pool], options.inner.inner_folds, options.inner.seed)
    model = build_model(run.train, threads)
    records: list[dict[str, Any]] = []
    parts = []
    started = time.perf_counter()
    for k in range(options.inner.inner_folds):
        def examples(split: str) -> list:
            return [pair_example(p, run.include_title) for p in splits[split] if part[p.id] != k]

        held = [(s, p) for s, p in pool if part[p.id] == k]
        train_ex, val_ex = examples("train"), examples("validation")
        log.info("CliniFact inner part %d/%d: %d train, %d validation, %d predicted", k + 1, options.inner.inner_folds, len(train_ex),
                 len(val_ex), len(held))
        fitted = model.fit(train_ex, CLINIFACT_LABELS, val_ex or None, checkpoint_dir=None, trim="left", desc=f"clinifact/inner{k}")
        probs = fitted.probs([pair_example(p, run.include_title) for _, p in held], desc=f"clinifact/inner{k}/predict")
        recs = [{**prediction_record(p, s, "discriminative", CLINIFACT_LABELS, pr), "inner_fold": k} for (s, p), pr in zip(held, probs)]
        records.extend(recs)
        parts.append({"inner_fold": k, "n_train": len(train_ex), "n_validation": len(val_ex), "n_predicted": len(recs),
                      "scores": _scores(recs, CLINIFACT_LABELS)})
    info = {"system": "discriminative", "inner_folds": options.inner.inner_folds, "seed": options.inner.seed,
            "sizes": {s: len(splits[s]) for s in ("train", "validation")}, "parts": parts, "scores": _scores(records, CLINIFACT_LABELS),
            "config": run.train.as_dict(), "seconds": round(time.perf_counter() - started, 1)}
    return sorted(records, key=lambda r: r["id"]), info


def _scores(records: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> dict[str, float]:
    return validation_scores([r["label"] for r in records], [r["pred_label"] for r in records], list(labels)) if records else {}


# ------------------------------------------------------------------------------------ meta-model


def _macro_f1(gold: np.ndarray, pred: np.ndarray, n_labels: int) -> float:
    """Macro-F1 (0–1) of label indices over the labels that occur in gold or prediction (scikit-learn's
    ``f1_score`` macro), by the scorers' own :func:`medfc.common.metrics.macro_f1`."""
    from medfc.common.metrics import macro_f1

    present = [str(c) for c in range(n_labels) if (gold == c).any() or (pred == c).any()]
    return macro_f1([str(g) for g in gold.tolist()], [str(p) for p in pred.tolist()], present)


def _features(X: Mapping[str, np.ndarray], members: Sequence[str], kind: str = "log_probs") -> np.ndarray:
    """The meta-model's inputs: each member's probabilities (``probs``) or their logs (``log_probs``), side by side."""
    return np.hstack([np.log(np.clip(X[m], EPS, 1.0)) if kind == "log_probs" else X[m] for m in members])


class _Meta:
    """The meta-model on a subset of members: class-weighted multinomial logistic regression (lbfgs)."""

    def __init__(self, C: float, n_labels: int):
        self.C, self.n_labels = C, n_labels
        self.clf: Any = None
        self.constant: int | None = None

    def fit(self, F: np.ndarray, y: np.ndarray) -> _Meta:
        from sklearn.linear_model import LogisticRegression

        if len(set(y.tolist())) < 2:  # one class in this part: predict it
            self.constant = int(y[0])
            return self
        self.clf = LogisticRegression(C=self.C, class_weight="balanced", max_iter=2000)
        self.clf.fit(F, y)
        return self

    def probs(self, F: np.ndarray) -> np.ndarray:
        out = np.zeros((len(F), self.n_labels))
        if self.constant is not None:
            out[:, self.constant] = 1.0
            return out
        out[:, self.clf.classes_.astype(int)] = self.clf.predict_proba(F)
        return out


def _cv_parts(y: np.ndarray, seed: int, k: int = 5) -> np.ndarray:
    """The meta-model's own cross-validation over the out-of-fold items: stratified parts (fewer when a label
    has fewer items; at least 2)."""
    ids = [str(i) for i in range(len(y))]
    counts = np.bincount(y)
    k = max(2, min(k, int(counts[counts > 0].min()) if counts.any() else 2, len(y)))
    part = inner_assignment(ids, [str(v) for v in y], k, seed)
    return np.array([part[i] for i in ids])


def _meta_cv_score(F: np.ndarray, y: np.ndarray, C: float, n_labels: int, parts: np.ndarray) -> float:
    """Macro-F1 of the meta-model on features ``F``, each part predicted by one fit on the others."""
    pred = np.zeros(len(y), dtype=np.int64)
    for k in sorted(set(parts.tolist())):
        test = parts == k
        pred[test] = _Meta(C, n_labels).fit(F[~test], y[~test]).probs(F[test]).argmax(axis=1)
    return _macro_f1(y, pred, n_labels)


@dataclass
class StackChoice:
    """What the inner CV chose: the members (in the order they entered), the meta-model (None: the single
    member's own probabilities) and its C, each member's weight and every score of the choice."""

    members: list[str]
    meta: _Meta | None
    weights: dict[str, float]
    scores: dict[str, Any]
    features: str = "log_probs"

    def apply(self, X: Mapping[str, np.ndarray]) -> np.ndarray:
        """The ensemble's probabilities (items × labels) from the members' (member → items × labels)."""
        if self.meta is None:
            return X[self.members[0]]
        return self.meta.probs(_features(X, self.members, self.features))


def choose_stack(X: Mapping[str, np.ndarray], y: np.ndarray, members: Sequence[str], options: StackingOptions, n_labels: int) -> StackChoice:
    """Forward selection over the members by the meta-model's cross-validated macro-F1 on the out-of-fold
    probabilities ``X`` (member → items × labels), gold ``y`` (label indices); each subset's score is its
    best over ``C_grid``."""
    parts = _cv_parts(y, options.seed)
    single = {m: _macro_f1(y, X[m].argmax(axis=1), n_labels) for m in members}
    average = _macro_f1(y, np.mean([X[m] for m in members], axis=0).argmax(axis=1), n_labels)
    tried: dict[str, tuple[float, float]] = {}  # "a+b" → (score, its C)

    def score(subset: Sequence[str]) -> float:
        key = "+".join(subset)
        if key not in tried:
            F = _features(X, subset, options.features)
            tried[key] = max(((_meta_cv_score(F, y, C, n_labels, parts), C) for C in options.C_grid), key=lambda t: (t[0], -t[1]))
        return tried[key][0]

    order = {m: i for i, m in enumerate(members)}
    best_member = max(members, key=lambda m: (single[m], -order[m]))
    if options.select_members:
        chosen = [max(members, key=lambda m: (score([m]), -order[m]))]
        current = score(chosen)
        while len(chosen) < len(members):
            rest = [m for m in members if m not in chosen]
            gains = {m: score([*chosen, m]) for m in rest}
            add = max(rest, key=lambda m: (gains[m], -order[m]))
            if gains[add] - current <= options.min_gain:
                break
            chosen.append(add)
            current = gains[add]
    else:
        chosen = list(members)
        current = score(chosen)
    scores: dict[str, Any] = {"members": {m: round(v * 100, 2) for m, v in single.items()}, "average": round(average * 100, 2),
                              "tried": {k: {"macro_f1": round(v * 100, 2), "C": C} for k, (v, C) in tried.items()},
                              "meta_cv_parts": int(parts.max()) + 1}
    if options.select_members and current - single[best_member] <= options.min_gain:  # no meta-model beats the best member as it is
        scores["stack"] = round(single[best_member] * 100, 2)
        scores["chosen"] = f"{best_member} alone"
        return StackChoice([best_member], None, {m: float(m == best_member) for m in members}, scores, options.features)
    C = tried["+".join(chosen)][1]
    F = _features(X, chosen, options.features)
    meta = _Meta(C, n_labels).fit(F, y)
    weights = dict.fromkeys(members, 0.0)
    if meta.clf is not None:  # a member's share of the meta-model's decision: |coefficient| x the spread of its feature
        scale = np.abs(meta.clf.coef_) * F.std(axis=0)
        per = {m: float(scale[:, i * n_labels:(i + 1) * n_labels].sum()) for i, m in enumerate(chosen)}
        total = sum(per.values()) or 1.0
        weights.update({m: round(v / total, 4) for m, v in per.items()})
    scores["stack"] = round(current * 100, 2)
    scores["chosen"] = "meta-model on " + " + ".join(chosen)
    return StackChoice(chosen, meta, weights, scores, options.features)


def stack_predictions(test_files: Sequence[str | os.PathLike], inner_files: Sequence[str | os.PathLike], members: Sequence[str],
                      options: StackingOptions, report: SkipReport) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The stacked ensemble of ``members``: their test predictions (``test_files``) combined by the
    meta-model fit on their out-of-fold predictions (``inner_files``), both in member order. Records keep
    the first member's fields with ``probs`` and ``pred_label`` replaced; an item some member has no
    prediction for is left out and counted (test: ``member_without_prediction``; inner:
    ``inner_member_without_prediction``). Returns the records and the info's stacking entries."""
    if not len(test_files) == len(inner_files) == len(members):
        raise ValueError(f"{len(test_files)} prediction files and {len(inner_files)} inner-CV files for {len(members)} members")
    inner = runs_by_id(inner_files)
    test = runs_by_id(test_files)
    labels = _labels(inner, test)
    n = len(labels)
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
    choice = choose_stack(X, y, members, options, n)
    out = []
    for _, first, recs in aligned(test, members, report):
        p = choice.apply({m: np.array([[float(r["probs"][lab]) for lab in labels]]) for m, r in zip(members, recs)})[0]
        probs = {lab: round(float(v), 6) for lab, v in zip(labels, p)}
        out.append({**first, "probs": probs, "pred_label": max(labels, key=probs.get)})
    report.count("records", len(out))
    report.count("inner_items", len(ids))
    info = {"method": "stack", "selected": choice.members, "weights": choice.weights, "inner_cv": choice.scores,
            "meta_model": _meta_info(choice, labels, options)}
    return out, info


def _labels(inner: Sequence[Mapping[str, Mapping[str, Any]]], test: Sequence[Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """The label order: the keys of the first member's first usable probabilities (every run writes all its labels)."""
    for run in (*test, *inner):
        for r in run.values():
            if has_probs(r):
                return list(r["probs"])
    raise ValueError("no member prediction has probabilities")


def _meta_info(choice: StackChoice, labels: Sequence[str], options: StackingOptions) -> dict[str, Any] | None:
    if choice.meta is None:
        return None
    info: dict[str, Any] = {"kind": "logistic_regression", "C": choice.meta.C, "class_weight": "balanced", "features": choice.features,
                            "members": choice.members}
    if choice.meta.clf is not None:
        info["classes"] = [labels[int(c)] for c in choice.meta.clf.classes_]
        info["coef"] = np.round(choice.meta.clf.coef_, 4).tolist()
        info["intercept"] = np.round(choice.meta.clf.intercept_, 4).tolist()
    else:
        info["constant"] = labels[choice.meta.constant or 0]
    return info
