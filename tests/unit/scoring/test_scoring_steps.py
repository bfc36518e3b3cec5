"""score_files (the CLI's front end) and the python -m medfc.scoring CLI on small JSONL files."""

from __future__ import annotations

import json

import pytest

from medfc.common.io import write_jsonl
from medfc.scoring.__main__ import main
from medfc.common.report import SkipReport
from medfc.scoring.averitec import CLAIM_TYPE_LAMBDAS
from medfc.scoring.files import OPTION_KEYS, score_averitec, score_files
from tests.helpers.config import section


def _options(scorer, **changes):
    """A scorer's options as ``python -m medfc.scoring`` builds them without flags: the schema's defaults."""
    cfg = section("scoring")
    every = {"lambdas": cfg["lambdas"], "max_pred_evidence": cfg["max_pred_evidence"], "per_claim": False,
             "justification_fallback": True, "claim_type_lambdas": list(CLAIM_TYPE_LAMBDAS), "abstain": cfg["abstain"],
             "healthfc": False, **cfg["bootstrap"], "labels": None}
    return {k: every[k] for k in OPTION_KEYS[scorer]} | changes


def _medsnip_files(tmp_path):
    a = [
        {"id": "1", "label": "REFUTED", "unit_verdicts": ["TRUE", "FALSE"]},
        {"id": "2", "label": "REFUTED", "unit_verdicts": ["TRUE", "TRUE"]},
        {"id": "3", "label": "SUPPORTED", "unit_verdicts": ["TRUE"]},
        {"id": "4", "label": "NOT ENOUGH INFORMATION", "unit_verdicts": ["FALSE"]},
        {"id": "5", "label": "SUPPORTED", "pred_label": "maybe"},
        {"id": "5", "label": "SUPPORTED", "pred_label": "TRUE"},
    ]
    b = [
        {"id": "1", "label": "REFUTED", "pred_label": "FALSE"},
        {"id": "2", "label": "REFUTED", "pred_label": "FALSE"},
        {"id": "3", "label": "SUPPORTED", "pred_label": "TRUE"},
        {"id": "4", "label": "NOT ENOUGH INFORMATION", "pred_label": "TRUE"},
    ]
    write_jsonl(tmp_path / "a.jsonl", a)
    write_jsonl(tmp_path / "b.jsonl", b)
    return tmp_path / "a.jsonl", tmp_path / "b.jsonl"


def _score(scorer, inputs, options):
    report = SkipReport(f"scoring.{scorer}")
    s = score_files(scorer, inputs["predictions"], options, compare=inputs.get("compare"), report=report)
    return s, report


def test_medsnip_healthfc_with_skip_report(tmp_path):
    a, _ = _medsnip_files(tmp_path)
    s, report = _score("medsnip", {"predictions": str(a)}, _options("medsnip", healthfc=True))
    # claims 1-3 scored: OR-FALSE gives F, T, T against gold F, F, T -> tp 1, fn 1 -> FF1 2/3
    assert (s["n"], s["n_excluded_nei"], s["ff1"]) == (3, 1, pytest.approx(2 / 3))
    assert report.reasons() == {"bad_record": 1, "duplicate_id": 1}


def test_medsnip_compare_bootstrap(tmp_path):
    a, b = _medsnip_files(tmp_path)
    s, report = _score("medsnip", {"predictions": str(a), "compare": str(b)}, _options("medsnip", healthfc=True, n_resamples=200, seed=3))
    assert (s["a"]["ff1"], s["b"]["ff1"]) == (pytest.approx(2 / 3), 1.0)
    assert s["bootstrap"]["diff"] == pytest.approx(1 / 3)
    assert s["bootstrap"]["n_resamples"] == 200
    assert report.reasons() == {"duplicate_id": 1, "missing_in_compare": 1}  # id 5 is not in b


