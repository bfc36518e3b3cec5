"""HealthFC baselines (Vladika et al., 2024, Tables 3 and 5) and the cross-validation driver :func:`run_fold`: each
system of :data:`medfc.experiments.healthfc.systems.REGISTRY` trained by its options class's trainer (:data:`TRAINERS`).
"""

from __future__ import annotations

import csv
import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
import numpy as np

from medfc.common.io import read_jsonl
from medfc.common.labels import EVIDENCE_LABELS, VERACITY_LABELS
from medfc.common.options import Options
from medfc.common.report import SkipReport
from medfc.experiments.final.kept import JOINT_KIND, keep_fitted, keep_pipeline
from medfc.experiments.models.kinds import FittedModel, Model, build_model
from medfc.experiments.pairs import fit_predict, record_scores, write_predictions
from medfc.experiments.records import CardFields, Claim, Example, HealthFCPrediction, RunInfo
from medfc.experiments.healthfc.systems import (HealthFCFoldOptions, JointOptions, LevelOptions, PipelineOptions,
                                                RetrievedOptions, SingleOptions, System, input_fields, system)
from medfc.healthfc.evidence_file import evidence_by_claim

log = logging.getLogger(__name__)


def load_claims(path: str | os.PathLike, lang: str = "en", report: SkipReport | None = None) -> list[Claim]:
    """The HealthFC dataset in language ``lang``; bad records and evidence ids skipped and counted."""
    report = report or SkipReport("healthfc-claims")
    claims: list[Claim] = []
    seen: set[str] = set()
    for rec in read_jsonl(path):
        cid = str(rec.get("id", ""))
        if not report.keep_first(cid, seen):
            continue
        text = rec.get(f"claim_{lang}")
        if not text:
            report.skip(cid, f"missing_claim_{lang}")
            continue
        if rec.get("label") not in VERACITY_LABELS:
            report.skip(cid, "unknown_label", str(rec.get("label")))
            continue
        sentences = [str(s) for s in (rec.get(f"sentences_{lang}") or [])]
        ids = rec.get("evidence_ids") or []
        ev = [i for i in ids if isinstance(i, int) and 0 <= i < len(sentences)]
        if len(ev) < len(ids):
            report.count("evidence_id_out_of_range", len(ids) - len(ev))
        claims.append(Claim(cid, text, rec["label"], str(rec.get("evidence_level") or ""), str(rec.get(f"explanation_{lang}") or ""), sentences, sorted(set(ev))))
        report.count("claims")
    return claims


