"""Scores of the workflow's prediction files on hand-made predictions with known answers, and the
scoring steps as the rules call them."""

from __future__ import annotations

import json

import pytest

from medfc.common.io import read_json, write_jsonl
from medfc.common.labels import CLINIFACT_LABELS, LOE_LABELS, VERACITY_LABELS
from medfc.scoring import averitec, steps
from medfc.scoring.steps import evidence_selection_scores, fever_strict, score_healthfc
from tests.helpers.config import call_step, section


def exact(pred: str, gold: str) -> float:
    """A stand-in for METEOR: 1 for the same sentence, else 0."""
    return 1.0 if pred == gold else 0.0


def _options(system, **evidence):
    """The scoring step's options as the rule passes them (evidence keys only for pipeline / joint)."""
    sc = section("scoring")
    ev = {**{k: sc[k] for k in ("lambdas", "reported_lambda", "max_pred_evidence")}, **evidence} if system in ("pipeline", "joint") else None
    return {"system": system, "lang": "en", "labels": list(VERACITY_LABELS), "abstain": sc["abstain"], "evidence": ev}


def _rec(i, label, pred, gold_ids, pred_ids, sents=("s0", "s1", "s2", "s3")):
    return {"id": f"c{i}", "label": label, "pred_label": pred, "evidence_ids": list(gold_ids),
            "pred_evidence_ids": None if pred_ids is None else list(pred_ids),
            "gold_evidence": [sents[j] for j in gold_ids], "evidence": [] if pred_ids is None else [sents[j] for j in pred_ids]}


RECORDS = [
    _rec(0, "SUPPORTED", "SUPPORTED", [0, 1], [0, 1, 2]),   # all gold found, right  -> strict 1
    _rec(1, "REFUTED", "REFUTED", [2], [3]),                # gold missed            -> strict 0
    _rec(2, "NOT ENOUGH INFO", "NOT ENOUGH INFO", [], []),  # NEI: label only        -> strict 1
    _rec(3, "REFUTED", "SUPPORTED", [1], [1]),              # wrong label            -> strict 0
]


def test_evidence_selection_fever_and_averitec_scores():
    counts = {"c0": 4, "c1": 4, "c2": 4, "c3": 4}
    ev = evidence_selection_scores(RECORDS, counts)
    # TP 3 (c0: 0,1; c3: 1), FP 2 (c0: 2; c1: 3), FN 1 (c1: 2), TN 16 - 6 = 10
    assert (ev["tp"], ev["fp"], ev["fn"], ev["tn"]) == (3, 2, 1, 10)
    assert ev["precision"] == pytest.approx(3 / 5) and ev["recall"] == pytest.approx(3 / 4)
    other_p, other_r = 10 / 11, 10 / 12
    assert ev["macro_precision"] == pytest.approx((3 / 5 + other_p) / 2)
    assert ev["macro_recall"] == pytest.approx((3 / 4 + other_r) / 2)
    assert ev["n_claims_with_gold"] == 3
    fever = fever_strict(RECORDS)
    assert fever == {"strict": 0.5, "n": 4, "n_label_only": 1}
    av = averitec.selection_scores(RECORDS, [0.25, 0.5], None, metric=exact)
    # evidence scores: c0 2/2 = 1, c1 0, c2 1 (no gold, no prediction), c3 1
    assert av["evidence_score"] == pytest.approx(0.75)
    assert av["score"] == {"0.25": 0.5, "0.5": 0.5}  # c0 and c2 (c3 has the wrong label)
    assert av["n_no_gold_evidence"] == 1


