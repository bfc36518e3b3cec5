"""Hand-computed label metrics, McNemar–Bowker and fold aggregation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from medfc.scoring.classification import (
    accuracy,
    aggregate_folds,
    bootstrap_intervals,
    bowker_symmetry,
    classification_scores,
    confusion_matrix,
    mcnemar,
    mcnemar_bowker,
    mean_std,
)

GOLD = ["a", "a", "b", "b", "c"]
PRED = ["a", "b", "b", "b", "a"]


def test_per_class_and_macro_with_a_class_never_predicted():
    s = classification_scores(GOLD, PRED, ["a", "b", "c"])
    # a: tp1 fp1 fn1 ; b: tp2 fp1 fn0 ; c: tp0 fp0 fn1 (never predicted -> 0)
    assert s["per_class"]["a"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2, "n_pred": 2}
    assert s["per_class"]["b"]["precision"] == pytest.approx(2 / 3)
    assert s["per_class"]["b"]["recall"] == 1.0
    assert s["per_class"]["b"]["f1"] == pytest.approx(0.8)
    assert s["per_class"]["c"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "n_pred": 0}
    assert s["macro_f1"] == pytest.approx((0.5 + 0.8 + 0.0) / 3)
    assert s["macro_precision"] == pytest.approx((0.5 + 2 / 3) / 3)
    assert s["macro_recall"] == pytest.approx(0.5)
    assert s["accuracy"] == pytest.approx(0.6)
    assert s["n"] == 5
    assert s["confusion"] == {"labels": ["a", "b", "c"], "matrix": [[1, 1, 0], [0, 2, 0], [1, 0, 0]]}


def test_label_absent_from_gold_and_predictions_counts_in_macro():
    s = classification_scores(["a", "b"], ["a", "b"], ["a", "b", "d"])
    assert s["per_class"]["d"]["f1"] == 0.0
    assert s["macro_f1"] == pytest.approx(2 / 3)
    assert s["accuracy"] == 1.0


def test_unknown_prediction_is_wrong_but_no_false_positive():
    s = classification_scores(["a", "b"], ["a", "x"], ["a", "b"])
    assert s["per_class"]["a"]["precision"] == 1.0
    assert s["per_class"]["b"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "n_pred": 0}
    assert s["n_unknown_pred"] == 1
    assert s["accuracy"] == 0.5
    assert s["confusion"]["matrix"] == [[1, 0], [0, 0]]


def test_unknown_gold_label_and_length_mismatch_raise():
    with pytest.raises(ValueError, match="gold label 'z'"):
        confusion_matrix(["z"], ["a"], ["a"])
    with pytest.raises(ValueError, match="differ in length"):
        accuracy(["a"], ["a", "b"])


def test_empty_input_scores_zero():
    s = classification_scores([], [], ["a", "b"])
    assert (s["n"], s["accuracy"], s["macro_f1"]) == (0, 0.0, 0.0)


def test_mcnemar_bowker_hand_computed_matches_statsmodels():
    # table (rows A, columns B): [[3, 4, 2], [1, 0, 0], [0, 0, 0]]: pairs x/y 4 vs 1, x/z 2 vs 0, y/z 0 vs 0
    pairs = [("x", "y")] * 4 + [("y", "x")] + [("x", "z")] * 2 + [("x", "x")] * 3
    a, b = zip(*pairs)
    r = mcnemar_bowker(a, b, ["x", "y", "z"], shift_zeros=False)
    assert r["table"] == [[3, 4, 2], [1, 0, 0], [0, 0, 0]]
    # (4-1)^2/5 + (2-0)^2/2 + 0 (the empty y/z pair adds nothing) = 3.8 on df = k(k-1)/2 = 3, the empty
    # pair included; chi2(3) survival = erfc(sqrt(x/2)) + sqrt(2x/pi) exp(-x/2)
    assert r["statistic"] == pytest.approx(3.8)
    assert r["df"] == 3
    x = 3.8
    assert r["p_value"] == pytest.approx(math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2))
    # statsmodels: SquareTable(table, shift_zeros=False).symmetry(method="bowker") -> 3.8, 3.0, 0.2838861307598272
    assert (r["statistic"], r["df"], r["p_value"]) == (pytest.approx(3.8), 3, pytest.approx(0.2838861307598272, abs=1e-15))
    assert r["n"] == 10 and r["n_disagree"] == 7 and r["shift_zeros"] is False
    # our default is statsmodels' default, SquareTable(table).symmetry(method="bowker"): every 0 cell
    # becomes 0.5, so x/z is 1.5^2/2.5 = 0.9 and chi2 = 1.8 + 0.9 + 0 = 2.7
    s = mcnemar_bowker(a, b, ["x", "y", "z"])
    assert (s["statistic"], s["df"], s["p_value"]) == (pytest.approx(2.7), 3, pytest.approx(0.4402272943602312, abs=1e-15))
    assert s["shift_zeros"] is True


def test_bowker_symmetry_without_zero_cells_is_the_same_either_way():
    table = [[5, 3, 1], [1, 4, 2], [2, 1, 6]]
    # (3-1)^2/4 + (1-2)^2/3 + (2-1)^2/3 = 1 + 2/3
    for shift in (False, True):
        r = bowker_symmetry(table, shift_zeros=shift)
        assert (r["statistic"], r["df"], r["p_value"]) == (pytest.approx(5 / 3), 3, pytest.approx(0.6443698056370253, abs=1e-15))


def test_mcnemar_bowker_no_disagreement():
    r = mcnemar_bowker(["x", "y", "y"], ["x", "y", "y"])
    assert (r["statistic"], r["df"], r["p_value"], r["n_disagree"]) == (0.0, 1, 1.0, 0)
    one = mcnemar_bowker(["x"], ["x"])
    assert (one["statistic"], one["df"], one["p_value"]) == (0.0, 0, 1.0)


def test_mcnemar_on_correctness():
    gold = ["a"] * 6
    pa = ["a", "a", "a", "a", "b", "b"]  # right on 1-4
    pb = ["b", "b", "b", "a", "a", "b"]  # right on 4, 5
    # A right / B wrong: items 1,2,3 (3); A wrong / B right: item 5 (1) -> (3-1)^2/4 = 1
    r = mcnemar(gold, pa, pb)
    assert r["statistic"] == pytest.approx(1.0)
    assert r["df"] == 1


def test_mean_std_and_fold_aggregation():
    assert mean_std([0.5, 0.7, 0.9]) == {"mean": pytest.approx(0.7), "std": pytest.approx(0.2), "n": 3}
    assert mean_std([0.5, 0.7, 0.9], ddof=0)["std"] == pytest.approx(math.sqrt(0.08 / 3))
    assert mean_std([0.4]) == {"mean": 0.4, "std": None, "n": 1}
    assert mean_std([]) == {"mean": None, "std": None, "n": 0}
    folds = [classification_scores(["a", "b"], ["a", "b"], ["a", "b"]), classification_scores(["a", "b"], ["a", "a"], ["a", "b"])]
    agg = aggregate_folds(folds)
    assert agg["accuracy"]["mean"] == pytest.approx(0.75)
    assert agg["accuracy"]["std"] == pytest.approx(math.sqrt(0.125))
    assert agg["per_class.a.f1"]["mean"] == pytest.approx((1 + 2 / 3) / 2)
    assert "confusion.matrix" not in agg


def test_bootstrap_intervals_equal_the_scores_of_each_resample_computed_one_by_one():
    rng = np.random.default_rng(3)
    labels = ["evidence", "inconclusive", "NEI"]
    gold = [labels[i] for i in rng.integers(0, 3, 60)]
    pred = [g if rng.random() < 0.7 else ("<none>" if rng.random() < 0.2 else labels[int(rng.integers(0, 3))]) for g in gold]
    ci = bootstrap_intervals(gold, pred, labels, n_resamples=400, seed=11, chunk=400)
    draws = np.random.default_rng(11).integers(0, 60, size=(400, 60))
    acc = [accuracy([gold[i] for i in d], [pred[i] for i in d]) for d in draws]
    mf1 = [classification_scores([gold[i] for i in d], [pred[i] for i in d], labels)["macro_f1"] for d in draws]
    assert ci["accuracy"] == {"low": pytest.approx(np.percentile(acc, 2.5)), "high": pytest.approx(np.percentile(acc, 97.5))}
    assert ci["macro_f1"] == {"low": pytest.approx(np.percentile(mf1, 2.5)), "high": pytest.approx(np.percentile(mf1, 97.5))}
    assert ci["macro_f1"]["low"] < classification_scores(gold, pred, labels)["macro_f1"] < ci["macro_f1"]["high"]
    assert (ci["n_resamples"], ci["seed"], ci["alpha"], ci["method"]) == (400, 11, 0.05, "percentile")
    # the same seed gives the same interval whatever the chunking; another seed another one
    assert bootstrap_intervals(gold, pred, labels, n_resamples=400, seed=11) == bootstrap_intervals(gold, pred, labels, n_resamples=400, seed=11)
    assert bootstrap_intervals(gold, pred, labels, n_resamples=400, seed=12)["macro_f1"] != ci["macro_f1"]


def test_bootstrap_intervals_of_perfect_and_of_no_predictions():
    gold = ["a", "b", "c", "a"]
    perfect = bootstrap_intervals(gold, gold, ["a", "b", "c"], n_resamples=200, seed=0)
    assert perfect["accuracy"] == {"low": 1.0, "high": 1.0}
    # a resample without any "b" scores that class 0 (the module's convention), so the low end drops
    assert perfect["macro_f1"]["high"] == 1.0 and perfect["macro_f1"]["low"] == pytest.approx(1 / 3)
    assert bootstrap_intervals(gold, ["x"] * 4, ["a", "b", "c"], n_resamples=200, seed=0)["accuracy"] == {"low": 0.0, "high": 0.0}
    assert bootstrap_intervals([], [], ["a"], n_resamples=200, seed=0)["macro_f1"] == {"low": 0.0, "high": 0.0}
    with pytest.raises(ValueError, match="'z' is not one of"):
        bootstrap_intervals(["z"], ["a"], ["a"], n_resamples=10, seed=0)
    with pytest.raises(ValueError, match="duplicate labels"):
        bootstrap_intervals(["a"], ["a"], ["a", "a"], n_resamples=10, seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        bootstrap_intervals(["a"], ["a"], ["a"], n_resamples=0, seed=0)