def load_folds(path: str | os.PathLike) -> dict[str, int]:
    """claim id -> fold from the folds CSV (columns id, fold; the csv module: a job loads no pandas)."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if not {"id", "fold"} <= set(reader.fieldnames or ()):
            raise ValueError(f"{path}: needs columns id, fold")
        return {row["id"]: int(row["fold"]) for row in reader}


def split_fold(claims: Sequence[Claim], folds: dict[str, int], k: int,
               report: SkipReport) -> tuple[list[Claim], list[Claim]]:
    if k not in set(folds.values()):
        raise ValueError(f"fold {k} not among the folds {sorted(set(folds.values()))}")
    train_set, test_set = [], []
    for c in claims:
        if c.id not in folds:
            report.skip(c.id, "no_fold")
            continue
        (test_set if folds[c.id] == k else train_set).append(c)
    return train_set, test_set


def stratified_holdout(claims: Sequence[Claim], fraction: float, seed: int) -> tuple[list[Claim], list[Claim]]:
    """Split off ``fraction`` of the claims per label (at least one per label when possible)."""
    if fraction <= 0:
        return list(claims), []
    rng = np.random.default_rng(seed)
    keep, held = [], []
    for label in sorted({c.label for c in claims}):
        group = [c for c in claims if c.label == label]
        order = rng.permutation(len(group))
        n_held = min(len(group) - 1, max(1, round(fraction * len(group))))
        held.extend(group[i] for i in order[:n_held])
        keep.extend(group[i] for i in order[n_held:])
    return keep, held


@dataclass
class Fold:
    """One run's claims (training, validation, test) and the snippets of the system's source per claim id."""

    train: list[Claim]
    validation: list[Claim]
    test: list[Claim]
    snippets: dict[str, list[str]]
    index: int
    lang: str

    def evidence(self, c: Claim) -> list[str]:
        return self.snippets.get(c.id, [])


def select_evidence(probs: Sequence[float], threshold: float, max_evidence: int) -> list[int]:
    """Sentences with probability > ``threshold``, at most ``max_evidence`` (the most probable), in document order."""
    cand = [i for i, p in enumerate(probs) if p > threshold]
    cand.sort(key=lambda i: (-probs[i], i))
    return sorted(cand[:max_evidence])


def evidence_examples(claims: Sequence[Claim], neg_ratio: float | None, seed: int) -> list[Example]:
    """``[sentence; SEP; claim]`` examples: every positive and ``neg_ratio`` seeded negatives per positive."""
    rng = np.random.default_rng(seed)
    out = []
    for c in claims:
        gold = set(c.evidence_ids)
        neg = [i for i in range(len(c.sentences)) if i not in gold]
        if neg_ratio is not None:
            n_neg = min(len(neg), math.ceil(float(neg_ratio) * max(1, len(gold))))
            neg = sorted(rng.choice(neg, size=n_neg, replace=False).tolist()) if n_neg else []
        for i in sorted([*gold, *neg]):
            out.append(Example(c.sentences[i], c.claim, EVIDENCE_LABELS[int(i in gold)]))
    return out


def pipeline_predict(selector: FittedModel, veracity: FittedModel, spec: System, opts: PipelineOptions,
                     claims: Sequence[Claim]) -> tuple[list[list[int]], np.ndarray]:
    """Each claim's sentences the selector picks and the veracity model's probabilities on them (the pipeline's run
    and ``medfc predict`` alike)."""
    where = [(ci, si) for ci, c in enumerate(claims) for si in range(len(c.sentences))]
    evidence = [np.zeros(len(c.sentences), dtype=np.float32) for c in claims]
    if where:
        examples = [Example(claims[ci].sentences[si], claims[ci].claim) for ci, si in where]
        for (ci, si), p in zip(where, selector.probs(examples, desc="evidence/predict")[:, 1]):
            evidence[ci][si] = p
    selected = [select_evidence(p.tolist(), opts.threshold, opts.max_evidence) for p in evidence]
    examples = [Example(*spec.reads(c, opts, [c.sentences[i] for i in sel])) for c, sel in zip(claims, selected)]
    return selected, veracity.probs(examples, desc="veracity/predict")


def _record(c: Claim, fold: Fold, spec: System, probs: np.ndarray, pred_ids: list[int] | None, evidence: list[str]) -> HealthFCPrediction:
    return {"id": c.id, "fold": fold.index, "system": spec.name, "lang": fold.lang, "label": spec.gold(c),
            "pred_label": spec.labels[int(np.argmax(probs))], "probs": {lab: round(float(p), 6) for lab, p in zip(spec.labels, probs)},
            "evidence_ids": list(c.evidence_ids), "pred_evidence_ids": pred_ids, "evidence": evidence, "gold_evidence": c.gold_evidence}


def _fit_info(fitted: FittedModel) -> RunInfo:
    return {"train": fitted.result.as_dict(), "encode": fitted.encode_stats.as_dict()}


def _sub(base: Path | None, name: str) -> Path | None:
    return base / name if base is not None else None


def _eligible_only(fold: Fold, spec: System, report: SkipReport) -> tuple[list[Claim], list[Claim], list[Claim]]:
    """The claims ``spec`` predicts, the others counted per group as ``<not_eligible>_<group>``."""
    groups = (fold.train, fold.validation, fold.test)
    if spec.eligible is None:
        return groups
    for name, group in zip(("train", "validation", "test"), groups):
        for c in group:
            if not spec.eligible(c):
                report.count(f"{spec.not_eligible}_{name}")
    return tuple([c for c in g if spec.eligible(c)] for g in groups)  # type: ignore[return-value]


def run_single(spec: System, fold: Fold, options: HealthFCFoldOptions, model: Model, ckpt: Path | None, threads: int | None,
               report: SkipReport) -> tuple[list[HealthFCPrediction], RunInfo]:
    """One classifier of the run's model on the example the spec makes of each eligible claim."""
    opts = options.system_options
    if spec.source is not None:
        for c in fold.test:
            if not spec.shows(c, opts, fold.evidence(c)):
                report.count("test_claims_without_evidence")
    train_c, val_c, test_c = _eligible_only(fold, spec, report)

    def example(c: Claim) -> Example:
        return Example(*spec.reads(c, opts, fold.evidence(c)), spec.gold(c))

    # a claim and one text: the one discriminative path's fit and prediction (a final model has no test claims)
    fitted, probs = fit_predict(model, spec.labels, [example(c) for c in train_c], [example(c) for c in val_c],
                                {"predict": [example(c) for c in test_c]} if test_c else {}, checkpoint_dir=_sub(ckpt, spec.name),
                                trim="right", desc=spec.name)
    if ckpt is not None:  # kept for medfc predict: what it needs beside the weights (medfc.experiments.final.kept)
        keep_fitted(fitted, ckpt / spec.name, model_card(spec, options))
    records = [_record(c, fold, spec, p, None, spec.shows(c, opts, fold.evidence(c))) for c, p in zip(test_c, probs.get("predict", []))]
    return records, {"model": _fit_info(fitted)}


