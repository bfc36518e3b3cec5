"""HealthFC baselines (Vladika et al., 2024, Tables 3 and 5) and the cross-validation driver.

Systems (``SYSTEMS``):

``pipeline``
    An evidence-selection classifier over ``[sentence; SEP; claim]`` (all positive sentences of the
    training claims, ``neg_ratio`` sampled negatives per positive), then a veracity classifier
    trained on ``[claim; SEP; gold evidence]`` and applied to ``[claim; SEP; selected evidence]``
    where the selected evidence is the sentences with probability > ``threshold``, at most
    ``max_evidence`` of them (the most probable), in document order.
``joint``
    :mod:`medfc.experiments.joint` (one encoder, token-attention sentence pooling, evidence and label
    heads, loss = ``evidence_weight`` · BCE + CE, windowing for long documents).
``oracle``
    The veracity classifier on ``[claim; SEP; gold evidence]`` for training and testing.
``claims_only``
    ``[claim]`` alone.
``gold_explanations``
    ``[claim; SEP; explanation]`` (the article's summary / explanation).
``retrieved_<source>`` (``web``, ``pubmed``, ``wikipedia``)
    ``[claim; SEP; the first retrieved_top_k snippets of the source, in rank order]`` (Table 5's "Google
    snippets" is ``retrieved_web``): the open-domain evidence of :mod:`medfc.healthfc.evidence`.
``open_domain_<source>``
    The same input, two classes: supported vs refuted, over the SUPPORTED and REFUTED claims only (the
    open-domain comparison the paper cites, §7.3).
``level_of_evidence``
    Three classes high / moderate / low over the SUPPORTED and REFUTED claims that have one of these
    levels; the input is chosen by ``loe_input``: ``claim``, ``claim+evidence`` (gold, default),
    ``claim+explanation`` or ``claim+document``.

``lang`` selects the ``*_en`` or ``*_de`` fields (German needs a multilingual model in the
training config).  :func:`run_fold` trains on all folds but ``k`` (optionally holding out
``val_fraction`` of them, stratified, for best-checkpoint selection) and predicts fold ``k``.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from medfc.common.io import read_jsonl, write_json, write_jsonl
from medfc.common.labels import BINARY_VERACITY_LABELS, REFUTED, SUPPORTED
from medfc.common.options import Options
from medfc.common.report import SkipReport
from medfc.experiments import joint as joint_mod
from medfc.experiments.classifier import Example, FittedClassifier, load_tokenizer
from medfc.experiments.models import ModelConfig, fit_model, resolved
from medfc.experiments.metrics import validation_scores
from medfc.experiments.systems import (
    EVIDENCE_LABELS,
    LOE_LABELS,
    SYSTEM_OPTIONS,
    SYSTEMS,
    VERACITY_LABELS,
    JointOptions,
    LevelOptions,
    PipelineOptions,
    RetrievedOptions,
    evidence_source,
)
from medfc.experiments.training import TrainConfig, class_weights, predict, set_seed, train

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------- data


@dataclass
class Claim:
    id: str
    claim: str
    label: str
    evidence_level: str
    explanation: str
    sentences: list[str]
    evidence_ids: list[int]

    @property
    def gold_evidence(self) -> list[str]:
        return [self.sentences[i] for i in self.evidence_ids]


def load_claims(path: str | os.PathLike, lang: str = "en", report: SkipReport | None = None) -> list[Claim]:
    """Read the HealthFC dataset JSONL in language ``lang``; bad records are skipped with a reason.

    Evidence ids outside the sentence list are dropped (counted as ``evidence_id_out_of_range``).
    """
    if lang not in ("en", "de"):
        raise ValueError("lang must be 'en' or 'de'")
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
        ev = []
        for i in rec.get("evidence_ids") or []:
            if isinstance(i, int) and 0 <= i < len(sentences):
                ev.append(i)
            else:
                report.count("evidence_id_out_of_range")
        claims.append(Claim(cid, text, rec["label"], str(rec.get("evidence_level") or ""), str(rec.get(f"explanation_{lang}") or ""), sentences, sorted(set(ev))))
        report.count("claims")
    return claims


def load_folds(path: str | os.PathLike) -> dict[str, int]:
    df = pd.read_csv(path, dtype={"id": str})
    if not {"id", "fold"} <= set(df.columns):
        raise ValueError(f"{path}: needs columns id, fold")
    return {str(i): int(f) for i, f in zip(df["id"], df["fold"])}


def split_fold(claims: Sequence[Claim], folds: dict[str, int], k: int, report: SkipReport | None = None) -> tuple[list[Claim], list[Claim]]:
    if k not in set(folds.values()):
        raise ValueError(f"fold {k} not among the folds {sorted(set(folds.values()))}")
    train_set, test_set = [], []
    for c in claims:
        if c.id not in folds:
            if report:
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
    by_label: dict[str, list[Claim]] = {}
    for c in claims:
        by_label.setdefault(c.label, []).append(c)
    for label in sorted(by_label):
        group = by_label[label]
        order = rng.permutation(len(group))
        n_held = min(len(group) - 1, max(1, round(fraction * len(group))))
        held.extend(group[i] for i in order[:n_held])
        keep.extend(group[i] for i in order[n_held:])
    return keep, held


# ------------------------------------------------------------------------------------- selection


def select_evidence(probs: Sequence[float], threshold: float, max_evidence: int) -> list[int]:
    """Sentences with probability > ``threshold``; at most ``max_evidence`` (the most probable),
    returned in document order."""
    cand = [i for i, p in enumerate(probs) if p > threshold]
    cand.sort(key=lambda i: (-probs[i], i))
    return sorted(cand[:max_evidence])


def evidence_examples(claims: Sequence[Claim], neg_ratio: float | None, seed: int) -> list[Example]:
    """``[sentence; SEP; claim]`` examples: every positive, ``ceil(neg_ratio · max(1, #pos))``
    negatives per claim (seeded sample), or all sentences when ``neg_ratio`` is None."""
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


def _all_sentence_examples(claims: Sequence[Claim]) -> tuple[list[Example], list[tuple[int, int]]]:
    ex, where = [], []
    for ci, c in enumerate(claims):
        for si, s in enumerate(c.sentences):
            ex.append(Example(s, c.claim))
            where.append((ci, si))
    return ex, where


def predict_evidence_probs(selector: FittedClassifier, claims: Sequence[Claim]) -> list[np.ndarray]:
    ex, where = _all_sentence_examples(claims)
    out = [np.zeros(len(c.sentences), dtype=np.float32) for c in claims]
    if ex:
        probs = selector.probs(ex, desc="evidence/predict")[:, 1]
        for (ci, si), p in zip(where, probs):
            out[ci][si] = p
    return out


def _evidence_eval_examples(claims: Sequence[Claim]) -> list[Example]:
    ex, where = _all_sentence_examples(claims)
    for e, (ci, si) in zip(ex, where):
        e.label = EVIDENCE_LABELS[int(si in set(claims[ci].evidence_ids))]
    return ex


# ------------------------------------------------------------------------------------------ inputs


def _join(sentences: Sequence[str]) -> str:
    return " ".join(s.strip() for s in sentences if s and s.strip())


def veracity_example(c: Claim, evidence: Sequence[str] | None) -> Example:
    return Example(c.claim, _join(evidence) if evidence is not None else None, c.label)


def loe_example(c: Claim, input_kind: str) -> Example:
    second = {
        "claim": None,
        "claim+evidence": _join(c.gold_evidence),
        "claim+explanation": c.explanation,
        "claim+document": _join(c.sentences),
    }[input_kind]
    return Example(c.claim, second, c.evidence_level)


def retrieved_text(snippets: Sequence[str], top_k: int) -> str:
    """The first ``top_k`` snippets in rank order, concatenated (each stripped, one space between)."""
    return _join(list(snippets)[: int(top_k)])


def binary_eligible(c: Claim) -> bool:
    return c.label in (SUPPORTED, REFUTED)


def loe_eligible(c: Claim) -> bool:
    return c.label in (SUPPORTED, REFUTED) and c.evidence_level in LOE_LABELS


# ------------------------------------------------------------------------------------------ record


def _record(c: Claim, fold: int, system: str, lang: str, label: str, labels: Sequence[str], probs: np.ndarray, pred_ids: list[int] | None, evidence: list[str]) -> dict[str, Any]:
    return {
        "id": c.id,
        "fold": fold,
        "system": system,
        "lang": lang,
        "label": label,
        "pred_label": labels[int(np.argmax(probs))],
        "probs": {lab: round(float(p), 6) for lab, p in zip(labels, probs)},
        "evidence_ids": list(c.evidence_ids),
        "pred_evidence_ids": pred_ids,
        "evidence": evidence,
        "gold_evidence": c.gold_evidence,
    }


# ------------------------------------------------------------------------------------------ systems


def _sub(base: Path | None, name: str) -> Path | None:
    return base / name if base is not None else None


def _fit_veracity(cfg: ModelConfig, train_ex: list[Example], val_ex: list[Example], ckpt: Path | None, desc: str, labels: Sequence[str] = VERACITY_LABELS) -> FittedClassifier:
    return fit_model(cfg, labels, train_ex, val_ex or None, checkpoint_dir=ckpt, desc=desc)


def run_pipeline(train_c: list[Claim], val_c: list[Claim], test_c: list[Claim], cfg: ModelConfig, opts: PipelineOptions, lang: str, ckpt: Path | None, fold: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    # an encoder's selector has its own whole training config (layered in medfc.plan); a baseline uses the run's
    ev_cfg = resolved(TrainConfig.from_mapping(opts.evidence_train, where="experiments.healthfc.evidence_train")) if isinstance(cfg, TrainConfig) else cfg
    ev_train = evidence_examples(train_c, opts.neg_ratio, cfg.seed)
    selector = fit_model(ev_cfg, EVIDENCE_LABELS, ev_train, _evidence_eval_examples(val_c) or None, checkpoint_dir=_sub(ckpt, "evidence"), desc="evidence")
    ver = _fit_veracity(cfg, [veracity_example(c, c.gold_evidence) for c in train_c], [veracity_example(c, c.gold_evidence) for c in val_c], _sub(ckpt, "veracity"), "veracity")
    ev_probs = predict_evidence_probs(selector, test_c)
    selected = [select_evidence(p.tolist(), opts.threshold, opts.max_evidence) for p in ev_probs]
    test_ex = [veracity_example(c, [c.sentences[i] for i in sel]) for c, sel in zip(test_c, selected)]
    probs = ver.probs(test_ex, desc="veracity/predict")
    records = [
        _record(c, fold, "pipeline", lang, c.label, VERACITY_LABELS, p, sel, [c.sentences[i] for i in sel])
        for c, p, sel in zip(test_c, probs, selected)
    ]
    info = {
        "evidence_model": {"train": selector.result.as_dict(), "n_train_pairs": len(ev_train), "encode": selector.encode_stats.as_dict()},
        "veracity_model": {"train": ver.result.as_dict(), "encode": ver.encode_stats.as_dict()},
    }
    return records, info


def _eligible_only(groups: tuple[list[Claim], list[Claim], list[Claim]], eligible: Any, reason: str, report: SkipReport) -> tuple[list[Claim], ...]:
    for name, group in zip(("train", "validation", "test"), groups):
        for c in group:
            if not eligible(c):
                report.count(f"{reason}_{name}")
    return tuple([c for c in g if eligible(c)] for g in groups)


def run_single(system: str, train_c: list[Claim], val_c: list[Claim], test_c: list[Claim], cfg: ModelConfig, opts: Options, lang: str, ckpt: Path | None, fold: int, report: SkipReport,
               evidence: dict[str, list[str]] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """oracle, claims_only, gold_explanations, level_of_evidence, retrieved_* and open_domain_* (with
    ``evidence``: claim id → snippets in rank order): one classifier each."""
    labels: Sequence[str] = VERACITY_LABELS
    if evidence_source(system) is not None:
        assert isinstance(opts, RetrievedOptions)
        if evidence is None:
            raise ValueError(f"system {system} needs the retrieved evidence of source {evidence_source(system)}")
        snippets = {c.id: list(evidence.get(c.id, []))[: opts.retrieved_top_k] for c in (*train_c, *val_c, *test_c)}
        for c in test_c:
            if not snippets[c.id]:
                report.count("test_claims_without_evidence")
        make = lambda c: Example(c.claim, retrieved_text(snippets[c.id], opts.retrieved_top_k), c.label)  # noqa: E731
        shown = lambda c: snippets[c.id]  # noqa: E731
        if system.startswith("open_domain_"):
            labels = BINARY_VERACITY_LABELS
            train_c, val_c, test_c = _eligible_only((train_c, val_c, test_c), binary_eligible, "nei_not_in_binary", report)
    elif system == "oracle":
        make = lambda c: veracity_example(c, c.gold_evidence)  # noqa: E731
        shown = lambda c: c.gold_evidence  # noqa: E731
    elif system == "claims_only":
        make = lambda c: veracity_example(c, None)  # noqa: E731
        shown = lambda c: []  # noqa: E731
    elif system == "gold_explanations":
        make = lambda c: Example(c.claim, c.explanation, c.label)  # noqa: E731
        shown = lambda c: []  # noqa: E731
    elif system == "level_of_evidence":
        assert isinstance(opts, LevelOptions)
        labels = LOE_LABELS
        make = lambda c: loe_example(c, opts.loe_input)  # noqa: E731
        shown = lambda c: c.gold_evidence if opts.loe_input == "claim+evidence" else []  # noqa: E731
        train_c, val_c, test_c = _eligible_only((train_c, val_c, test_c), loe_eligible, "loe_not_applicable", report)
    else:  # pragma: no cover - guarded by run_fold
        raise ValueError(system)
    model = _fit_veracity(cfg, [make(c) for c in train_c], [make(c) for c in val_c], _sub(ckpt, system), system, labels)
    probs = model.probs([make(c) for c in test_c], desc=f"{system}/predict")
    gold_of = (lambda c: c.evidence_level) if system == "level_of_evidence" else (lambda c: c.label)
    records = [_record(c, fold, system, lang, gold_of(c), labels, p, None, shown(c)) for c, p in zip(test_c, probs)]
    return records, {"model": {"train": model.result.as_dict(), "encode": model.encode_stats.as_dict()}}


def run_joint(train_c: list[Claim], val_c: list[Claim], test_c: list[Claim], cfg: TrainConfig, opts: JointOptions, lang: str, ckpt: Path | None, fold: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if not isinstance(cfg, TrainConfig):
        raise ValueError("the joint system needs an encoder; the TF-IDF baseline runs the other systems")
    set_seed(cfg.seed)
    tok = load_tokenizer(cfg.model)
    model = joint_mod.JointModel.from_pretrained(cfg.model, len(VERACITY_LABELS), evidence_weight=opts.evidence_weight, threshold=opts.threshold, pool=opts.joint_pool)
    with_types = "token_type_ids" in tok.model_input_names and getattr(model.encoder.config, "type_vocab_size", 1) >= 2
    stats = joint_mod.WindowStats()
    index = {lab: i for i, lab in enumerate(VERACITY_LABELS)}

    def feats(group: Sequence[Claim]) -> list[dict[str, Any]]:
        return [joint_mod.joint_features(tok, c.claim, c.sentences, c.evidence_ids, index[c.label], cfg.max_length, stats, with_types) for c in group]

    collate = joint_mod.JointCollator(tok.pad_token_id or 0)

    def infer(m: torch.nn.Module, fs: list[dict[str, Any]], desc: str) -> list[tuple[np.ndarray, np.ndarray]]:
        return predict(m, fs, collate=collate, forward_fn=joint_mod.joint_forward, batch_size=cfg.eval_batch_size, device=cfg.device, precision=cfg.precision, lengths=[joint_mod.joint_length(f) for f in fs], progress=cfg.progress, desc=desc)

    train_f = feats(train_c)
    model.label_weights = class_weights([index[c.label] for c in train_c], len(VERACITY_LABELS), cfg.class_weights)
    evaluate = None
    if val_c:
        val_f = feats(val_c)

        def evaluate(m: torch.nn.Module) -> dict[str, float]:
            out = infer(m, val_f, "joint/validate")
            pred = [VERACITY_LABELS[int(np.argmax(lp))] for lp, _ in out]
            return validation_scores([c.label for c in val_c], pred, VERACITY_LABELS)

    result = train(model, train_f, cfg, collate=collate, loss_fn=joint_mod.joint_loss_fn, evaluate=evaluate, checkpoint_dir=_sub(ckpt, "joint"), lengths=[joint_mod.joint_length(f) for f in train_f], desc="joint")
    out = infer(model, feats(test_c), "joint/predict")
    records = []
    for c, (lp, ep) in zip(test_c, out):
        sel = select_evidence(ep.tolist(), opts.threshold, opts.max_evidence)
        records.append(_record(c, fold, "joint", lang, c.label, VERACITY_LABELS, lp, sel, [c.sentences[i] for i in sel]))
    return records, {"model": {"train": result.as_dict(), "windows": stats.as_dict()}}


def run_fold(
    dataset: str | os.PathLike,
    folds: str | os.PathLike,
    fold: int,
    system: str,
    cfg: ModelConfig,
    options: Options,
    lang: str,
    checkpoint_dir: str | os.PathLike | None,
    report: SkipReport | None = None,
    evidence: str | os.PathLike | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Train ``system`` on every fold but ``fold`` and predict ``fold``.

    ``options`` are the system's own (:data:`medfc.experiments.systems.SYSTEM_OPTIONS`); with a
    ``checkpoint_dir`` checkpoints are written there, without one the best weights are kept in memory.
    ``evidence`` is the retrieved-evidence artifact of the system's source (retrieved_*, open_domain_*).
    Returns the prediction records (one per test claim; for ``level_of_evidence`` and ``open_domain_*`` one
    per eligible test claim) and an info dict (training results, sizes, cut counts).
    """
    if system not in SYSTEMS:
        raise ValueError(f"unknown HealthFC system {system!r}; known: {SYSTEMS}")
    if not isinstance(options, SYSTEM_OPTIONS[system]):
        raise TypeError(f"system {system} takes {SYSTEM_OPTIONS[system].__name__}, not {type(options).__name__}")
    report = report or SkipReport(f"healthfc-{system}-fold{fold}")
    claims = load_claims(dataset, lang, report)
    train_c, test_c = split_fold(claims, load_folds(folds), int(fold), report)
    train_c, val_c = stratified_holdout(train_c, options.val_fraction, cfg.seed)
    ckpt = Path(checkpoint_dir) if checkpoint_dir is not None else None
    log.info("HealthFC %s fold %d (%s): %d train, %d validation, %d test claims", system, fold, lang, len(train_c), len(val_c), len(test_c))
    if system == "pipeline":
        records, info = run_pipeline(train_c, val_c, test_c, cfg, options, lang, ckpt, int(fold))
    elif system == "joint":
        records, info = run_joint(train_c, val_c, test_c, cfg, options, lang, ckpt, int(fold))
    else:
        snippets = None
        if evidence_source(system) is not None:
            if evidence is None:
                raise ValueError(f"system {system} needs the evidence file of source {evidence_source(system)}")
            from medfc.healthfc.evidence import evidence_by_claim

            snippets = evidence_by_claim(evidence)
        records, info = run_single(system, train_c, val_c, test_c, cfg, options, lang, ckpt, int(fold), report, snippets)
    gold = [r["label"] for r in records]
    pred = [r["pred_label"] for r in records]
    labels = LOE_LABELS if system == "level_of_evidence" else BINARY_VERACITY_LABELS if system.startswith("open_domain_") else VERACITY_LABELS
    info.update(
        {
            "system": system,
            "fold": int(fold),
            "lang": lang,
            "n_train": len(train_c),
            "n_validation": len(val_c),
            "n_test": len(test_c),
            "n_predictions": len(records),
            "config": cfg.as_dict(),
            "options": options.as_dict(),
            "scores": validation_scores(gold, pred, labels) if records else {},
            "skips": report.as_dict(),
        }
    )
    return records, info


def write_fold(predictions: str | os.PathLike, info_path: str | os.PathLike | None, records: list[dict[str, Any]], info: dict[str, Any]) -> None:
    write_jsonl(predictions, sorted(records, key=lambda r: r["id"]))
    if info_path is not None:
        write_json(info_path, info)
