from __future__ import annotations

import json

import pytest

from medfc.common.io import read_jsonl
from medfc.common.labels import LOE_LABELS
from medfc.common.report import SkipReport
from medfc.common.options import OptionsError
from medfc.experiments.healthfc import runs as H
from medfc.experiments.healthfc.systems import SYSTEMS, HealthFCFoldOptions, evidence_source, system_option_keys
from medfc.experiments.healthfc.systems import system as system_spec
from tests.helpers.config import section
from tests.helpers.experiment_data import healthfc_options


def system_options(system, **kw):
    """A system's own options as its rule passes them (the schema's experiments.healthfc defaults)."""
    hx = section("experiments.healthfc")
    return system_spec(system).options.from_mapping({**{k: hx[k] for k in system_option_keys(system)}, **kw})


def test_select_evidence_threshold_top_k_document_order():
    probs = [0.9, 0.4, 0.51, 0.99, 0.6, 0.7, 0.8, 0.55]
    assert H.select_evidence(probs, 0.5, 5) == [0, 3, 4, 5, 6]
    assert H.select_evidence(probs, 0.5, 2) == [0, 3]
    assert H.select_evidence([0.2, 0.5], 0.5, 5) == []


def test_evidence_examples_keep_all_positives_and_sample_negatives():
    claim = H.Claim("x", "does zinc shorten colds?", "SUPPORTED", "high", "", [f"s{i}" for i in range(20)], [3, 7])
    ex = H.evidence_examples([claim], neg_ratio=2, seed=0)
    assert [e.text_a for e in ex if e.label == "evidence"] == ["s3", "s7"]
    assert sum(e.label == "other" for e in ex) == 4
    assert all(e.text_b == claim.claim for e in ex)
    assert len(H.evidence_examples([claim], neg_ratio=None, seed=0)) == 20
    assert [e.text_a for e in H.evidence_examples([claim], 2, 0)] == [e.text_a for e in H.evidence_examples([claim], 2, 0)]


def test_load_claims_skips_bad_records_with_reasons(tmp_path, healthfc_recs):
    recs = healthfc_recs[:3]
    recs[1]["label"] = "MAYBE"
    recs[2]["evidence_ids"] = [0, 99]
    recs.append(dict(recs[0]))
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    report = SkipReport("t")
    claims = H.load_claims(path, "en", report)
    assert [c.id for c in claims] == ["c00", "c02"]
    assert report.reasons() == {"duplicate_id": 1, "unknown_label": 1}
    assert report.counts["evidence_id_out_of_range"] == 1 and claims[1].evidence_ids == [0]
    de = H.load_claims(path, "de")
    assert de[0].claim == "hilft kaffee gegen erkältungen?" and de[0].sentences == recs[0]["sentences_de"]


def test_stratified_holdout_keeps_labels():
    cs = [H.Claim(f"c{i}", "x", H.VERACITY_LABELS[i % 3], "", "", [], []) for i in range(30)]
    keep, held = H.stratified_holdout(cs, 0.2, 0)
    assert len(held) == 6 and {c.label for c in held} == set(H.VERACITY_LABELS)
    assert sorted(c.id for c in keep + held) == sorted(c.id for c in cs)


# the retrieved-evidence systems: test_exp_tfidf.py
@pytest.mark.parametrize("system", [s for s in SYSTEMS if evidence_source(s) is None])
def test_every_system_runs_a_fold_end_to_end(system, healthfc_data, healthfc_recs, train_cfg, tmp_path):
    ds, folds = healthfc_data
    # the pipeline's selector gets its whole training config (medfc.plan layers evidence_train over the run's)
    extra = {"val_fraction": 0.25} if system in ("pipeline", "joint") else {}
    options = healthfc_options(system, train_cfg, fold=1, checkpoint_dir=tmp_path / "ckpt", **extra)
    records, info = H.run_fold(ds, folds, options)
    data = {r["id"]: r for r in healthfc_recs}
    test_ids = sorted(f"c{i:02d}" for i in range(12) if i % 2 == 1)
    if system == "level_of_evidence":
        test_ids = [i for i in test_ids if data[i]["label"] != "NOT ENOUGH INFO"]
        labels = LOE_LABELS
    else:
        labels = H.VERACITY_LABELS
    assert sorted(r["id"] for r in records) == test_ids
    assert info["n_predictions"] == len(test_ids) and info["n_train"] + info["n_validation"] == 6
    for r in records:
        src = data[r["id"]]
        assert r["fold"] == 1 and r["system"] == system and r["lang"] == "en"
        assert r["label"] == (src["evidence_level"] if system == "level_of_evidence" else src["label"])
        assert list(r["probs"]) == labels and sum(r["probs"].values()) == pytest.approx(1, abs=1e-4)
        assert r["pred_label"] == max(r["probs"], key=r["probs"].get)
        assert r["evidence_ids"] == src["evidence_ids"]
        assert r["gold_evidence"] == [src["sentences_en"][i] for i in src["evidence_ids"]]
        if system in ("pipeline", "joint"):
            assert len(r["pred_evidence_ids"]) <= 5
            assert r["evidence"] == [src["sentences_en"][i] for i in r["pred_evidence_ids"]]
        else:
            assert r["pred_evidence_ids"] is None
        if system == "oracle":
            assert r["evidence"] == r["gold_evidence"]
    if system == "joint":
        assert info["model"]["windows"]["multi_window_claims"] >= 1  # the 40-sentence document
        assert (tmp_path / "ckpt" / "joint" / "best" / "model.safetensors").exists()
    if system == "pipeline":
        assert (tmp_path / "ckpt" / "pipeline" / "evidence" / "best" / "model.safetensors").exists()
        assert (tmp_path / "ckpt" / "pipeline" / "veracity" / "best" / "model.safetensors").exists()
        assert info["evidence_model"]["n_train_pairs"] > 0