def model_card(spec: System, options: HealthFCFoldOptions) -> CardFields:
    """The card of a HealthFC system's kept model: labels, model config, system options and the fields a new claim needs."""
    return {"dataset": "healthfc", "system": spec.name, "lang": options.lang, "fold": options.fold, "kind": options.train.kind,
            "model": options.train.model, "labels": list(spec.labels), "config": options.train.as_dict(),
            "system_options": options.system_options.to_mapping(), "input_fields": list(input_fields(spec, options.system_options)),
            "trim": "right"}


def run_pipeline(spec: System, fold: Fold, options: HealthFCFoldOptions, model: Model, ckpt: Path | None, threads: int | None,
                 report: SkipReport) -> tuple[list[HealthFCPrediction], RunInfo]:
    """An evidence selector, then the classifier on gold (training) or selected (test) sentences."""
    opts = options.system_options
    kept = _sub(ckpt, spec.name)  # the selector in <system>/evidence, the classifier in <system>/veracity (kept.PIPELINE_PARTS)
    ev_train = evidence_examples(fold.train, opts.neg_ratio, options.train.seed)
    ev_validation = [Example(s, c.claim, EVIDENCE_LABELS[int(si in c.evidence_ids)]) for c in fold.validation
                     for si, s in enumerate(c.sentences)]
    selector = build_model(opts.evidence_train, threads).fit(ev_train, EVIDENCE_LABELS, ev_validation or None,
                                                             checkpoint_dir=_sub(kept, "evidence"), desc="evidence")

    def example(c: Claim, sentences: Sequence[str]) -> Example:
        return Example(*spec.reads(c, opts, sentences), spec.gold(c))

    ver = model.fit([example(c, c.gold_evidence) for c in fold.train], spec.labels, [example(c, c.gold_evidence) for c in fold.validation] or None,
                    checkpoint_dir=_sub(kept, "veracity"), desc="veracity")
    if kept is not None:  # kept for medfc predict: both models, each with its card, and the pipeline's card
        veracity_card = {**model_card(spec, options), "input_fields": ["claim", "evidence"]}
        selector_card = {**veracity_card, "kind": opts.evidence_train.kind, "model": opts.evidence_train.model, "labels": list(EVIDENCE_LABELS),
                         "config": opts.evidence_train.as_dict(), "input_fields": ["sentence", "claim"]}
        keep_pipeline(selector, ver, kept, {**model_card(spec, options), "evidence_model": opts.evidence_train.model,
                                            "threshold": opts.threshold, "max_evidence": opts.max_evidence},
                      {"evidence": selector_card, "veracity": veracity_card})
    if not fold.test:  # a final model: nothing to predict
        return [], _pipeline_info(selector, ver, len(ev_train))
    selected, probs = pipeline_predict(selector, ver, spec, opts, fold.test)
    records = [_record(c, fold, spec, p, sel, [c.sentences[i] for i in sel]) for c, p, sel in zip(fold.test, probs, selected)]
    return records, _pipeline_info(selector, ver, len(ev_train))  # after predicting: the models' counts include the test fold


def _pipeline_info(selector: FittedModel, ver: FittedModel, n_train_pairs: int) -> RunInfo:
    return {"evidence_model": {**_fit_info(selector), "n_train_pairs": n_train_pairs}, "veracity_model": _fit_info(ver)}


