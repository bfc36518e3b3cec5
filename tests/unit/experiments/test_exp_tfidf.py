"""The TF-IDF + logistic regression baseline: learns a constructed separable set, picks C on validation,
and runs every HealthFC system but joint and the CliniFact classifier."""

from __future__ import annotations

import numpy as np
import pytest

from medfc.experiments import clinifact as CF
from medfc.experiments import healthfc as H
from medfc.experiments.classifier import Example
from medfc.experiments.systems import SYSTEM_OPTIONS, system_option_keys
from medfc.experiments.tfidf import TfidfOptions, fit_tfidf, is_tfidf
from tests.helpers.config import section

LABELS = ["evidence", "inconclusive", "NEI"]
WORDS = {"evidence": "significant", "inconclusive": "contradictory", "NEI": "placebo"}


def tfidf_options(**kw) -> TfidfOptions:
    return TfidfOptions.from_mapping(section("experiments.tfidf", model="sklearn:tfidf", **kw))


def _pairs(counts, claim="does it work"):
    return [Example(f"{claim} {k}", f"the trial was {WORDS[lab]} overall", lab) for lab, n in counts.items() for k in range(n)]


def test_tfidf_learns_a_separable_set_and_picks_c_on_validation():
    train = _pairs({"evidence": 20, "inconclusive": 5, "NEI": 5})
    val = _pairs({"evidence": 2, "inconclusive": 2, "NEI": 2}, claim="another claim")
    test = [Example("a new claim", f"in short: {WORDS[lab]}", lab) for lab in LABELS]
    fitted = fit_tfidf(tfidf_options(C_grid=[0.01, 1.0, 10.0]), LABELS, train, val)
    probs = fitted.probs(test)
    assert probs.shape == (3, 3) and np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert [LABELS[i] for i in probs.argmax(axis=1)] == LABELS
    info = fitted.result.as_dict()
    assert set(info["validation"]) == {"0.01", "1", "10"}
    best = max(v["macro_f1"] for v in info["validation"].values())
    assert info["C"] == next(float(c) for c, v in info["validation"].items() if v["macro_f1"] == best)  # the first best
    assert info["n_train"] == 36 and info["n_features"] > 0  # refit on the 30 training + 6 validation examples
    assert fitted.probs([]).shape == (0, 3)
    assert is_tfidf("sklearn:tfidf") and not is_tfidf("offline:minilm")
    with pytest.raises(ValueError, match="single class"):
        fit_tfidf(tfidf_options(), LABELS, _pairs({"evidence": 3}))


def _system_options(system):
    hx = section("experiments.healthfc")
    return SYSTEM_OPTIONS[system].from_mapping({k: hx[k] for k in system_option_keys(system)})


@pytest.mark.parametrize("system", ["pipeline", "oracle", "claims_only", "gold_explanations", "level_of_evidence"])
def test_every_healthfc_system_but_joint_runs_with_tfidf(system, healthfc_data, healthfc_recs):
    ds, folds = healthfc_data
    records, info = H.run_fold(ds, folds, 1, system, tfidf_options(), _system_options(system), "en", None)
    assert records and {r["system"] for r in records} == {system}
    assert all(r["pred_label"] == max(r["probs"], key=r["probs"].get) for r in records)
    assert info["config"]["model"] == "sklearn:tfidf"
    if system == "pipeline":
        assert all(len(r["pred_evidence_ids"]) <= 5 for r in records) and info["evidence_model"]["n_train_pairs"] > 0


def test_joint_needs_an_encoder(healthfc_data):
    ds, folds = healthfc_data
    with pytest.raises(ValueError, match="joint system needs an encoder"):
        H.run_fold(ds, folds, 1, "joint", tfidf_options(), _system_options("joint"), "en", None)


def test_clinifact_with_tfidf(clinifact_data):
    records, info = CF.run_discriminative(clinifact_data["train"], clinifact_data["validation"], clinifact_data["test"], tfidf_options(),
                                          checkpoint_dir=None, include_title=True, predict_splits=["test"])
    assert len(records) == 6 and {r["split"] for r in records} == {"test"}
    assert info["train"]["C"] in section("experiments.tfidf")["C_grid"] and info["encode"] == {"truncated": 0}
