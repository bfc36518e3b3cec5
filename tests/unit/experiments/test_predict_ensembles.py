"""``medfc predict`` with a kept ensemble: two CliniFact members (TF-IDF and gradient boosting) trained and kept by the
workflow's own steps, combined by its ensemble step (average, stack), kept with :func:`keep_ensemble` and applied to
the test pairs: the same records as the ensemble step's, to 1e-6."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medfc.cli import main
from medfc.common.io import read_jsonl
from medfc.common.labels import CLINIFACT_LABELS
from medfc.experiments.ensembles import stack_selection as SEL
from medfc.experiments.final.kept import CARD, STACK_STATE, find_model_dir, keep_ensemble, keeper_of, read_card
from medfc.experiments.steps import pairs_experiment, pairs_inner_cv, ensemble
from medfc.plan import Plan
from tests.helpers.config import call_step
from tests.unit.plan.test_plan import config

MEMBERS = ["tfidf", "gbm"]


def ensemble_plan(method: str, weights=None, **stacking) -> Plan:
    """The schema's defaults with a CliniFact ensemble ``pair`` of tfidf and gbm (small settings: seconds)."""
    cfg = config(stages__experiments=True, models__ensembles={"pair": {"members": MEMBERS, "weights": weights, "method": method}},
                 models__clinifact={"discriminative": [*MEMBERS, "pair"], "zero_shot": [], "fine_tuned": []},
                 models__healthfc={"en": ["tfidf"], "de": []})
    cfg["experiments"]["gbm"].update(seeds=[0], max_iter=20, min_samples_leaf=2, progress=False)
    cfg["experiments"]["stacking"].update(inner_folds=3, outer_folds=3, resamples=200, **stacking)
    return Plan(cfg)


def run_members(plan: Plan, data: dict[str, Path], runs: Path, kept: Path, inner: bool) -> dict[str, list[str]]:
    """Each member's run (its model kept in ``kept/members/<alias>``) and, for a stack, its inner cross-validation:
    the ensemble step's inputs."""
    inputs: dict[str, list[str]] = {"predictions": [], "inner": []}
    for m in MEMBERS:
        options = plan.experiments.pairs_experiment("clinifact", m).replace(checkpoint_dir=str(kept / "members" / m))
        out = {"predictions": str(runs / f"{m}.jsonl"), "info": str(runs / f"{m}.json")}
        call_step(pairs_experiment, {s: str(p) for s, p in data.items()}, out, options)
        inputs["predictions"].append(out["predictions"])
        if inner:
            out = {"predictions": str(runs / f"{m}.inner.jsonl"), "info": str(runs / f"{m}.inner.json")}
            call_step(pairs_inner_cv, {"train": str(data["train"]), "validation": str(data["validation"])}, out,
                      plan.experiments.pairs_inner_cv("clinifact", m))
            inputs["inner"].append(out["predictions"])
    return inputs if inner else {"predictions": inputs["predictions"]}


def predict(model_dir, input_path, output) -> int:
    return main(["predict", "--model-dir", str(model_dir), "--input", str(input_path), "--output", str(output), "--device", "cpu"])


def check_as_step(got: list[dict], step_predictions: Path) -> None:
    """``medfc predict``'s records are the ensemble step's: the same items in order, labels and probabilities."""
    expected = list(read_jsonl(step_predictions))
    assert [g["id"] for g in got] == [e["id"] for e in expected] and len(got) == 6
    for g, e in zip(got, expected):
        assert set(g) == {"id", "label", "probabilities"} and g["label"] == e["pred_label"]
        assert set(g["probabilities"]) == set(CLINIFACT_LABELS) and g["probabilities"] == pytest.approx(e["probs"], abs=1e-6)


def test_a_kept_average_predicts_as_the_ensemble_step(clinifact_data, tmp_path, capsys):
    plan = ensemble_plan("average", weights=[2.0, 1.0])
    kept = tmp_path / "kept" / "pair"
    inputs = run_members(plan, clinifact_data, tmp_path, kept, inner=False)
    options = plan.experiments.ensemble_options("pair")
    step_out = {"predictions": str(tmp_path / "pair.jsonl"), "info": str(tmp_path / "pair.json")}
    call_step(ensemble, inputs, step_out, options)

    path = keep_ensemble(kept, members=options.members, method=options.method, weights=options.weights)
    card = read_card(kept)
    assert path == kept / CARD and sorted(p.name for p in kept.iterdir()) == [CARD, "members"]
    assert (card["kind"], card["dataset"], card["system"], card["method"], card["members"], card["weights"]) == (
        "ensemble", "clinifact", "discriminative", "average", MEMBERS, [2.0, 1.0])
    assert card["labels"] == list(CLINIFACT_LABELS) and card["input_fields"] == ["claim", "evidence"]
    assert card["member_dirs"] == {m: f"members/{m}" for m in MEMBERS} and "stack" not in card
    assert keeper_of(card["kind"]).load is None  # applied by medfc predict, member by member

    out = tmp_path / "pred.jsonl"
    assert predict(tmp_path / "kept", clinifact_data["test"], out) == 0  # the folder above finds the ensemble, not its members
    check_as_step(list(read_jsonl(out)), Path(step_out["predictions"]))
    assert "6 of 6 rows predicted" in capsys.readouterr().err

    # a member's folder is that member alone: its own run's predictions
    assert read_card(kept / "members" / "gbm")["member"] == "gbm" and find_model_dir(kept / "members" / "gbm") == kept / "members" / "gbm"
    assert predict(kept / "members" / "gbm", clinifact_data["test"], tmp_path / "gbm.out.jsonl") == 0
    by_id = {r["id"]: r["probs"] for r in read_jsonl(tmp_path / "gbm.jsonl")}
    assert all(r["probabilities"] == pytest.approx(by_id[r["id"]], abs=1e-6) for r in read_jsonl(tmp_path / "gbm.out.jsonl"))