def test_classify_and_mcnemar(tmp_path):
    write_jsonl(tmp_path / "p.jsonl", [
        {"id": "1", "label": "x", "pred_label": "x"},
        {"id": "2", "label": "y", "pred_label": "x"},
        {"id": "3", "label": "z", "pred_label": "y"},
        {"id": "4", "label": "w", "pred_label": "x"},
    ])
    write_jsonl(tmp_path / "q.jsonl", [
        {"id": "1", "pred_label": "x"}, {"id": "2", "pred_label": "y"}, {"id": "3", "pred_label": "z"}, {"id": "4", "pred_label": "x"},
    ])
    s, report = _score("classify", {"predictions": str(tmp_path / "p.jsonl"), "compare": str(tmp_path / "q.jsonl")},
                       _options("classify", labels=["x", "y", "z"], n_resamples=0))
    assert s["n"] == 3 and s["accuracy"] == pytest.approx(1 / 3)
    assert s["compare"]["accuracy"] == 1.0
    # x/y 1 vs 0, y/z 1 vs 0, x/z 0 vs 0, with statsmodels' zero shift (0 -> 0.5): 2 * 0.5^2/1.5 + 0
    # = 1/3 on df 3 (all label pairs count; 2.0 without the shift)
    assert s["mcnemar_bowker"]["df"] == 3 and s["mcnemar_bowker"]["statistic"] == pytest.approx(1 / 3)
    assert report.reasons() == {"unknown_gold_label": 1}


def test_averitec_records_with_stand_in_metric():
    recs = [
        {"id": "1", "label": "Supported", "pred_label": "Supported", "evidence": ["p"], "gold_evidence": ["g"]},
        {"id": "2", "label": "Refuted", "pred_label": "Refuted", "evidence": [], "gold_evidence": []},
        {"id": "3", "label": "Half true", "pred_label": "Refuted"},
        {"id": "4", "label": "Refuted"},
    ]
    s = score_averitec(recs, _options("averitec", lambdas=[0.25]), metric=lambda p, g: 0.5 if (p, g) == ("p", "g") else 0.0)
    assert s["n"] == 2 and s["evidence_score"] == pytest.approx(0.75)
    assert s["averitec"] == {"0.25": 1.0}
    assert s["n_no_gold_evidence"] == 1


def test_cli_averitec_with_meteor(meteor, tmp_path, capsys):
    write_jsonl(tmp_path / "p.jsonl", [
        {"id": "1", "label": "Supported", "pred_label": "Supported", "evidence": ["the cat is red"],
         "gold_evidence": ["the auto is red", "the car is red"], "justification": "a cat sits", "gold_justification": "the cat sat"},
    ])
    assert main(["averitec", str(tmp_path / "p.jsonl"), "--out", str(tmp_path / "s.json"), "--per-claim"]) == 0
    s = json.loads((tmp_path / "s.json").read_text())
    expected = max(meteor("the cat is red", "the auto is red"), meteor("the cat is red", "the car is red")) / 2
    assert s["evidence_score"] == pytest.approx(expected)
    assert s["justification"]["meteor"] == 0.16666666666666666
    assert s["averitec"]["0.25"] == (1.0 if expected > 0.25 else 0.0)
    assert "AVeriTeC score @ 0.25" in capsys.readouterr().out


