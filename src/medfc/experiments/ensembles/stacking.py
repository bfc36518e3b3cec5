"""Learned stacking, first half: each member's out-of-fold predictions on a run's training split by inner
cross-validation (rules ``healthfc_inner_cv``, ``pairs_inner_cv``), the member trained with its own recipe on all
stratified parts but one (:func:`inner_assignment`). The test split is never read; the choice is
:mod:`medfc.experiments.ensembles.stack_selection`'s. A light module (the plan builds its options).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
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


def healthfc_inner_cv(dataset: str | os.PathLike, folds: str | os.PathLike, options: HealthFCInnerOptions, *, threads: int | None = None,
                      evidence: str | os.PathLike | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The member's out-of-fold predictions over run ``options.run``'s training claims, sorted by id."""
    from medfc.experiments.healthfc import runs as healthfc
    from medfc.experiments.models.kinds import build_model
    from medfc.experiments.healthfc.systems import system
    from medfc.experiments.pairs import record_scores

    run = options.run
    spec = system(run.system)
    snippets = healthfc.source_snippets(spec, evidence)
    report = SkipReport(f"healthfc-{spec.name}-fold{run.fold}-inner")
    model = build_model(run.train, threads)
    claims = healthfc.load_claims(dataset, run.lang, report)
    train_c, _ = healthfc.split_fold(claims, healthfc.load_folds(folds), run.fold, report)
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
                      "scores": record_scores(recs, spec.labels)})
    report.count("records", len(records))
    info = {"system": spec.name, "fold": run.fold, "lang": run.lang, "inner_folds": options.inner.inner_folds, "seed": options.inner.seed,
            "n_train": len(train_c), "parts": parts, "scores": record_scores(records, spec.labels), "config": run.train.as_dict(),
            "seconds": round(time.perf_counter() - started, 1), "skips": report.as_dict()}
    return sorted(records, key=lambda r: r["id"]), info


def pairs_inner_cv(train_file: str | os.PathLike, validation_file: str | os.PathLike, options: PairsInnerOptions, *,
                   threads: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The member's out-of-fold predictions over a pairs dataset's train + validation files (:func:`inner_cv_pairs`)."""
    from medfc.experiments.pairs import read_splits

    data = options.run.data
    report = SkipReport(f"{data.dataset}-inner")
    records, info = inner_cv_pairs(read_splits({"train": train_file, "validation": validation_file}, data, report), options, threads=threads)
    info["skips"] = report.as_dict()
    return records, info


def inner_cv_pairs(splits: Mapping[str, Sequence[Any]], options: PairsInnerOptions, *,
                   threads: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Out-of-fold predictions over the pairs of ``splits``, each part by the member fit on the others."""
    from medfc.experiments.models.kinds import build_model
    from medfc.experiments.pairs import SYSTEM, fit_predict, pair_example, prediction_record, record_scores

    run = options.run
    classes = run.data.classes
    pool = [(s, p) for s in ("train", "validation") for p in splits[s]]
    part = inner_assignment([p.id for _, p in pool], [p.label for _, p in pool], options.inner.inner_folds, options.inner.seed)
    records: list[dict[str, Any]] = []
    parts = []
    model = build_model(run.train, threads)
    started = time.perf_counter()
    for k in range(options.inner.inner_folds):
        def examples(split: str) -> list:
            return [pair_example(p, run.include_title) for p in splits[split] if part[p.id] != k]

        held = [(s, p) for s, p in pool if part[p.id] == k]
        train_ex, val_ex = examples("train"), examples("validation")
        log.info("%s inner part %d/%d: %d train, %d validation, %d predicted", run.data.dataset, k + 1, options.inner.inner_folds,
                 len(train_ex), len(val_ex), len(held))
        _, probs = fit_predict(model, classes, train_ex, val_ex, {"predict": [pair_example(p, run.include_title) for _, p in held]},
                               checkpoint_dir=None, trim="left", desc=f"{run.data.dataset}/inner{k}")
        recs = [{**prediction_record(p, s, SYSTEM, classes, pr), "inner_fold": k} for (s, p), pr in zip(held, probs["predict"])]
        records.extend(recs)
        parts.append({"inner_fold": k, "n_train": len(train_ex), "n_validation": len(val_ex), "n_predicted": len(recs),
                      "scores": record_scores(recs, classes)})
    info = {"system": SYSTEM, "inner_folds": options.inner.inner_folds, "seed": options.inner.seed,
            "sizes": {s: len(splits[s]) for s in ("train", "validation")}, "parts": parts, "scores": record_scores(records, classes),
            "config": run.train.as_dict(), "seconds": round(time.perf_counter() - started, 1)}
    return sorted(records, key=lambda r: r["id"]), info


