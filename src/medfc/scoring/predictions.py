"""Scores of the workflow's prediction files (one per HealthFC run or pairs-dataset model; docs/scoring.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from medfc.common.io import read_jsonl
from medfc.common.jsontypes import JSONObject
from medfc.common.labels import BINARY_VERACITY_LABELS, CLINIFACT_LABELS, NOT_ENOUGH_INFO
from medfc.common.report import SkipReport
from medfc.scoring import averitec, classification, medsnip
from medfc.scoring.options import EvidenceScoring


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


def sentence_counts(dataset: str | os.PathLike, lang: str) -> dict[str, int]:
    """Claim id → number of candidate sentences (in ``lang``) in the HealthFC dataset."""
    return {str(r["id"]): len(r.get(f"sentences_{lang}") or []) for r in read_jsonl(dataset)}


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
        if r.get("label") == NOT_ENOUGH_INFO or not gold:
            n_label_only += 1
            hits.append(right)
        else:
            hits.append(right and gold <= set(int(i) for i in r.get("pred_evidence_ids") or []))
    return {"strict": float(np.mean(hits)) if hits else 0.0, "n": len(hits), "n_label_only": n_label_only}


def score_healthfc(records: Sequence[Mapping[str, object]], system: str, *, labels: Sequence[str], evidence: EvidenceScoring | None, abstain: str,
                   n_sentences: Mapping[str, int] | None = None, metric: averitec.PairMetric | None = None) -> dict[str, object]:
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
        out["averitec"] = {**averitec.selection_scores(records, evidence.lambdas, evidence.max_pred_evidence, metric),
                           "reported_lambda": averitec.lambda_key(evidence.reported_lambda)}
    if set(BINARY_VERACITY_LABELS) <= set(labels):  # a verdict, not a level of evidence
        kept, g2, p2 = medsnip.healthfc_binary(records)
        out["medsnip"] = {**medsnip.binary_scores(g2, p2, abstain), "n_excluded_nei": len(records) - len(kept),
                          "nei_predictions": medsnip.healthfc_nei_predictions(records, abstain)}
    return out


def score_pairs(records: Sequence[Mapping[str, object]], system: str, split: str = "test", *, dataset: str = "clinifact",
                classes: Sequence[str] = CLINIFACT_LABELS, n_resamples: int, seed: int) -> dict[str, object]:
    """Accuracy and macro / per-class P/R/F1 over ``classes`` of one pairs dataset's predictions on ``split`` (a
    missing prediction counts as wrong), and the bootstrap intervals of accuracy and macro-F1 (``ci``)."""
    recs = [r for r in records if r.get("split", split) == split]
    scored = [r for r in recs if r.get("pred_label") is not None]
    gold = [str(r["label"]) for r in recs]
    pred = [str(r["pred_label"]) if r.get("pred_label") is not None else "<none>" for r in recs]
    return {"kind": dataset, "system": system, "split": split, "n": len(recs), "n_no_prediction": len(recs) - len(scored),
            **classification.classification_scores(gold, pred, list(classes)),
            "ci": classification.bootstrap_intervals(gold, pred, list(classes), n_resamples=n_resamples, seed=seed)}