def run_joint(spec: System, fold: Fold, options: HealthFCFoldOptions, model: Model, ckpt: Path | None, threads: int | None,
              report: SkipReport) -> tuple[list[HealthFCPrediction], RunInfo]:
    """One encoder over the claim and all its sentences (:mod:`medfc.experiments.healthfc.joint`)."""
    from medfc.experiments.healthfc.joint import JointEncoder

    fitted = JointEncoder(model, options.system_options).fit(fold.train, spec.labels, fold.validation, checkpoint_dir=_sub(ckpt, spec.name))
    opts = options.system_options
    if ckpt is not None:  # kept for medfc predict (medfc.experiments.final.kept): the checkpoint, the encoder's config and tokenizer, the card
        keep_fitted(fitted, ckpt / spec.name, {**model_card(spec, options), "kind": JOINT_KIND, "threshold": opts.threshold,
                                                "max_evidence": opts.max_evidence})
    records: list[HealthFCPrediction] = []
    for c, (lp, ep) in zip(fold.test, fitted.predict(fold.test, desc="joint/predict") if fold.test else []):
        sel = select_evidence(ep.tolist(), opts.threshold, opts.max_evidence)
        records.append(_record(c, fold, spec, lp, sel, [c.sentences[i] for i in sel]))
    return records, {"model": {"train": fitted.result.as_dict(), "windows": fitted.encode_stats.as_dict()}}


# (spec, fold, options, model, checkpoint dir, threads, report) → the records and the info of the run
Trainer = Callable[[System, Fold, HealthFCFoldOptions, Model, Path | None, int | None, SkipReport], tuple[list[HealthFCPrediction], RunInfo]]
# a system's options class → how it trains
TRAINERS: dict[type[Options], Trainer] = {SingleOptions: run_single, LevelOptions: run_single, RetrievedOptions: run_single,
                                          PipelineOptions: run_pipeline, JointOptions: run_joint}


def source_snippets(spec: System, evidence: str | os.PathLike | None) -> dict[str, list[str]]:
    """The snippets of the system's evidence source per claim id (none without a source; a source needs its file)."""
    if spec.source is None:
        return {}
    if evidence is None:
        raise ValueError(f"system {spec.name} needs the evidence file of source {spec.source}")
    return evidence_by_claim(evidence)


def run_fold(dataset: str | os.PathLike, folds: str | os.PathLike | None, options: HealthFCFoldOptions, *,
             threads: int | None = None, report: SkipReport | None = None,
             evidence: str | os.PathLike | None = None) -> tuple[list[HealthFCPrediction], RunInfo]:
    """Train ``options.system`` on every fold but ``options.fold``, predict it; (records, info). ``folds`` None: every
    claim trains (a row's final model, kept in ``options.checkpoint_dir``)."""
    spec = system(options.system)
    if not isinstance(options.system_options, spec.options):
        raise TypeError(f"system {spec.name} takes {spec.options.__name__}, not {type(options.system_options).__name__}")
    snippets = source_snippets(spec, evidence)
    model = build_model(options.train, threads)  # the run's model, its kind chosen once (an encoder's device resolved once)
    report = report or SkipReport(f"healthfc-{spec.name}-{'final' if folds is None else f'fold{options.fold}'}")
    claims = load_claims(dataset, options.lang, report)
    if folds is None:
        train_c, val_c, test_c = claims, [], []
    else:
        train_c, test_c = split_fold(claims, load_folds(folds), options.fold, report)
        train_c, val_c = stratified_holdout(train_c, options.system_options.val_fraction, options.train.seed)
    ckpt = Path(options.checkpoint_dir) if options.checkpoint_dir is not None else None
    log.info("HealthFC %s %s (%s): %d train, %d validation, %d test claims", spec.name,
             "final" if folds is None else f"fold {options.fold}", options.lang, len(train_c), len(val_c), len(test_c))
    fold = Fold(train_c, val_c, test_c, snippets, options.fold, options.lang)
    records, info = TRAINERS[spec.options](spec, fold, options, model, ckpt, threads, report)
    info.update({"system": spec.name, "fold": options.fold, "lang": options.lang, "n_train": len(train_c), "n_validation": len(val_c),
                 "n_test": len(test_c), "n_predictions": len(records), "config": model.config.as_dict(),
                 "options": options.system_options.as_dict(), "scores": record_scores(records, spec.labels),
                 "skips": report.as_dict()})
    return records, info


def write_fold(predictions: str | os.PathLike, info_path: str | os.PathLike, records: Sequence[HealthFCPrediction],
               info: RunInfo) -> None:
    write_predictions(predictions, info_path, sorted(records, key=lambda r: r["id"]), info)
