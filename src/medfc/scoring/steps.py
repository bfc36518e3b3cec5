"""Workflow steps of the scoring stage (workflow/rules/scoring.smk): one scores JSON per prediction file (one per
HealthFC run or pairs-dataset model; docs/scoring.md); unscorable records are skipped with a counted reason
(``report``, and ``skipped`` in the scores)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

import numpy as np

from medfc.common.io import read_jsonl, write_json
from medfc.common.jsontypes import JSONObject
from medfc.common.labels import BINARY_VERACITY_LABELS, NOT_ENOUGH_INFO
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.scoring import averitec, classification, medsnip
from medfc.scoring.options import EvidenceScoring, HealthFCScoreOptions, PairsScoreOptions

log = logging.getLogger(__name__)


def read_predictions(path: str | os.PathLike, report: SkipReport) -> list[JSONObject]:
    """Prediction records, each id once; one without id or gold label, or a repeated id, is skipped."""
    records = []
    seen = set()
    for r in read_jsonl(path):
        rid = str(r.get("id"))
        if r.get("id") is None or r.get("label") is None:
            report.skip(rid, "bad_record", "missing id or label")
        elif rid in seen:
            report.skip(rid, "duplicate_id")
        else:
            seen.add(rid)
            records.append(r)
    return records


def evidence_selection_scores(records: Sequence[Mapping[str, object]],
                              n_sentences: Mapping[str, int] | None = None) -> dict[str, float | int | dict[str, float]]:
    """Sentence-level evidence selection pooled over a fold's claims: P/R/F1 of the evidence class; with
    ``n_sentences`` (claim id → candidate sentences) the macro average over evidence / other (the paper's Table 3
    "F1 Macro"); ``claim_*``: per-claim P/R/F1 averaged over the claims with gold evidence."""
    tp = fp = fn = tn = 0
    per_claim = []  # P/R/F1 of each claim with gold evidence
    for r in records:
        gold = set(int(i) for i in r.get("evidence_ids") or [])
        pred = set(int(i) for i in r.get("pred_evidence_ids") or [])
        t, p_, n_ = len(gold & pred), len(pred - gold), len(gold - pred)
        tp, fp, fn = tp + t, fp + p_, fn + n_
        if n_sentences is not None:
            tn += int(n_sentences.get(str(r["id"]), len(gold | pred))) - len(gold | pred)
        if gold:
            per_claim.append(classification.f1_from_counts(t, p_, n_))
    p, rc, f = classification.f1_from_counts(tp, fp, fn)
    means = [float(np.mean([c[i] for c in per_claim])) if per_claim else 0.0 for i in range(3)]
    out: dict[str, float | int | dict[str, float]] = {
        "precision": p, "recall": rc, "f1": f, "tp": tp, "fp": fp, "fn": fn, "n_claims": len(records),
        "claim_precision": means[0], "claim_recall": means[1], "claim_f1": means[2],
        "n_claims_with_gold": len(per_claim)}
    if n_sentences is not None:
        po, ro, fo = classification.f1_from_counts(tn, fn, fp)  # the "other" class: its TP are our TN
        out.update({"tn": tn, "n_sentences": tp + fp + fn + tn, "macro_precision": (p + po) / 2, "macro_recall": (rc + ro) / 2,
                    "macro_f1": (f + fo) / 2, "other": {"precision": po, "recall": ro, "f1": fo}})
    return out


def fever_strict(records: Sequence[Mapping[str, object]]) -> dict[str, float | int]:
    """FEVER-style strict score: the label is right AND every gold evidence sentence (HealthFC's one set per claim)
    was selected; a NOT ENOUGH INFO claim, or one without gold evidence, needs only the right label (as in FEVER)."""
    hits = []
    n_label_only = 0
    for r in records:
        right = r.get("label") == r.get("pred_label")
        gold = set(int(i) for i in r.get("evidence_ids") or [])
        label_only = r.get("label") == NOT_ENOUGH_INFO or not gold
        n_label_only += label_only
        hits.append(right if label_only else right and gold <= set(int(i) for i in r.get("pred_evidence_ids") or []))
    return {"strict": float(np.mean(hits)) if hits else 0.0, "n": len(hits), "n_label_only": n_label_only}


def score_healthfc(records: Sequence[Mapping[str, object]], system: str, *, labels: Sequence[str], evidence: EvidenceScoring | None, abstain: str,
                   n_sentences: Mapping[str, int] | None = None) -> dict[str, object]:
    """All scores of one HealthFC prediction file (one system, one fold): P/R/F1 over ``labels``, the classes its
    system predicts; with ``evidence`` also evidence selection, FEVER strict and AVeriTeC; MedSNIP FF1 over the
    supported / refuted claims where the system predicts verdicts."""
    gold = [str(r["label"]) for r in records]
    pred = [str(r["pred_label"]) for r in records]
    out: dict[str, object] = {"kind": "healthfc", "system": system, "n": len(records),
                           "veracity": classification.classification_scores(gold, pred, labels)}
    if evidence is not None:
        out["evidence"] = evidence_selection_scores(records, n_sentences)
        out["fever"] = fever_strict(records)
        out["averitec"] = {**averitec.selection_scores(records, evidence.lambdas, evidence.max_pred_evidence),
                           "reported_lambda": averitec.lambda_key(evidence.reported_lambda)}
    if set(BINARY_VERACITY_LABELS) <= set(labels):  # a verdict, not a level of evidence
        kept, g2, p2 = medsnip.healthfc_binary(records)
        out["medsnip"] = {**medsnip.binary_scores(g2, p2, abstain), "n_excluded_nei": len(records) - len(kept),
                          "nei_predictions": medsnip.healthfc_nei_predictions(records, abstain)}
    return out


def _write(scores: dict[str, object], report: SkipReport, outputs: StepFiles) -> dict[str, object]:
    scores["skipped"] = {"n": len(report.skipped), "by_reason": report.reasons()}
    write_json(outputs["scores"], scores)
    report.write(outputs["report"])
    log.info("scores written to %s (%d records skipped)", outputs["scores"], len(report.skipped))
    return scores


def healthfc(inputs: StepFiles, outputs: StepFiles, options: HealthFCScoreOptions) -> dict[str, object]:
    """``predictions`` (+ the ``dataset``: each claim's candidate sentences) → ``scores`` (JSON) + ``report``."""
    report = SkipReport(f"scoring.healthfc.{options.system}")
    records = read_predictions(inputs["predictions"], report)
    n_sentences = {str(r["id"]): len(r.get(f"sentences_{options.lang}") or []) for r in read_jsonl(inputs["dataset"])}
    scores = score_healthfc(records, options.system, labels=options.labels, evidence=options.evidence, abstain=options.abstain,
                            n_sentences=n_sentences)
    return _write(scores, report, outputs)


def pairs(inputs: StepFiles, outputs: StepFiles, options: PairsScoreOptions) -> dict[str, object]:
    """A pairs dataset's ``predictions`` → ``scores`` (JSON) + ``report``: accuracy and macro / per-class P/R/F1 over its
    classes on the test split (a missing prediction counts as wrong), the bootstrap intervals of accuracy and macro-F1
    (``ci``)."""
    report = SkipReport(f"scoring.{options.dataset}.{options.system}")
    recs = [r for r in read_predictions(inputs["predictions"], report) if r.get("split", "test") == "test"]
    gold = [str(r["label"]) for r in recs]
    pred = [str(r["pred_label"]) if r.get("pred_label") is not None else "<none>" for r in recs]
    classes = list(options.classes)
    return _write({"kind": options.dataset, "system": options.system, "split": "test", "n": len(recs),
                   "n_no_prediction": sum(r.get("pred_label") is None for r in recs),
                   **classification.classification_scores(gold, pred, classes),
                   "ci": classification.bootstrap_intervals(gold, pred, classes, n_resamples=options.n_resamples,
                                                            seed=options.seed)},
                  report, outputs)
