"""Gradient boosting over CliniFact features, the features themselves, and ensembles of runs."""

from __future__ import annotations

import pytest

from medfc.common.io import write_jsonl
from medfc.common.report import SkipReport
from medfc.experiments import clinifact_features as F
from medfc.experiments.examples import Example
from medfc.experiments.ensemble import average_predictions
from medfc.experiments.gbm import fit_gbm
from medfc.experiments.options import GbmOptions
from tests.helpers.config import section

LABELS = ["evidence", "inconclusive", "NEI"]
CLAIM = "Drug A is superior to Placebo in terms of Blood Pressure at 8 weeks"


def test_claims_split_into_the_template_parts():
    c = F.parse_claim(CLAIM)
    assert (c.intervention, c.test_type, c.comparator, c.outcome) == ("Drug A", "superior", "Placebo", "Blood Pressure at 8 weeks")
    assert F.parse_claim("Drug A is non-inferior or equivalent to B in terms of pain").test_type == "non-inferior or equivalent"
    assert F.parse_claim("not a template claim").test_type == "unknown"


@pytest.mark.parametrize("text, expected", [
    ("The difference was significant (p < 0.001).", [("<", 0.001)]),
    ("P = .03 for pain; p-value of 0.2 for sleep.", [("=", 0.03), ("=", 0.2)]),
    ("no difference (P>0.05)", [(">", 0.05)]),
    ("p = 2 x 10-4", [("=", 0.0002)]),
    ("We enrolled 120 patients.", []),
])
def test_pvalues_are_read_with_their_operator(text, expected):
    assert [(op, pytest.approx(v)) for op, v in F.pvalues(text)] == expected


def test_the_pvalue_of_the_outcome_clause_decides():
    abstract = ("RESULTS: Sleep quality did not differ (p = 0.40), while blood pressure fell more with drug A (p < 0.01).\n"
                "CONCLUSIONS: Drug A lowers blood pressure.")
    f = F.features(CLAIM, "A trial of drug A", abstract, F.fit_idf([abstract]))
    assert f["pmatch_sig"] == 1.0 and f["pmatch_first_sig"] == 0.0  # the outcome's clause, not the first p-value
    assert f["n_p"] == 2 and f["n_p_sig"] == 1 and f["type=superior"] == 1.0
    assert set(f) == set(F.features("", "", "", F.fit_idf([])))  # every pair gets the same keys


def _pair(label: str, k: int) -> Example:
    abstract = {
        "evidence": f"RESULTS: Blood pressure fell significantly more with drug A than placebo (p < 0.00{k % 9 + 1}).",
        "inconclusive": f"RESULTS: Blood pressure did not differ between drug A and placebo (p = 0.{k % 5 + 3}).",
        "NEI": f"BACKGROUND: This protocol describes a trial that will enrol {100 + k} adults with hypertension.",
    }[label]
    return Example(CLAIM, abstract, label, prefix_b="Drug A in hypertension")


def test_gbm_learns_a_constructed_separable_set():
    train = [_pair(lab, k) for lab in LABELS for k in range(12)]
    test = [_pair(lab, k) for lab in LABELS for k in (40, 41)]
    options = GbmOptions.from_mapping(section("experiments.gbm", model="sklearn:gbm", seeds=[0, 1], min_samples_leaf=2))
    fitted = fit_gbm(options, LABELS, train)
    probs = fitted.probs(test)
    assert [LABELS[i] for i in probs.argmax(axis=1)] == [lab for lab in LABELS for _ in (40, 41)]
    assert probs.shape == (6, 3) and abs(float(probs.sum(axis=1).mean()) - 1) < 1e-6
    assert fitted.result.as_dict()["n_train"] == 36 and len(fitted.models) == 2


def test_an_ensemble_averages_the_members_probabilities(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(a, [{"id": "1", "label": "evidence", "pred_label": "evidence", "probs": {"evidence": 0.6, "inconclusive": 0.3, "NEI": 0.1}},
                    {"id": "2", "label": "NEI", "pred_label": "NEI", "probs": {"evidence": 0.2, "inconclusive": 0.2, "NEI": 0.6}},
                    {"id": "3", "label": "NEI", "pred_label": "NEI", "probs": {"evidence": 0.2, "inconclusive": 0.2, "NEI": 0.6}}])
    write_jsonl(b, [{"id": "1", "label": "evidence", "pred_label": "inconclusive", "probs": {"evidence": 0.2, "inconclusive": 0.7, "NEI": 0.1}},
                    {"id": "2", "label": "NEI", "pred_label": None, "probs": {"evidence": None, "inconclusive": None, "NEI": None}},
                    {"id": "4", "label": "NEI", "pred_label": "NEI", "probs": {"evidence": 0.0, "inconclusive": 0.0, "NEI": 1.0}}])
    report = SkipReport("t")
    out = average_predictions([a, b], [1.0, 3.0], ["x", "y"], report)
    # id 1: (0.6 + 3 * 0.2) / 4 = 0.3 evidence, (0.3 + 3 * 0.7) / 4 = 0.6 inconclusive
    assert out == [{"id": "1", "label": "evidence", "pred_label": "inconclusive", "probs": {"evidence": 0.3, "inconclusive": 0.6, "NEI": 0.1}}]
    assert report.reasons() == {"member_without_prediction": 2, "not_in_first_member": 1}
    with pytest.raises(ValueError, match="2 prediction files for 1 members"):
        average_predictions([a, b], [1.0], ["x"], report)