def test_score_healthfc_file_with_medsnip_and_classification(tmp_path, monkeypatch):
    preds = tmp_path / "p.jsonl"
    write_jsonl(preds, [dict(r, system="pipeline") for r in RECORDS] + [dict(RECORDS[0])])  # a duplicate id
    ds = tmp_path / "ds.jsonl"
    write_jsonl(ds, [{"id": f"c{i}", "sentences_en": ["a", "b", "c", "d"]} for i in range(4)])
    out = {"scores": str(tmp_path / "s.json"), "report": str(tmp_path / "r.json")}
    monkeypatch.setattr(averitec, "_default_metric", lambda: exact)  # no NLTK data needed here
    s = call_step(steps.healthfc, {"predictions": str(preds), "dataset": str(ds)}, out, _options("pipeline", lambdas=[0.25]))
    assert s["n"] == 4 and s["skipped"]["by_reason"] == {"duplicate_id": 1}
    assert s["veracity"]["accuracy"] == pytest.approx(0.75)
    assert s["evidence"]["n_sentences"] == 16 and s["fever"]["strict"] == 0.5
    # MedSNIP over the 3 supported/refuted claims: FALSE (refuted) is positive: TP 1 (c1), FN 1 (c3), FP 0
    assert s["medsnip"]["n_excluded_nei"] == 1
    nei = s["medsnip"]["nei_predictions"]  # how the NOT ENOUGH INFO claim was predicted (not scored)
    assert (nei["n"], nei["n_pred_true"], nei["n_pred_false"], nei["n_pred_none"]) == (1, 0, 0, 1)  # predicted NOT ENOUGH INFO
    assert s["medsnip"]["ff1"] == pytest.approx(2 / 3)
    assert read_json(out["scores"]) == json.loads(json.dumps(s))


def test_score_non_selecting_and_level_of_evidence_systems(tmp_path):
    oracle = [dict(r, pred_evidence_ids=None) for r in RECORDS]
    s = score_healthfc(oracle, "oracle", labels=VERACITY_LABELS, evidence=None, abstain="drop")
    assert "evidence" not in s and "fever" not in s and "averitec" not in s and "medsnip" in s
    loe = [{"id": "a", "label": "high", "pred_label": "low", "pred_evidence_ids": None}, {"id": "b", "label": "low", "pred_label": "low", "pred_evidence_ids": None}]
    s = score_healthfc(loe, "level_of_evidence", labels=LOE_LABELS, evidence=None, abstain="drop")
    assert s["veracity"]["confusion"]["labels"] == LOE_LABELS and s["veracity"]["accuracy"] == 0.5 and "medsnip" not in s


def test_score_clinifact_counts_missing_predictions_as_wrong(tmp_path):
    preds = tmp_path / "p.jsonl"
    write_jsonl(preds, [{"id": "1", "split": "test", "label": "evidence", "pred_label": "evidence"},
                        {"id": "2", "split": "test", "label": "NEI", "pred_label": None},
                        {"id": "3", "split": "validation", "label": "NEI", "pred_label": "NEI"}])
    s = call_step(steps.pairs, {"predictions": str(preds)}, {"scores": str(tmp_path / "s.json"), "report": str(tmp_path / "r.json")},
                  {"dataset": "clinifact", "classes": CLINIFACT_LABELS, "system": "zero_shot", "n_resamples": 500, "seed": 0})
    assert s["n"] == 2 and s["n_no_prediction"] == 1 and s["accuracy"] == 0.5
    # two test pairs, one right: a resample holds 0, 1 or 2 right ones
    assert s["ci"]["accuracy"] == {"low": 0.0, "high": 1.0} and s["ci"]["n_resamples"] == 500
    assert s["per_class"]["NEI"]["recall"] == 0.0


def test_healthfc_scores_say_how_the_not_enough_info_claims_were_predicted():
    recs = [_rec(0, "SUPPORTED", "SUPPORTED", [], []), _rec(1, "NOT ENOUGH INFO", "SUPPORTED", [], []),
            _rec(2, "NOT ENOUGH INFO", "REFUTED", [], []), _rec(3, "NOT ENOUGH INFO", "REFUTED", [], []),
            _rec(4, "NOT ENOUGH INFO", "NOT ENOUGH INFO", [], [])]
    s = score_healthfc(recs, "oracle", labels=VERACITY_LABELS, evidence=None, abstain="drop")
    nei = s["medsnip"]["nei_predictions"]
    assert s["medsnip"]["n_excluded_nei"] == 4 and s["medsnip"]["n"] == 1
    assert (nei["n"], nei["n_pred_true"], nei["n_pred_false"], nei["n_pred_none"]) == (4, 1, 2, 1)
    assert (nei["share_true"], nei["share_false"]) == (0.25, 0.5)
