"""Final models (``experiments.final``): a row trained once more on all its data and kept with a model card. Asking
for one plans its job and changes no other job; the kept model predicts with ``medfc predict`` (a CliniFact row's as
its own run predicted its test pairs); a row the run does not have stops the plan in one line."""

from __future__ import annotations

import json

import pytest

from medfc.experiments.final import train as F
from medfc.experiments import steps
from medfc.experiments.pairs import run_discriminative
from medfc.experiments.models.keeper import CARD
from medfc.experiments.final.predict import predict_file
from medfc.plan import Plan
from medfc.config.validate import ConfigError, merged_config, plan_for
from tests.helpers.config import call_step, defaults
from tests.helpers.workflow import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
SKLEARN = {"tfidf": "sklearn:tfidf", "gbm": "sklearn:gbm"}


def cpu_plan(final: list[dict] | None) -> Plan:
    cfg = merged_config([REPO / "config" / "cpu.yaml"])
    cfg["experiments"]["final"] = final if final is not None else []
    return plan_for(cfg, SCHEMA, base_dir=REPO)


def test_a_final_row_plans_its_own_job_and_changes_no_other():
    rows = [{"dataset": "healthfc", "model": "tfidf+minilm", "system": "oracle"}, {"dataset": "clinifact", "model": "tfidf+gbm"}]
    with_final, without = cpu_plan(rows), cpu_plan([])
    jobs = {(s.rule, json.dumps(w, sort_keys=True)): with_final.options(s.rule, w) for s, w in with_final.planned_jobs()}
    before = {(s.rule, json.dumps(w, sort_keys=True)): without.options(s.rule, w) for s, w in without.planned_jobs()}
    added = {k: v for k, v in jobs.items() if k not in before}
    assert sorted(k for k, _ in added) == ["healthfc_final", "pairs_final"] and all(jobs[k] == v for k, v in before.items())
    hfc = with_final.job_options("healthfc_final", {"lang": "en", "model": "tfidf+minilm", "system": "oracle"})
    assert hfc.members == ("tfidf", "minilm") and hfc.ensemble.method == "average" and [r.fold for r in hfc.runs] == [-1, -1]
    assert all(r.checkpoint_dir is None for r in hfc.runs) and hfc.runs[1].train.epochs == 4.0  # as the row's runs train
    inputs = with_final.inputs("pairs_final", {"dataset": "clinifact", "model": "tfidf+gbm"})
    assert inputs["oof_gbm"] == "runs/cpu/experiments/inner_cv/clinifact/gbm/predictions.jsonl"  # the row's stack is refitted as it was
    planned = with_final.planned_wildcards()
    assert {"lang": "en", "model": "tfidf+minilm", "system": "oracle"} in planned["healthfc_final"]
    assert {"dataset": "clinifact", "model": "tfidf+gbm"} in planned["pairs_final"]
    assert with_final.job_resources("pairs_final", {"dataset": "clinifact", "model": "tfidf+gbm"})["runtime"] == sum(
        with_final.job_resources("pairs_experiment", {"dataset": "clinifact", "model": m})["runtime"] for m in ("tfidf", "gbm"))


@pytest.mark.parametrize("row, message", [
    ({"dataset": "healthfc", "model": "tfidf", "system": "pipeline"}, r"experiments\.final\[0\]: tfidf pipeline \(en\) is not a row"),
    ({"dataset": "clinifact", "model": "nope"}, r"experiments\.final\[0\]: nope is not a row of this run's clinifact table"),
    ({"dataset": "clinifact", "model": "tfidf", "system": "zero_shot"}, r"'zero_shot': final models are kept for the discriminative"),
    ({"dataset": "clinifact", "model": "tfidf", "lang": "de"}, r"experiments\.final\[0\]\.lang: a clinifact row has no language"),
    ({"dataset": "nosuch", "model": "tfidf"}, r"experiments\.final\[0\]\.dataset: 'nosuch' is neither healthfc nor a dataset"),
])
def test_a_row_the_run_does_not_have_is_one_line(row, message):
    with pytest.raises(ConfigError, match=message) as caught:
        cpu_plan([row])
    assert "\n" not in str(caught.value)