def test_cli_averitec_json_official_numbers(meteor, tmp_path, capsys):
    gold = [{"label": "Supported", "justification": "the cat sat", "claim_types": ["Numerical Claim", "Causal Claim"],
             "questions": [{"question": "Is the car red?", "answers": [
                 {"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "It was painted."}]}]}]
    pred = [{"label": "Supported", "questions": [{"question": "Is the auto red?", "answers": [
        {"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "It was painted."}]}]}]  # no justification
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    (tmp_path / "pred.json").write_text(json.dumps(pred))
    args = ["averitec", str(tmp_path / "pred.json"), "--gold", str(tmp_path / "gold.json"), "--out", str(tmp_path / "s.json")]
    assert main(args) == 0
    s = json.loads((tmp_path / "s.json").read_text())
    ev_pred, ev_gold = "Is the auto red? Yes. It was painted.", "Is the car red? Yes. It was painted."
    ev = meteor(ev_pred, ev_gold)
    assert s["question_only_score"] == meteor("Is the auto red?", "Is the car red?")
    assert s["evidence_score"] == ev
    assert s["justification"]["meteor"] == meteor(ev_pred, "the cat sat")  # fallback: the evidence string
    assert s["justification"]["n_from_evidence"] == 1
    assert s["evidence_score_by_claim_type"] == {"0.2": {"Numerical Claim": ev, "Causal Claim": ev},
                                                 "0.3": {"Numerical Claim": ev, "Causal Claim": ev}}
    out = capsys.readouterr().out
    for line in ("question-only score (HU-METEOR)", "justification METEOR (fallback: evidence)",
                 "evidence score @ 0.3, Causal Claim", "justification @ 0.25"):
        assert line in out
    assert main(args + ["--strict-justification"]) == 0
    strict = json.loads((tmp_path / "s.json").read_text())["justification"]
    assert (strict["meteor"], strict["fallback"], strict["n_from_evidence"]) == (0.0, False, 0)
    assert "justification METEOR (strict)" in capsys.readouterr().out


def test_cli_classify_folds_and_errors(tmp_path, capsys):
    for k, preds in enumerate((["a", "b"], ["a", "a"])):
        write_jsonl(tmp_path / f"f{k}.jsonl", [{"id": str(i), "label": g, "pred_label": p} for i, (g, p) in enumerate(zip("ab", preds))])
    assert main(["classify", str(tmp_path / "f0.jsonl"), str(tmp_path / "f1.jsonl"), "--out", str(tmp_path / "s.json")]) == 0
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["aggregate"]["accuracy"]["mean"] == pytest.approx(0.75) and len(s["folds"]) == 2
    assert "0.7500 ±" in capsys.readouterr().out
    # one file: the bootstrap intervals, printed and in the JSON (0 resamples: none)
    assert main(["classify", str(tmp_path / "f0.jsonl"), "--n-resamples", "500", "--seed", "3", "--out", str(tmp_path / "one.json")]) == 0
    one = json.loads((tmp_path / "one.json").read_text())
    assert one["ci"]["accuracy"] == {"low": 1.0, "high": 1.0} and (one["ci"]["n_resamples"], one["ci"]["seed"]) == (500, 3)
    assert "macro-F1 95% CI" in capsys.readouterr().out
    assert main(["classify", str(tmp_path / "f0.jsonl"), "--n-resamples", "0", "--out", str(tmp_path / "none.json")]) == 0
    assert "ci" not in json.loads((tmp_path / "none.json").read_text())
    assert main(["medsnip", str(tmp_path / "missing.jsonl")]) == 1


def test_scorer_options_have_no_fallbacks_a_missing_or_unknown_key_is_named(tmp_path):
    a, _ = _medsnip_files(tmp_path)
    options = {k: v for k, v in _options("medsnip").items() if k != "seed"} | {"sede": 1}
    with pytest.raises(ValueError, match=r"medsnip options: missing seed; unknown sede"):
        _score("medsnip", {"predictions": str(a)}, options)


def test_cli_defaults_are_the_schemas(tmp_path):
    """Without flags the CLI scores with the schema's scoring.bootstrap (n_resamples, seed, metric)."""
    a, b = _medsnip_files(tmp_path)
    boot = section("scoring.bootstrap")
    assert main(["medsnip", str(a), "--compare", str(b), "--healthfc", "--out", str(tmp_path / "s.json")]) == 0
    s = json.loads((tmp_path / "s.json").read_text())["bootstrap"]
    assert (s["n_resamples"], s["seed"], s["metric"]) == (boot["n_resamples"], boot["seed"], boot["metric"])
    assert main(["classify", str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "c.json")]) == 0
    ci = json.loads((tmp_path / "c.json").read_text())["ci"]
    assert (ci["n_resamples"], ci["seed"]) == (boot["n_resamples"], boot["seed"])