def test_german_run_and_written_predictions(healthfc_data, train_cfg, tmp_path):
    ds, folds = healthfc_data
    records, info = H.run_fold(ds, folds, healthfc_options("oracle", train_cfg, fold=0, lang="de"))
    assert {r["lang"] for r in records} == {"de"}
    assert records[0]["gold_evidence"][0] in {"die studie zeigte einen klaren nutzen.", "es gibt keine verlässlichen belege.", "mehr forschung ist nötig."}
    H.write_fold(tmp_path / "p.jsonl", tmp_path / "info.json", records, info)
    assert [r["id"] for r in read_jsonl(tmp_path / "p.jsonl")] == sorted(r["id"] for r in records)
    assert json.loads((tmp_path / "info.json").read_text())["lang"] == "de"


def test_unknown_system_and_option_are_rejected(healthfc_data, train_cfg):
    ds, folds = healthfc_data
    good = healthfc_options("oracle", train_cfg, fold=0).to_mapping()
    with pytest.raises(OptionsError, match=r"options\.system: 'magic' is not one of \['pipeline', 'joint', 'oracle'"):
        HealthFCFoldOptions.from_mapping({**good, "system": "magic"}, where="options")
    with pytest.raises(OptionsError, match=r"PipelineOptions: missing options\.system_options\.evidence_train, .*options\.system_options\.threshold$"):
        HealthFCFoldOptions.from_mapping({**good, "system": "pipeline"}, where="options")  # the system chooses its options' class
    with pytest.raises(TypeError, match="system pipeline takes PipelineOptions, not SingleOptions"):
        H.run_fold(ds, folds, healthfc_options("oracle", train_cfg, fold=0).replace(system="pipeline"))
    with pytest.raises(OptionsError, match=r"unknown JointOptions\.treshold"):
        system_options("joint", treshold=0.4)
    assert system_option_keys("oracle") == ["val_fraction"]
    assert system_option_keys("pipeline") == ["threshold", "max_evidence", "neg_ratio", "val_fraction", "evidence_train"]


@pytest.mark.parametrize("val_fraction", [0.0, 0.2])
def test_the_refit_recipe_trains_on_exactly_the_training_folds(val_fraction, tmp_path, monkeypatch, train_cfg):
    """val_fraction 0 (cpu.yaml's recipe, the paper's): every claim of the other folds trains, none is held out,
    nothing of the test fold is seen before prediction; with a hold-out, it comes from the training folds only."""
    import numpy as np

    from tests.unit.experiments.test_exp_tfidf import _healthfc_files

    ds, folds, fold_of = _healthfc_files(tmp_path)
    calls = []

    class Uniform:
        result = encode_stats = type("R", (), {"as_dict": lambda self: {}})()

        def probs(self, examples, desc=""):
            calls.append(("predict", [e.text_a for e in examples]))
            return np.full((len(examples), 3), 1 / 3, dtype=np.float32)

    class Spy:
        config = train_cfg

        def fit(self, train_ex, labels, val_ex=None, **kw):
            calls.append(("fit", [e.text_a for e in train_ex], [e.text_a for e in val_ex or []]))
            return Uniform()

    monkeypatch.setattr(H, "build_model", lambda cfg, threads=None: Spy())
    records, info = H.run_fold(ds, folds, healthfc_options("oracle", train_cfg, fold=2, val_fraction=val_fraction))
    train_claims = {c for c, f in fold_of.items() if f != 2}
    (_, fit_train, fit_val), (_, predicted) = calls
    assert set(fit_train) | set(fit_val) == train_claims and not set(fit_train) & set(fit_val)
    assert len(fit_val) == info["n_validation"] and (len(fit_val) == 0) == (val_fraction == 0) and info["n_train"] == len(fit_train)
    assert set(predicted) == {c for c, f in fold_of.items() if f == 2} and len(records) == 10
