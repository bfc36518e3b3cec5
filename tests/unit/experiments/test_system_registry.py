"""The HealthFC systems are one registry (medfc.experiments.healthfc.systems.REGISTRY): a test-only system registered
here, and nothing else, is a step's system (its name checked against the registry, its options' class chosen
there) and is trained and predicted by the ``healthfc_experiment`` step with TF-IDF."""

from __future__ import annotations

import pytest

from medfc.common.io import read_json, read_jsonl
from medfc.common.options import OptionsError
from medfc.experiments.models.options import TfidfOptions
from medfc.experiments.steps import healthfc_experiment
from medfc.experiments.healthfc.systems import REGISTRY, SYSTEMS, VERACITY_LABELS, HealthFCFoldOptions, SingleOptions, System
from tests.helpers.config import call_step, section
from tests.helpers.experiment_data import healthfc_data, healthfc_options, healthfc_recs  # noqa: F401

# the test-only system: one classifier on the article's explanation alone (no claim)
EXPLANATION_ONLY = System("explanation_only", SingleOptions, reads=lambda c, o, ev: (c.explanation, None),
                          shows=lambda c, o, ev: [])


def tfidf() -> TfidfOptions:
    return TfidfOptions.from_mapping(section("experiments.tfidf", model="sklearn:tfidf", selection="validation", C_grid=[1.0]))


def test_a_system_registered_in_a_test_is_typed_and_run_by_the_healthfc_step(monkeypatch, healthfc_data, healthfc_recs, tmp_path):
    ds, folds = healthfc_data
    with pytest.raises(OptionsError, match=r"options\.system: 'explanation_only' is not one of \['pipeline', "):
        HealthFCFoldOptions.from_mapping({**healthfc_options("oracle", tfidf(), fold=1).to_mapping(), "system": "explanation_only"},
                                         where="options")
    monkeypatch.setitem(REGISTRY, "explanation_only", EXPLANATION_ONLY)
    options = healthfc_options("explanation_only", tfidf(), fold=1)
    assert options.system == "explanation_only" and isinstance(options.system_options, SingleOptions)
    out = {"predictions": str(tmp_path / "predictions.jsonl"), "info": str(tmp_path / "info.json")}
    call_step(healthfc_experiment, {"dataset": str(ds), "folds": str(folds)}, out, options.to_mapping())
    records, info = list(read_jsonl(out["predictions"])), read_json(out["info"])
    data = {r["id"]: r for r in healthfc_recs}
    assert sorted(r["id"] for r in records) == sorted(f"c{i:02d}" for i in range(12) if i % 2 == 1)  # fold 1: every claim
    for r in records:
        assert r["system"] == "explanation_only" and r["fold"] == 1 and r["label"] == data[r["id"]]["label"]
        assert sorted(r["probs"]) == sorted(VERACITY_LABELS) and r["evidence"] == [] and r["pred_evidence_ids"] is None
    assert info["system"] == "explanation_only" and info["n_predictions"] == len(records)
    assert "explanation_only" not in SYSTEMS  # the import-time tuple: only the registry was touched