@pytest.mark.parametrize("chosen", ["stack", "tfidf alone"])
def test_a_kept_stack_predicts_as_the_ensemble_step(chosen, clinifact_data, tmp_path, monkeypatch):
    """The stack its selection chose, kept in stack.json (its regression in stack.skops): the meta-model on both members (alpha 1 with the stack the
    only candidate: any gain passes), or the best member alone (the defaults' margin: only that member applied)."""
    stacking = {"candidates": ["stack"], "alpha": 1.0} if chosen == "stack" else {}
    plan = ensemble_plan("stack", **stacking)
    kept = tmp_path / "kept"
    inputs = run_members(plan, clinifact_data, tmp_path, kept, inner=True)
    choices, original = [], SEL.choose_stack

    def choose(*args, **kwargs):  # the step's choice, as the code that keeps an ensemble gets it
        choices.append(original(*args, **kwargs))
        return choices[-1]

    monkeypatch.setattr(SEL, "choose_stack", choose)
    step_out = {"predictions": str(tmp_path / "pair.jsonl"), "info": str(tmp_path / "pair.json")}
    info = call_step(ensemble, inputs, step_out, plan.experiments.ensemble_options("pair"))
    assert info["inner_cv"]["chosen"] == chosen
    stacked = choices[0].fitted
    assert (stacked.meta is not None) == (chosen == "stack")

    keep_ensemble(kept, members=MEMBERS, method="stack", stacked=stacked)
    card = read_card(kept)
    assert (card["method"], card["weights"], card["stack"], card["stack_members"]) == ("stack", None, STACK_STATE, stacked.members)
    assert (kept / STACK_STATE).is_file()
    if chosen != "stack":  # a member the stack does not use is never applied: its model may be gone
        (kept / "members" / "gbm" / "model.skops").unlink()
    out = tmp_path / "pred.jsonl"
    assert predict(kept, clinifact_data["test"], out) == 0
    check_as_step(list(read_jsonl(out)), Path(step_out["predictions"]))


def fake_member(directory: Path, **card) -> None:
    directory.mkdir(parents=True)
    (directory / CARD).write_text(json.dumps({"format": 1, "dataset": "clinifact", "system": "discriminative", "kind": "tfidf",
                                              "labels": list(CLINIFACT_LABELS), **card}), encoding="utf-8")


def test_keep_ensemble_refuses_members_that_disagree_or_are_missing(tmp_path):
    fake_member(tmp_path / "a" / "members" / "x")
    fake_member(tmp_path / "a" / "members" / "y", labels=["SUPPORTED", "REFUTED", "NOT ENOUGH INFO"])
    with pytest.raises(ValueError, match=r"the ensemble's members differ in labels: x: \['evidence', .*\]; y: \['SUPPORTED'"):
        keep_ensemble(tmp_path / "a", members=["x", "y"], method="average", weights=[1.0, 1.0])
    fake_member(tmp_path / "b" / "members" / "x")
    fake_member(tmp_path / "b" / "members" / "y", dataset="healthfc")
    with pytest.raises(ValueError, match="the ensemble's members differ in dataset: x: 'clinifact'; y: 'healthfc'"):
        keep_ensemble(tmp_path / "b", members=["x", "y"], method="average", weights=[1.0, 1.0])
    with pytest.raises(FileNotFoundError, match="the ensemble's member z is not kept"):
        keep_ensemble(tmp_path / "b", members=["x", "z"], method="average", weights=[1.0, 1.0])
    fake_member(tmp_path / "c" / "members" / "x")
    fake_member(tmp_path / "c" / "members" / "y")
    with pytest.raises(ValueError, match="a stacked ensemble needs its stack"):
        keep_ensemble(tmp_path / "c", members=["x", "y"], method="stack")
    with pytest.raises(ValueError, match=r"the stack combines \['x', 'w'\], not a subset of the members"):
        keep_ensemble(tmp_path / "c", members=["x", "y"], method="stack", stacked=SEL.Fitted("stack", ["x", "w"]))
    with pytest.raises(ValueError, match="1 weights"):
        keep_ensemble(tmp_path / "c", members=["x", "y"], method="average", weights=[1.0])
    with pytest.raises(ValueError, match="unknown ensemble method 'stacked'; the methods are average, stack"):
        keep_ensemble(tmp_path / "c", members=["x", "y"], method="stacked", stacked=SEL.Fitted("stack", ["x"]))
    with pytest.raises(ValueError, match="an averaged ensemble has no stack"):
        keep_ensemble(tmp_path / "c", members=["x", "y"], method="average", weights=[1.0, 1.0], stacked=SEL.Fitted("stack", ["x"]))
    assert not (tmp_path / "c" / CARD).exists()
    keep_ensemble(tmp_path / "c", members=["x", "y"], method="average", weights=[1.0, 2.0])
    assert read_card(tmp_path / "c")["weights"] == [1.0, 2.0]