def test_the_epochs_are_those_the_rows_cross_validation_kept():
    infos = [{"model": {"train": {"best_epoch": 2, "epochs_run": 4}}}, {"model": {"train": {"best_epoch": 3, "epochs_run": 4}}},
             {"model": {"train": {"best_epoch": None, "epochs_run": 4}}}]
    assert F.cv_epochs(infos, "model") == 3  # mean of 2, 3 and 4
    assert F.cv_epochs([{"model": {"train": {"best_epoch": None, "epochs_run": 0}}}], "model") is None  # no epochs (TF-IDF)


def plan_with(models: dict[str, str], discriminative: list[str]) -> Plan:
    cfg = defaults()
    cfg["stages"]["experiments"] = True
    cfg["models"]["aliases"].update(models)
    cfg["models"]["clinifact"]["discriminative"] = discriminative
    cfg["models"]["healthfc"]["en"] = discriminative
    return Plan(cfg)


def test_a_clinifact_final_model_predicts_its_rows_test_pairs_as_the_row(clinifact_data, tmp_path):
    plan = plan_with(SKLEARN, ["tfidf"])
    w = {"dataset": "clinifact", "model": "tfidf"}
    records, info = run_discriminative(clinifact_data, plan.job_options("pairs_experiment", w))  # the row's run
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"split": "test", "macro_f1": 0.5, "accuracy": 0.5}), encoding="utf-8")  # as scoring writes it
    model = tmp_path / "final"
    call_step(steps.pairs_final, {**{s: str(p) for s, p in clinifact_data.items()}, "scores": str(scores)}, {"model": str(model)},
              plan.options("pairs_final", w))
    card = json.loads((model / CARD).read_text())
    assert card["kind"] == "tfidf" and card["final"]["row"] == "tfidf" and card["final"]["table_scores"]["scores"]["macro_f1"] == 0.5
    assert set(card["final"]["data"]) == {"train", "validation", "test"} and len(card["final"]["data"]["test"]["sha256"]) == 64
    from huggingface_hub import ModelCard

    readme = ModelCard.load(model / F.README)  # the model card, as the hub's library reads it
    assert readme.data.library_name == "medfc" and readme.data.datasets == ["clinifact"] and "test macro-F1 of the row in its table: 0.5" in readme.text
    out = tmp_path / "pred.jsonl"
    summary = predict_file(model, clinifact_data["test"], out)
    assert summary["predicted"] == 6
    got = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    test = [r for r in records if r["split"] == "test"]
    assert len(test) == 6
    for r in test:
        assert got[r["id"]]["label"] == r["pred_label"]
        assert got[r["id"]]["probabilities"] == pytest.approx(r["probs"], abs=1e-6)


def test_a_healthfc_final_model_trains_on_every_claim(healthfc_data, tmp_path):
    ds, _ = healthfc_data
    plan = plan_with(SKLEARN, ["tfidf"])
    w = {"lang": "en", "model": "tfidf", "system": "oracle"}
    scores = []
    for fold in (0, 1):
        path = tmp_path / f"scores{fold}.json"
        path.write_text(json.dumps({"kind": "healthfc", "veracity": {"macro_f1": 0.4 + fold / 10, "accuracy": 0.5}}), encoding="utf-8")
        scores.append(str(path))
    infos = [str(tmp_path / "info.json")] * 2
    (tmp_path / "info.json").write_text(json.dumps({"model": {"train": {"best_epoch": None, "epochs_run": 0}}}), encoding="utf-8")
    model = tmp_path / "final"
    call_step(steps.healthfc_final, {"dataset": str(ds), "scores": scores, "info_tfidf": infos}, {"model": str(model)},
              plan.options("healthfc_final", w))
    card = json.loads((model / CARD).read_text())
    assert card["system"] == "oracle" and "fold" not in card and card["final"]["trained"]["tfidf"]["n_train"] == 12
    assert card["final"]["table_scores"]["mean"] == {"macro_f1": 0.45, "accuracy": 0.5}
    assert not (model / F.WORK).exists()
    rows = tmp_path / "claims.jsonl"
    rows.write_text(json.dumps({"id": "x", "claim": "does zinc shorten colds?", "evidence": ["the quality of the studies was low."]}) + "\n",
                    encoding="utf-8")
    assert predict_file(model, rows, tmp_path / "out.jsonl")["predicted"] == 1


