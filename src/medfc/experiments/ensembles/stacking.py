"""Learned stacking, first half: each member's out-of-fold predictions on a run's training split by inner
cross-validation (rules ``healthfc_inner_cv``, ``pairs_inner_cv``; the test split is never read). A light module (the
plan builds its options).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from medfc.common.options import Options
from medfc.common.report import SkipReport
from medfc.experiments.ensembles.ensemble import inner_assignment
from medfc.experiments.models.options import PairsTrainOptions
from medfc.experiments.healthfc.systems import HealthFCFoldOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InnerFolds(Options):
    """``experiments.stacking``'s keys an inner cross-validation depends on (the meta-model's do not rerun it)."""

    inner_folds: int
    seed: int


@dataclass(frozen=True)
class HealthFCInnerOptions(Options):
    """``healthfc_inner_cv``: the member's run as ``healthfc_experiment`` trains it, and the inner folds."""

    run: HealthFCFoldOptions
    inner: InnerFolds


@dataclass(frozen=True)
class PairsInnerOptions(Options):
    """``pairs_inner_cv``: the member's discriminative run (no checkpoints) and the inner folds."""

    run: PairsTrainOptions
    inner: InnerFolds


Records = list[dict[str, Any]]


def _out_of_fold(options: HealthFCInnerOptions | PairsInnerOptions, labels: Sequence[str],
                 fit_part: Callable[[int], tuple[Records, int, int]]) -> tuple[Records, dict[str, Any]]:
    """The records of every inner part, each from ``fit_part(k)`` (its records, n_train, n_validation) tagged
    ``inner_fold``, sorted by id; and the info's entries: each part's sizes and scores, the scores of all, seconds."""
    from medfc.experiments.pairs import record_scores

    records: Records = []
    parts = []
    started = time.perf_counter()
    for k in range(options.inner.inner_folds):
        recs, n_train, n_validation = fit_part(k)
        recs = [{**r, "inner_fold": k} for r in recs]
        records.extend(recs)
        parts.append({"inner_fold": k, "n_train": n_train, "n_validation": n_validation, "n_predicted": len(recs),
                      "scores": record_scores(recs, labels)})
    info = {"inner_folds": options.inner.inner_folds, "seed": options.inner.seed, "parts": parts,
            "scores": record_scores(records, labels), "config": options.run.train.as_dict(),
            "seconds": round(time.perf_counter() - started, 1)}
    return sorted(records, key=lambda r: r["id"]), info


def healthfc_inner_cv(dataset: str | os.PathLike, folds: str | os.PathLike, options: HealthFCInnerOptions, *, threads: int | None = None,
                      evidence: str | os.PathLike | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The member's out-of-fold predictions over run ``options.run``'s training claims, sorted by id."""
    from medfc.experiments.healthfc import runs as healthfc
    from medfc.experiments.models.kinds import build_model
    from medfc.experiments.healthfc.systems import system

    run = options.run
    spec = system(run.system)
    snippets = healthfc.source_snippets(spec, evidence)
    report = SkipReport(f"healthfc-{spec.name}-fold{run.fold}-inner")
    model = build_model(run.train, threads)
    claims = healthfc.load_claims(dataset, run.lang, report)
    train_c, _ = healthfc.split_fold(claims, healthfc.load_folds(folds), run.fold, report)
    eligible = [c for c in train_c if spec.eligible is None or spec.eligible(c)]
    part = inner_assignment([c.id for c in eligible], [spec.gold(c) for c in eligible], options.inner.inner_folds, options.inner.seed)

    def fit_part(k: int) -> tuple[Records, int, int]:
        fit_c = [c for c in train_c if part.get(c.id) != k]  # the ineligible claims stay where the run has them (counted, never predicted)
        held = [c for c in eligible if part[c.id] == k]
        fit_c, val_c = healthfc.stratified_holdout(fit_c, run.system_options.val_fraction, run.train.seed)
        fold = healthfc.Fold(fit_c, val_c, held, snippets, run.fold, run.lang)
        log.info("HealthFC %s fold %d, inner part %d/%d: %d train, %d validation, %d predicted", spec.name, run.fold, k + 1,
                 options.inner.inner_folds, len(fit_c), len(val_c), len(held))
        recs, _ = healthfc.TRAINERS[spec.options](spec, fold, run, model, None, threads, SkipReport(f"inner-{k}"))
        return recs, len(fit_c), len(val_c)

    records, info = _out_of_fold(options, spec.labels, fit_part)
    report.count("records", len(records))
    return records, {"system": spec.name, "fold": run.fold, "lang": run.lang, "n_train": len(train_c), **info,
                     "skips": report.as_dict()}


def pairs_inner_cv(train_file: str | os.PathLike, validation_file: str | os.PathLike, options: PairsInnerOptions, *,
                   threads: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The member's out-of-fold predictions over a pairs dataset's train + validation files, each part by the member
    fit on the others."""
    from medfc.experiments.models.kinds import build_model
    from medfc.experiments.pairs import SYSTEM, fit_predict, load_pairs, pair_example, prediction_record

    run = options.run
    classes = run.data.classes
    report = SkipReport(f"{run.data.dataset}-inner")
    splits = {s: load_pairs(f, report, run.data) for s, f in (("train", train_file), ("validation", validation_file))}
    pool = [(s, p) for s in ("train", "validation") for p in splits[s]]
    part = inner_assignment([p.id for _, p in pool], [p.label for _, p in pool], options.inner.inner_folds, options.inner.seed)
    model = build_model(run.train, threads)

    def fit_part(k: int) -> tuple[Records, int, int]:
        train_ex, val_ex = ([pair_example(p, run.include_title) for p in splits[split] if part[p.id] != k]
                            for split in ("train", "validation"))
        held = [(s, p) for s, p in pool if part[p.id] == k]
        log.info("%s inner part %d/%d: %d train, %d validation, %d predicted", run.data.dataset, k + 1, options.inner.inner_folds,
                 len(train_ex), len(val_ex), len(held))
        _, probs = fit_predict(model, classes, train_ex, val_ex, {"predict": [pair_example(p, run.include_title) for _, p in held]},
                               checkpoint_dir=None, trim="left", desc=f"{run.data.dataset}/inner{k}")
        recs = [prediction_record(p, s, SYSTEM, classes, pr) for (s, p), pr in zip(held, probs["predict"])]
        return recs, len(train_ex), len(val_ex)

    records, info = _out_of_fold(options, classes, fit_part)
    sizes = {s: len(splits[s]) for s in ("train", "validation")}
    return records, {"system": SYSTEM, "sizes": sizes, **info, "skips": report.as_dict()}
