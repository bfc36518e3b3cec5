"""Learned stacking: inner folds over the training split only, a member trained on each part's complement
(medfc.experiments.ensembles.stacking); the choice between stack, average and best member judged on predictions it was not
tuned on (medfc.experiments.ensembles.stack_selection); and the ensemble step's outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from medfc.common.io import read_jsonl, write_jsonl
from medfc.common.report import SkipReport
from medfc.experiments.ensembles import stack_selection as SEL
from medfc.experiments.ensembles import stacking as S
from medfc.experiments.ensembles.ensemble import inner_assignment
from medfc.experiments.ensembles.ensemble import EnsembleOptions, StackingOptions
from medfc.experiments.ensembles.stacking import PairsInnerOptions, HealthFCInnerOptions
from medfc.experiments.models.options import CLINIFACT_PAIRS, PairsTrainOptions
from tests.helpers.config import section
from tests.helpers.experiment_data import healthfc_options
from tests.unit.experiments.test_exp_tfidf import _healthfc_files, tfidf_options

LABELS = ["evidence", "inconclusive", "NEI"]


def stacking(**kw) -> StackingOptions:
    return StackingOptions.from_mapping(section("experiments.stacking", **kw))


def test_inner_folds_are_stratified_seeded_and_blind_to_the_items_order():
    ids = [f"c{k:02d}" for k in range(23)]
    labels = ["a"] * 11 + ["b"] * 7 + ["c"] * 5
    part = inner_assignment(ids, labels, 5, seed=3)
    assert part == S.inner_assignment(ids[::-1], labels[::-1], 5, seed=3)  # the order the items come in changes nothing
    assert part != S.inner_assignment(ids, labels, 5, seed=4)
    sizes = np.bincount(list(part.values()))
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == 23
    for lab in "abc":  # each label spread over the parts as evenly as it can be
        per = np.bincount([part[i] for i, x in zip(ids, labels) if x == lab], minlength=5)
        assert per.max() - per.min() <= 1


def _recorder(calls):
    class Fitted:
        result = encode_stats = type("R", (), {"as_dict": lambda self: {}})()

        def probs(self, examples, desc=""):
            calls.append(("predict", [e.text_a for e in examples]))
            return np.full((len(examples), 3), 1 / 3, dtype=np.float32)

    class Spy:
        def fit(self, train_ex, labels, val_ex=None, **kw):
            calls.append(("fit", [e.text_a for e in train_ex], [e.text_a for e in val_ex or []]))
            return Fitted()

    return Spy()


def test_a_healthfc_members_inner_cv_predicts_each_training_claim_once_by_a_model_that_never_saw_it(tmp_path, monkeypatch):
    from medfc.experiments.models import kinds as models

    ds, folds, fold_of = _healthfc_files(tmp_path, n=30, n_folds=3)
    calls: list = []
    monkeypatch.setattr(models, "build_model", lambda cfg, threads=None: _recorder(calls))
    run = healthfc_options("oracle", tfidf_options(), fold=1, val_fraction=0.0)
    options = HealthFCInnerOptions.from_mapping({"run": run, "inner": {"inner_folds": 4, "seed": 0}})
    records, info = S.healthfc_inner_cv(ds, folds, options)
    train_claims = {c for c, f in fold_of.items() if f != 1}
    fits, predicts = calls[0::2], calls[1::2]
    assert len(fits) == len(predicts) == 4
    predicted = [c for _, claims in predicts for c in claims]
    assert sorted(predicted) == sorted(train_claims)  # every training claim once; the test fold never read
    for (_, trained, held_out), (_, claims) in zip(fits, predicts):
        assert set(trained) == train_claims - set(claims) and not held_out
    assert len(records) == 20 and {r["fold"] for r in records} == {1} and sorted({r["inner_fold"] for r in records}) == [0, 1, 2, 3]
    assert [p["n_predicted"] for p in info["parts"]] == [5, 5, 5, 5] and info["n_train"] == 20


def test_a_clinifact_members_inner_cv_covers_train_and_validation_and_never_the_test_split(clinifact_data, monkeypatch):
    from medfc.experiments.models import kinds as models

    calls: list = []
    monkeypatch.setattr(models, "build_model", lambda cfg, threads=None: _recorder(calls))
    run = PairsTrainOptions.from_mapping({"data": CLINIFACT_PAIRS, "train": tfidf_options(), "include_title": True, "predict_splits": ["test"], "checkpoint_dir": None})
    options = PairsInnerOptions.from_mapping({"run": run, "inner": {"inner_folds": 3, "seed": 0}})
    records, info = S.pairs_inner_cv(clinifact_data["train"], clinifact_data["validation"], options)
    assert len(records) == 18 and sorted(r["id"] for r in records) == [str(1000 + i) for i in range(18)]  # 12 train + 6 validation
    assert {r["split"] for r in records if int(r["id"]) < 1012} == {"train"} and {r["split"] for r in records if int(r["id"]) >= 1012} == {"validation"}
    assert [len(c[1]) + len(c[2]) for c in calls[0::2]] == [12, 12, 12] and [len(c[1]) for c in calls[1::2]] == [6, 6, 6]
    assert info["sizes"] == {"train": 12, "validation": 6}


def _write_run(path, ids, gold, probs):
    write_jsonl(path, [{"id": i, "label": g, "pred_label": LABELS[int(np.argmax(p))], "probs": dict(zip(LABELS, map(float, p))), "split": "test"}
                       for i, g, p in zip(ids, gold, probs)])


def _noisy(gold_idx, rng, strength, n_labels=3):
    """Probabilities that lean towards the gold label by ``strength`` (0: uniform noise)."""
    logits = rng.normal(size=(len(gold_idx), n_labels))
    logits[np.arange(len(gold_idx)), gold_idx] += strength
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def _world(tmp_path, members, n_inner=300, n_test=200, seed=0):
    """Inner (out-of-fold) and test prediction files for members given as functions gold → probabilities."""
    rng = np.random.default_rng(seed)
    files = {}
    for part, n in (("inner", n_inner), ("test", n_test)):
        gold = rng.integers(0, 3, size=n)
        ids = [f"{part}{k:03d}" for k in range(n)]
        for name, make in members.items():
            path = tmp_path / f"{name}.{part}.jsonl"
            _write_run(path, ids, [LABELS[g] for g in gold], make(gold, rng))
            files.setdefault(part, []).append(path)
    return files


def _f1(records):
    from medfc.experiments.models.sklearn_common import validation_scores

    return validation_scores([r["label"] for r in records], [r["pred_label"] for r in records], LABELS)["macro_f1"]


def _unchanged(records, member_file):
    member = {r["id"]: r["probs"] for r in read_jsonl(member_file)}
    return all(r["probs"] == pytest.approx(member[r["id"]], abs=1e-6) for r in records)


def test_a_noise_member_is_never_chosen_over_a_good_one_whose_probabilities_pass_unchanged(tmp_path):
    files = _world(tmp_path, {"good": lambda g, rng: _noisy(g, rng, 2.0), "noise": lambda g, rng: _noisy(g, rng, 0.0)}, n_inner=600, n_test=400)
    report = SkipReport("t")
    records, info = SEL.stack_predictions(files["test"], files["inner"], ["good", "noise"], stacking(), report)
    assert info["inner_cv"]["chosen"] == "good alone" and info["selected"] == ["good"] and info["meta_model"] is None
    assert info["weights"] == {"good": 1.0, "noise": 0.0}
    assert set(info["inner_cv"]["estimates"]) == {"best member", "stack", "average"} and set(info["inner_cv"]["margins"]) == {"stack", "average"}
    assert info["inner_cv"]["level"] == pytest.approx(0.05 / 2) and all(m <= 0 for m in info["inner_cv"]["margins"].values())
    assert _unchanged(records, files["test"][0]) and len(records) == 400 and report.counts["records"] == 400
    with pytest.raises(ValueError, match="1 prediction files and 2 inner-CV files for 2 members"):  # one file per member
        SEL.stack_predictions(files["test"][:1], files["inner"], ["good", "noise"], stacking(), report)
    with pytest.raises(ValueError, match="1 members' prediction files for 2 members"):
        SEL.fit_stack([files["inner"][:1]], ["good", "noise"], stacking(), report)


def test_a_member_that_only_reweights_the_good_ones_classes_is_never_chosen(tmp_path):
    """A copy of the good member with its classes re-weighted adds no information: neither the stack nor the average
    of the two, nor (when asked for) the meta-model on the good member alone, beats it by the margin."""
    def reweighted(gold, rng):
        return _noisy(gold, np.random.default_rng(7), 2.0) * np.array([3.0, 1.0, 0.3])

    files = _world(tmp_path, {"good": lambda g, rng: _noisy(g, np.random.default_rng(7), 2.0), "reweighted": reweighted}, n_inner=600)
    options = stacking(candidates=["stack", "average", "recalibrated"])
    records, info = SEL.stack_predictions(files["test"], files["inner"], ["good", "reweighted"], options, SkipReport("t"))
    assert info["inner_cv"]["chosen"] == "good alone" and info["inner_cv"]["level"] == pytest.approx(0.05 / 3, abs=1e-6)
    assert _unchanged(records, files["test"][0])


def test_a_single_member_stack_is_no_candidate_unless_asked_for(tmp_path):
    files = _world(tmp_path, {"a": lambda g, rng: _noisy(g, rng, 2.0), "b": lambda g, rng: _noisy(g, rng, 1.0)}, n_inner=120, n_test=10)
    _, info = SEL.stack_predictions(files["test"], files["inner"], ["a", "b"], stacking(), SkipReport("t"))
    assert "recalibrated" not in info["inner_cv"]["estimates"]
    _, info = SEL.stack_predictions(files["test"][:1], files["inner"][:1], ["a"], stacking(), SkipReport("t"))  # one member: nothing to try
    assert info["inner_cv"]["estimates"].keys() == {"best member"} and info["inner_cv"]["chosen"] == "a alone"


def test_members_that_know_different_labels_are_combined_and_the_stack_beats_each(tmp_path):
    def knows(label):  # sure about one label, uniform over the other two
        def make(gold, rng):
            p = np.full((len(gold), 3), 0.0) + rng.uniform(0.2, 0.4, size=(len(gold), 3))
            p[gold == label, label] += 1.0
            return p / p.sum(axis=1, keepdims=True)
        return make

    files = _world(tmp_path, {"knows0": knows(0), "knows1": knows(1)})
    records, info = SEL.stack_predictions(files["test"], files["inner"], ["knows0", "knows1"], stacking(), SkipReport("t"))
    assert info["inner_cv"]["chosen"] == "stack" and sorted(info["selected"]) == ["knows0", "knows1"]
    assert all(w > 0.2 for w in info["weights"].values()) and info["inner_cv"]["margins"]["stack"] > 0
    assert info["inner_cv"]["estimates"]["stack"] > info["inner_cv"]["estimates"]["best member"]
    assert _f1(records) > max(_f1(list(read_jsonl(f))) for f in files["test"])
    assert info["meta_model"]["members"] == info["selected"] and len(info["meta_model"]["coef"]) == 3


def test_the_margin_grows_with_the_candidates_tried_and_pays_for_the_best_members_choice():
    """Nested CV's estimate of the best member pays for choosing it; the bootstrap's lower quantile falls as the
    level is split over more candidates."""
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 3, 300)
    ref = np.where(rng.random(300) < 0.6, gold, rng.integers(0, 3, 300))
    better = np.where(rng.random(300) < 0.7, gold, rng.integers(0, 3, 300))
    one, three = (SEL.margin(gold, better, ref, 3, 0.05 / k, 2000, 0) for k in (1, 3))
    assert three < one and one > 0
    assert SEL.margin(gold, ref, ref, 3, 0.025, 500, 0) == 0.0


def test_items_a_member_did_not_predict_are_counted_never_guessed(tmp_path):
    files = _world(tmp_path, {"a": lambda g, rng: _noisy(g, rng, 2.0), "b": lambda g, rng: _noisy(g, rng, 1.0)}, n_inner=60, n_test=10)
    recs = list(read_jsonl(files["test"][1]))
    recs[0]["probs"] = {lab: None for lab in LABELS}  # b has no prediction for one test item
    write_jsonl(files["test"][1], recs[:-1])  # and none at all for another
    inner = list(read_jsonl(files["inner"][1]))
    write_jsonl(files["inner"][1], inner[1:])  # nor for one training item
    report = SkipReport("t")
    records, _ = SEL.stack_predictions(files["test"], files["inner"], ["a", "b"], stacking(), report)
    assert len(records) == 8 and report.counts["inner_items"] == 59
    assert report.reasons() == {"member_without_prediction": 2, "inner_member_without_prediction": 1}


def test_the_ensemble_step_writes_weights_and_inner_cv_scores_and_a_rerun_writes_the_same_bytes(tmp_path):
    from medfc.experiments.steps import ensemble

    files = _world(tmp_path, {"a": lambda g, rng: _noisy(g, rng, 2.0), "b": lambda g, rng: _noisy(g, rng, 1.5)}, n_inner=120, n_test=40)
    options = EnsembleOptions.from_mapping({"members": ["a", "b"], "method": "stack", "weights": [1.0, 1.0],
                                            "stacking": section("experiments.stacking")})
    outputs = {"predictions": tmp_path / "out.jsonl", "info": tmp_path / "info.json"}
    ensemble({"predictions": files["test"], "inner": files["inner"]}, outputs, options)
    first = outputs["predictions"].read_bytes()
    info = json.loads(outputs["info"].read_text())
    assert info["method"] == "stack" and set(info["weights"]) == {"a", "b"} and info["stacking"]["inner_folds"] == 5
    assert set(info["inner_cv"]) == {"members", "estimates", "margins", "level", "outer_folds", "chosen"}
    ensemble({"predictions": files["test"], "inner": files["inner"]}, outputs, options)
    assert outputs["predictions"].read_bytes() == first
    options = options.replace(method="average")  # the plain average needs no inner predictions
    ensemble({"predictions": files["test"]}, outputs, options)
    assert json.loads(outputs["info"].read_text())["weights"] == {"a": 1.0, "b": 1.0}
