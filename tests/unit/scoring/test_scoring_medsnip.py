"""FF1, OR-FALSE, abstentions, HealthFC mapping and the paired bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from medfc.scoring.medsnip import (
    FALSE,
    TRUE,
    answer_verdicts,
    binary_scores,
    clustered_paired_bootstrap,
    healthfc_binary,
    healthfc_label,
    healthfc_nei_predictions,
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


def test_ff1_zero_denominators():
    assert binary_scores([F, T], [T, T])["ff1"] == 0.0  # nothing predicted FALSE: precision undefined -> 0
    assert binary_scores([T, T], [F, T])["ff1"] == 0.0  # no gold FALSE: recall undefined -> 0
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
    # decided at the first FALSE: the units after it are not read (a malformed one included)
    assert or_false([F, "garbage"]) == F and or_false([None, "garbage"], abstain="as_false") == F
    with pytest.raises(ValueError):
        or_false([T, "garbage"])


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


def _repository_msb_boot(atom_codes, snip_codes, n_boot, seed):
    """msb_column_cis.py's ``boot`` as SOURCES.md §9f and the repository describe it, written out literally:
    entry -> outcome codes per arm, the sorted entries both arms hold, one ``rng.choice`` per resample
    from ``default_rng(seed)``, Δ = F1(snippets) - F1(atoms) with Δ = 0 when an arm draws no units,
    F1 = 2TP / (2TP + FP + FN), and the 2.5 / 97.5 percentiles."""
    def f1(codes):
        tp, fp, fn = codes.count("tp"), codes.count("fp"), codes.count("fn")
        return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0

    def gap(entries):
        a = [c for e in entries for c in atom_codes.get(e, ())]
        s = [c for e in entries for c in snip_codes.get(e, ())]
        return 0.0 if not a or not s else f1(s) - f1(a)

    entries = sorted(set(atom_codes) & set(snip_codes))
    rng = np.random.default_rng(seed)
    idx = np.arange(len(entries))
    draws = np.empty(n_boot)
    for b in range(n_boot):
        draws[b] = gap([entries[i] for i in rng.choice(idx, size=len(entries), replace=True)])
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return gap(entries), float(lo), float(hi), draws, entries


def _codes(arm):
    """entry (int) -> outcome codes of the arm's scored units (an abstaining unit is no unit)."""
    out: dict[int, list[str]] = {}
    for g, p, c in zip(*arm):
        out.setdefault(int(c), [])
        if p is not None:
            out[int(c)].append({(F, F): "tp", (T, F): "fp", (F, T): "fn", (T, T): "tn"}[(g, p)])
    return out


def test_clustered_bootstrap_sorted_intersection_as_the_repository():
    """Clusters only one arm holds and a first-appearance order unlike the sorted one: the repository's
    variant resamples the numerically sorted intersection (the repository's entry ids are integers)."""
    rng = np.random.default_rng(5)
    ca = ["10", "2", "7", "3", "10", "2", "7", "3", "21", "10", "7", "2", "21", "3"]  # "3" only in A
    cb = ["7", "21", "2", "10", "4", "7", "2", "10", "21", "4"]  # "4" only in B
    arm_a = ([[T, F][int(rng.integers(0, 2))] for _ in ca], [[T, F][int(rng.integers(0, 2))] for _ in ca], ca)
    arm_b = ([[T, F][int(rng.integers(0, 2))] for _ in cb], [[T, F][int(rng.integers(0, 2))] for _ in cb], cb)
    r = clustered_paired_bootstrap(arm_a, arm_b, n_resamples=2000, seed=42, alpha=1 - 0.95, clusters="sorted_intersection")
    point, lo, hi, draws, entries = _repository_msb_boot(_codes(arm_a), _codes(arm_b), 2000, 42)
    assert entries == [2, 7, 10, 21]
    assert r["diff"] == pytest.approx(point, abs=1e-12)
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert r["p_gt_0"] == np.mean(draws > 0)
    assert (r["clusters"], r["n_clusters"], r["n_clusters_a_only"], r["n_clusters_b_only"]) == ("sorted_intersection", 4, 1, 1)
    assert r["ci_level"] == 0.95
    union = clustered_paired_bootstrap(arm_a, arm_b, n_resamples=2000, seed=42, alpha=1 - 0.95)
    assert union["clusters"] == "union" and union["n_clusters"] == 6
    assert (union["ci_low"], union["ci_high"]) != (r["ci_low"], r["ci_high"])


