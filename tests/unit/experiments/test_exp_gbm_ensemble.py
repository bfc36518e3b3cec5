"""Gradient boosting over CliniFact features, the features themselves, and ensembles of runs."""

from __future__ import annotations

import numpy as np
import pytest

from medfc.common.io import write_jsonl
from medfc.common.report import SkipReport
from medfc.experiments.models import features as F
from medfc.experiments.records import Example
from medfc.experiments.ensembles.ensemble import average_predictions
from medfc.experiments.models.gbm import fit_gbm
from medfc.experiments.models.options import GbmOptions
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
    # the Lancet journals' middle dot as the decimal point (not p = 0, which would count as significant)
    ("no difference (p=0·34); fewer relapses (p<0·0001); HR 0·61 (p value=0·012)", [("=", 0.34), ("<", 0.0001), ("=", 0.012)]),
    ("p = 2·5 × 10−6; p=2·10−5; P=1·2·10-8; p = 3e-4; p=1.5E-3", [("=", 2.5e-6), ("=", 2e-5), ("=", 1.2e-8), ("=", 3e-4), ("=", 1.5e-3)]),
    # "less (greater) than or equal" spelt out, as older PubMed records have it, and a space after the point
    ("(P < or = 0.05); p <or= 0.0002; P > or = 0.10; p <. 001", [("<", 0.05), ("<", 0.0002), (">", 0.1), ("<", 0.001)]),
])
def test_pvalues_are_read_with_their_operator(text, expected):
    assert [(op, pytest.approx(v)) for op, v in F.pvalues(text)] == expected


def test_a_lancet_abstract_reads_like_any_other():
    """The middle dot as decimal point: the same p-values, significance and number counts as with a point."""
    dotted = ("FINDINGS: Blood pressure fell more with drug A (mean 12·5 vs 8·1 mm Hg; p=0·003); "
              "sleep did not differ (p=0·41). 20·5% had adverse events.")
    idf = F.fit_idf([dotted])
    assert F.features(CLAIM, "", dotted, idf) == F.features(CLAIM, "", dotted.replace("·", "."), idf)
    f = F.features(CLAIM, "", dotted, idf)
    assert (f["n_p"], f["n_p_sig"], f["n_numbers"]) == (2, 1, 5)


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


# ------------------------------------------------------------------------------ embedding features


def _gbm_options(**kw) -> GbmOptions:
    return GbmOptions.from_mapping(section("experiments.gbm", model="sklearn:gbm", seeds=[0], min_samples_leaf=2, progress=False, **kw))


def test_gbm_with_embedding_features_adds_the_named_blocks_and_shares_the_frozen_kinds_store(tiny_bert, tmp_path):
    from medfc.experiments.models.embeddings import FrozenEncoder
    from medfc.experiments.models.frozen import evidence_text
    from medfc.experiments.models.kinds import build_model

    train = [_pair(lab, k) for lab in LABELS for k in range(8)]
    test = [_pair(lab, k) for lab in LABELS for k in (40, 41)]
    store = tmp_path / "embeddings"
    plain = build_model(_gbm_options(), threads=1).fit(train, LABELS, trim="left")
    hand = plain.result.n_features
    options = _gbm_options(embedding_model=str(tiny_bert), embedding_features=["cos", "difference", "product"], cache_dir=str(store))
    fitted = build_model(options, threads=1).fit(train, LABELS, trim="left")
    info = fitted.result.as_dict()
    assert (info["n_features"], info["n_embedding_features"]) == (hand + 1 + 16 + 16, 1 + 16 + 16)  # tiny BERT: 16 dimensions
    assert [LABELS[i] for i in fitted.probs(test).argmax(axis=1)] == [lab for lab in LABELS for _ in (40, 41)]
    # the features are the frozen kind's vectors: the claim's head, the title and abstract's tail (CliniFact), in the order named
    enc = FrozenEncoder(str(tiny_bert), cache_dir=store, progress=False)
    u = enc.embed([ex.text_a for ex in test], 128, "head")
    v = enc.embed([evidence_text(ex) for ex in test], 256, "tail")
    X = fitted.matrix(test)
    assert np.allclose(X[:, hand], (u * v).sum(axis=1), atol=1e-6)
    assert np.allclose(X[:, hand + 1 : hand + 17], np.abs(u - v), atol=1e-6) and np.allclose(X[:, hand + 17 :], u * v, atol=1e-6)
    assert enc.stats.encoded == 0  # all from the store the GBM job wrote
    # each distinct text once: the claim and the 21 distinct training abstracts (8 + 5 + 8), then the test's 2 new NEI abstracts
    assert fitted.encode_stats.as_dict()["encoded"] == 1 + 21 + 2
    # a frozen-minilm-style job with the same model and lengths reads the same vectors: nothing encoded again
    from tests.unit.experiments.test_exp_frozen import frozen_options

    frozen = build_model(frozen_options(tiny_bert, store, C_grid=[1.0]), threads=1)
    frozen.fit(train, LABELS, trim="left")
    assert frozen.encoder.stats.encoded == 0 and frozen.encoder._loaded is None
    # without embedding_model: the hand features and the encode entry of a model that reads texts whole
    assert plain.encode_stats.as_dict() == {"truncated": 0} and plain.result.as_dict()["n_embedding_features"] == 0


def test_a_token_budget_above_the_encoders_names_the_gbm_keys(tiny_bert, tmp_path):
    from medfc.experiments.models.kinds import build_model

    options = _gbm_options(embedding_model=str(tiny_bert), embedding_evidence_length=4096, cache_dir="")
    with pytest.raises(ValueError, match=r"reads at most 512 tokens, not 4096 \(experiments\.gbm\.embedding_claim_length / "
                                         r"embedding_evidence_length, or the alias's models\.options\)"):
        build_model(options, threads=1).fit([_pair(lab, k) for lab in LABELS for k in range(3)], LABELS, trim="left")


def test_embedding_features_follow_the_order_named_and_fit_gbm_makes_its_own_encoder(tiny_bert, tmp_path):
    from medfc.common.options import OptionsError

    train = [_pair(lab, k) for lab in LABELS for k in range(6)]
    val = [_pair(lab, k) for lab in LABELS for k in (30, 31)]
    options = _gbm_options(embedding_model=str(tiny_bert), embedding_features=["product", "cos"], cache_dir=str(tmp_path / "emb"),
                           refit_with_validation=False)
    fitted = fit_gbm(options, LABELS, train, val, trim="left")  # no encoder passed: the options' own
    assert fitted.encoder is not None and fitted.side == "tail"
    hand = fitted.result.n_features - 17
    X = fitted.matrix(val)
    assert np.allclose(X[:, hand + 16], X[:, hand : hand + 16].sum(axis=1), atol=1e-6)  # product first, then cos = its sum
    info = fitted.result.as_dict()
    assert info["n_train"] == 18 and info["n_embedding_features"] == 17 and set(info["validation"]) >= {"macro_f1"}
    with pytest.raises(OptionsError, match=r"embedding_model: 'frozen:offline:minilm' is a model kind's name; .*e\.g\. offline:minilm"):
        _gbm_options(embedding_model="frozen:offline:minilm")
