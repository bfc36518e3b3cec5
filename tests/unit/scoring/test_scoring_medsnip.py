"""FF1, OR-FALSE, abstentions, HealthFC mapping and the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from medfc.scoring.medsnip import (
    FALSE,
    TRUE,
    answer_verdicts,
    binary_scores,
    false_f1,
    healthfc_label,
    normalise_verdict,
    or_false,
    paired_bootstrap,
)

T, F = TRUE, FALSE


def test_ff1_and_macro_hand_computed():
    gold = [F, F, T, T, F]
    pred = [F, T, F, T, F]
    # FALSE: tp 2, fp 1, fn 1 -> 2/3 ; TRUE: tp 1, fp 1, fn 1 -> 1/2
    s = binary_scores(gold, pred)
    assert s["ff1"] == pytest.approx(2 / 3)
    assert s["tf1"] == pytest.approx(0.5)
    assert s["macro_f1"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert s["accuracy"] == pytest.approx(0.6)
    assert s["counts"] == {"tp_false": 2, "fp_false": 1, "fn_false": 1, "tn_false": 1}
    assert false_f1(gold, pred) == pytest.approx(2 / 3)


def test_ff1_zero_denominators():
    assert false_f1([F, T], [T, T]) == 0.0  # nothing predicted FALSE: precision undefined -> 0
    assert false_f1([T, T], [F, T]) == 0.0  # no gold FALSE: recall undefined -> 0
    s = binary_scores([T, T], [T, T])
    assert (s["ff1"], s["tf1"], s["macro_f1"]) == (0.0, 1.0, 0.5)
    assert binary_scores([], [])["ff1"] == 0.0


def test_verdict_spellings():
    assert [normalise_verdict(v) for v in (True, False, 1, 0, "true", " FALSE ", "Refuted", "supported")] == [T, F, T, F, T, F, F, T]
    assert normalise_verdict(None) is None and normalise_verdict("ABSTAIN") is None
    with pytest.raises(ValueError):
        normalise_verdict("maybe")


def test_or_false():
    assert or_false([T, T, F]) == F
    assert or_false([T, T]) == T
    assert or_false([T, None]) == T  # drop: abstaining unit ignored
    assert or_false([None, None]) is None  # all units abstain -> the answer abstains
    assert or_false([]) is None
    assert or_false([T, None], abstain="as_false") == F
    assert or_false([None], abstain="as_true") == T
    assert or_false([None, F], abstain="as_true") == F
    assert answer_verdicts([{"unit_verdicts": [True, False]}, {"pred_label": "TRUE"}, {"unit_verdicts": []}]) == [F, T, None]


def test_abstention_policies():
    gold = [F, T, F, T]
    pred = [F, None, None, T]
    drop = binary_scores(gold, pred, "drop")
    assert (drop["n_scored"], drop["n_abstained"], drop["coverage"], drop["ff1"]) == (2, 2, 0.5, 1.0)
    assert binary_scores(gold, pred, "as_false")["ff1"] == pytest.approx(0.8)  # tp 2 fp 1 fn 0
    assert binary_scores(gold, pred, "as_true")["ff1"] == pytest.approx(2 / 3)  # tp 1 fp 0 fn 1
    with pytest.raises(ValueError, match="abstention policy"):
        binary_scores(gold, pred, "ignore")
    with pytest.raises(ValueError, match="gold label"):
        binary_scores([None], [T])


def test_healthfc_mapping():
    assert healthfc_label("SUPPORTED") == T
    assert healthfc_label("Refuted") == F
    assert healthfc_label("NOT ENOUGH INFORMATION") is None
    assert healthfc_label("NEI") is None
    with pytest.raises(ValueError):
        healthfc_label("MIXED")


def _constructed(n_per_cell=25):
    """400 claims, 1/4 gold FALSE. A finds half the FALSE claims, B finds all; neither flags a TRUE claim."""
    gold = [F] * 4 * n_per_cell + [T] * 12 * n_per_cell
    a = [F] * 2 * n_per_cell + [T] * 2 * n_per_cell + [T] * 12 * n_per_cell
    b = [F] * 4 * n_per_cell + [T] * 12 * n_per_cell
    return gold, a, b


def test_bootstrap_deterministic_and_covers_true_difference():
    gold, a, b = _constructed()
    r1 = paired_bootstrap(gold, a, b, n_resamples=2000, seed=7)
    r2 = paired_bootstrap(gold, a, b, n_resamples=2000, seed=7)
    assert r1 == r2
    assert paired_bootstrap(gold, a, b, n_resamples=2000, seed=8)["ci_low"] != r1["ci_low"]
    # true FF1: A = 2 * (1 * 0.5) / 1.5 = 2/3, B = 1 -> difference 1/3
    assert r1["score_a"] == pytest.approx(2 / 3) and r1["score_b"] == 1.0
    assert r1["diff"] == pytest.approx(1 / 3)
    assert r1["ci_low"] < 1 / 3 < r1["ci_high"]
    assert r1["ci_low"] > 0 and r1["significant"]
    assert r1["p_gt_0"] == 1.0 and r1["p_value"] == 0.0


def test_bootstrap_identical_systems_and_chunking():
    gold, a, _ = _constructed(5)
    r = paired_bootstrap(gold, a, a, n_resamples=300, seed=1)
    assert (r["diff"], r["ci_low"], r["ci_high"], r["p_value"], r["significant"]) == (0.0, 0.0, 0.0, 1.0, False)
    rng = np.random.default_rng(3)
    g = list(np.where(rng.random(60) < 0.4, F, T))
    pa = list(np.where(rng.random(60) < 0.3, F, T))
    pb = list(np.where(rng.random(60) < 0.5, F, T))
    assert paired_bootstrap(g, pa, pb, n_resamples=101, seed=2, chunk=1) == paired_bootstrap(g, pa, pb, n_resamples=101, seed=2, chunk=64)


def test_bootstrap_matches_a_plain_loop():
    rng = np.random.default_rng(11)
    n = 50
    g = list(np.where(rng.random(n) < 0.4, F, T))
    pa = list(np.where(rng.random(n) < 0.3, F, T))
    pb = [x if rng.random() < 0.8 else (T if x == F else F) for x in g]
    r = paired_bootstrap(g, pa, pb, metric="macro_f1", n_resamples=200, seed=5)
    draw = np.random.default_rng(5)
    diffs = []
    for _ in range(200):
        idx = draw.integers(0, n, size=n)
        gg = [g[i] for i in idx]
        diffs.append(binary_scores(gg, [pb[i] for i in idx])["macro_f1"] - binary_scores(gg, [pa[i] for i in idx])["macro_f1"])
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    assert r["p_gt_0"] == pytest.approx(np.mean(np.array(diffs) > 0))


def test_bootstrap_drop_scores_each_system_on_its_own_answers():
    gold = [F, F, T, T]
    a = [F, None, T, T]
    b = [F, F, T, None]
    r = paired_bootstrap(gold, a, b, n_resamples=50, seed=0, metric="accuracy")
    assert (r["score_a"], r["score_b"]) == (1.0, 1.0)