def test_sorted_intersection_gives_delta_zero_when_an_arm_draws_no_units():
    # cluster 1: arm A's only unit abstains (dropped), so a resample of cluster 1 alone has no A unit
    arm_a = ([F, F, T], [None, F, T], ["1", "2", "2"])
    arm_b = ([F, T, F, T], [F, T, T, F], ["1", "1", "2", "2"])
    r = clustered_paired_bootstrap(arm_a, arm_b, n_resamples=400, seed=3, clusters="sorted_intersection")
    point, lo, hi, draws, _ = _repository_msb_boot(_codes(arm_a), _codes(arm_b), 400, 3)
    picks = np.random.default_rng(3).integers(0, 2, size=(400, 2))
    only_1 = (picks == 0).all(axis=1)
    assert only_1.sum() > 0 and (draws[only_1] == 0).all()
    assert r["n_empty_resamples"] == int(only_1.sum())
    assert (r["ci_low"], r["ci_high"], r["p_gt_0"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12), np.mean(draws > 0))
    # one shared cluster where A has no scored unit: every resample, and the point, is Δ = 0
    alone = clustered_paired_bootstrap(([F], [None], ["1"]), ([F, T], [F, T], ["1", "1"]), n_resamples=50, seed=0,
                                       clusters="sorted_intersection")
    assert (alone["diff"], alone["ci_low"], alone["ci_high"], alone["p_gt_0"], alone["n_empty_resamples"]) == (0.0, 0.0, 0.0, 0.0, 50)
    assert clustered_paired_bootstrap(([F], [None], ["1"]), ([F, T], [F, T], ["1", "1"]), n_resamples=50, seed=0)["diff"] == 1.0


def test_clustered_bootstrap_default_is_the_union_in_first_appearance_order():
    arm_a = ([F, T, T, F, T, T, T], [F, T, F, T, T, T, F], ["x", "x", "x", "y", "y", "z", "z"])
    arm_b = ([F, F, T, T, F], [F, T, T, T, F], ["x", "y", "z", "z", "w"])
    default = clustered_paired_bootstrap(arm_a, arm_b, n_resamples=300, seed=2)
    assert default == clustered_paired_bootstrap(arm_a, arm_b, n_resamples=300, seed=2, clusters="union")
    assert default["n_clusters"] == 4 and default["clusters"] == "union"
    with pytest.raises(ValueError, match="clusters"):
        clustered_paired_bootstrap(arm_a, arm_b, n_resamples=10, seed=0, clusters="sorted")
    with pytest.raises(ValueError, match="percentile"):
        clustered_paired_bootstrap(arm_a, arm_b, n_resamples=10, seed=0, clusters="sorted_intersection", method="bca")


def test_healthfc_nei_claims_predicted_true_and_false():
    records = [
        {"id": "1", "label": "SUPPORTED", "pred_label": "SUPPORTED"},
        {"id": "2", "label": "NOT ENOUGH INFO", "pred_label": "SUPPORTED"},
        {"id": "3", "label": "NOT ENOUGH INFO", "pred_label": "REFUTED"},
        {"id": "4", "label": "REFUTED", "pred_label": "REFUTED"},
        {"id": "5", "label": "NOT ENOUGH INFO", "pred_label": "NOT ENOUGH INFO"},
        {"id": "6", "label": "NOT ENOUGH INFO", "pred_label": True},
        {"id": "7", "label": "NOT ENOUGH INFO", "pred_label": None, "unit_verdicts": [T, F]},
        {"id": "8", "label": "NOT ENOUGH INFO", "pred_label": "TRUE"},
    ]
    assert healthfc_nei_predictions(records) == {"n": 6, "n_pred_true": 3, "n_pred_false": 2, "n_pred_none": 1,
                                                 "share_true": 0.5, "share_false": pytest.approx(1 / 3)}
    assert healthfc_binary(records)[0] == [0, 3]  # the NEI claims are still not scored
    assert healthfc_nei_predictions(records[:1]) == {"n": 0, "n_pred_true": 0, "n_pred_false": 0, "n_pred_none": 0,
                                                     "share_true": 0.0, "share_false": 0.0}