def test_a_stacked_clinifact_row_kept_final_predicts_as_the_rows_ensemble_step(clinifact_data, tmp_path):
    """The row ``pair`` (tfidf + gbm, stacked): its final model, refitted on the members' inner cross-validation as
    the row's was, gives the row's own test predictions."""
    from medfc.common.io import read_jsonl
    from tests.unit.experiments.test_predict_ensembles import ensemble_plan, run_members

    plan = ensemble_plan("stack", candidates=["stack"], alpha=1.0)  # the meta-model chosen, not a member alone
    runs = tmp_path / "runs"
    runs.mkdir()
    inputs = run_members(plan, clinifact_data, runs, tmp_path / "unused", inner=True)
    row = {"predictions": str(runs / "pair.jsonl"), "info": str(runs / "pair.json")}
    call_step(steps.ensemble, inputs, row, plan.options("pairs_ensemble", {"dataset": "clinifact", "model": "pair"}))
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"test": {"macro_f1": 0.5}}), encoding="utf-8")
    model = tmp_path / "final"
    final_inputs = {**{s: str(p) for s, p in clinifact_data.items()}, "scores": str(scores),
                    **{f"oof_{m}": inner for m, inner in zip(("tfidf", "gbm"), inputs["inner"])}}
    call_step(steps.pairs_final, final_inputs, {"model": str(model)}, plan.options("pairs_final", {"dataset": "clinifact", "model": "pair"}))
    card = json.loads((model / CARD).read_text())
    assert card["kind"] == "ensemble" and card["method"] == "stack" and (model / "members" / "gbm" / CARD).is_file()
    out = tmp_path / "pred.jsonl"
    assert predict_file(model, clinifact_data["test"], out)["predicted"] == 6
    got = {r["id"]: r for r in read_jsonl(out)}
    expected = [r for r in read_jsonl(row["predictions"]) if r["split"] == "test"]
    assert len(expected) == 6
    for r in expected:
        assert got[r["id"]]["label"] == r["pred_label"] and got[r["id"]]["probabilities"] == pytest.approx(r["probs"], abs=1e-6)


def test_a_healthfc_ensemble_row_keeps_each_member_trained_on_every_claim(healthfc_data, tmp_path):
    ds, _ = healthfc_data
    cfg = defaults()
    cfg["stages"]["experiments"] = True
    cfg["models"]["aliases"].update({"tfidf": "sklearn:tfidf", "tfidf-b": "sklearn:tfidf"})
    cfg["models"]["ensembles"] = {"avg": {"members": ["tfidf", "tfidf-b"], "weights": [2.0, 1.0], "method": "average"}}
    cfg["models"]["healthfc"]["en"] = ["avg"]
    plan = Plan(cfg)
    info = tmp_path / "info.json"
    info.write_text(json.dumps({"model": {"train": {"best_epoch": None, "epochs_run": 0}}}), encoding="utf-8")
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"kind": "healthfc", "veracity": {"macro_f1": 0.4, "accuracy": 0.5}}), encoding="utf-8")
    model = tmp_path / "final"
    w = {"lang": "en", "model": "avg", "system": "oracle"}
    call_step(steps.healthfc_final, {"dataset": str(ds), "scores": [str(scores)], "info_tfidf": [str(info)], "info_tfidf-b": [str(info)]},
              {"model": str(model)}, plan.options("healthfc_final", w))
    card = json.loads((model / CARD).read_text())
    assert (card["kind"], card["method"], card["weights"], card["members"]) == ("ensemble", "average", [2.0, 1.0], ["tfidf", "tfidf-b"])
    assert card["final"]["trained"] == {"tfidf": {"epochs": None, "n_train": 12}, "tfidf-b": {"epochs": None, "n_train": 12}}
    rows = tmp_path / "claims.jsonl"
    rows.write_text(json.dumps({"id": "x", "claim": "does zinc shorten colds?", "evidence": ["the quality of the studies was low."]}) + "\n",
                    encoding="utf-8")
    assert predict_file(model, rows, tmp_path / "out.jsonl")["predicted"] == 1
