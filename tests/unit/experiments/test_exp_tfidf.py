"""The TF-IDF + logistic regression baseline: learns a constructed separable set, picks C on validation,
and runs every HealthFC system but joint and the CliniFact classifier."""

from __future__ import annotations

import numpy as np
import pytest

from medfc.common.options import OptionsError
from medfc.experiments import pairs as CF
from medfc.experiments.healthfc import runs as H
from medfc.experiments.records import Example
from medfc.experiments.models.options import CLINIFACT_PAIRS, PairsTrainOptions, TfidfOptions
from medfc.experiments.healthfc.systems import system as system_spec
from medfc.experiments.models.tfidf import fit_tfidf
from tests.helpers.config import section
from tests.helpers.experiment_data import healthfc_options

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
    fitted = fit_tfidf(tfidf_options(C_grid=[0.01, 1.0, 10.0], selection="validation", spaces=["separate"], analyzers=["word+char"]),
                       LABELS, train, val)
    probs = fitted.probs(test)
    assert probs.shape == (3, 3) and np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert [LABELS[i] for i in probs.argmax(axis=1)] == LABELS
    info = fitted.result.as_dict()
    assert set(info["validation"]) == {"separate/word+char/C=0.01", "separate/word+char/C=1", "separate/word+char/C=10"}
    best = max(v["macro_f1"] for v in info["validation"].values())
    first_best = next(k for k, v in info["validation"].items() if v["macro_f1"] == best)
    assert f"{info['variant']}/C={info['C']:g}" == first_best and info["selection"] == "validation" and info["cv_folds"] == 0
    assert info["n_train"] == 36 and info["n_features"] > 0  # refit on the 30 training + 6 validation examples
    assert fitted.probs([]).shape == (0, 3)
    with pytest.raises(ValueError, match="single class"):
        fit_tfidf(tfidf_options(), LABELS, _pairs({"evidence": 3}))


def test_the_joint_space_is_one_vectorizer_over_claim_sep_evidence_and_separate_one_per_text():
    train = _pairs({"evidence": 4, "inconclusive": 4, "NEI": 4})
    joint = fit_tfidf(tfidf_options(spaces=["joint"], analyzers=["word"], C_grid=[1.0]), LABELS, train)
    assert joint.result.variant == "joint/word" and len(joint.space.columns) == 1 and len(joint.space.columns[0]) == 1
    vocab = joint.space.columns[0][0].vocabulary_
    assert "sep" in vocab and "it work" in vocab and "the trial" in vocab and "work sep" in vocab  # one text: claim [SEP] evidence
    separate = fit_tfidf(tfidf_options(spaces=["separate"], analyzers=["word+char"], C_grid=[1.0]), LABELS, train)
    assert separate.result.variant == "separate/word+char" and [len(c) for c in separate.space.columns] == [2, 2]
    assert "sep" not in separate.space.columns[0][0].vocabulary_ and "the trial" in separate.space.columns[1][0].vocabulary_
    # the default is the reference baseline (word 1-2-grams, sublinear tf, min_df 1, balanced LR at C=1 over
    # "claim [SEP] evidence"): one candidate, nothing chosen, and its probabilities are the reference's
    default = fit_tfidf(tfidf_options(), LABELS, train)
    assert (default.result.variant, default.result.C, default.result.validation, default.result.cv_folds) == ("joint/word", 1.0, {}, 0)
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    texts = [f"{ex.text_a} [SEP] {ex.text_b}" for ex in train]
    ref_vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1)
    ref = LogisticRegression(C=1.0, class_weight="balanced", max_iter=3000).fit(ref_vec.fit_transform(texts), [ex.label for ex in train])
    test = [Example("does it work 99", f"the trial was {WORDS[lab]} overall", lab) for lab in LABELS]
    ref_probs = ref.predict_proba(ref_vec.transform([f"{ex.text_a} [SEP] {ex.text_b}" for ex in test]))
    ours = default.probs(test)
    assert np.allclose(ours, joint.probs(test))
    assert np.allclose(ours[:, [LABELS.index(c) for c in ref.classes_]], ref_probs, atol=1e-4)
    # a single text: joint and separate are the same space, so only the first is a candidate
    single = [Example(ex.text_a, None, ex.label) for ex in train]
    fitted = fit_tfidf(tfidf_options(spaces=["separate", "joint"], analyzers=["word"], C_grid=[1.0, 3.0]), LABELS, single)
    assert set(fitted.result.validation) == {"separate/word/C=1", "separate/word/C=3"}


def test_cv_selection_folds_only_the_examples_it_fits_and_picks_the_best_mean():
    # the claim words carry the label in the separate space only weakly; whatever wins, the choice is the best mean
    train = _pairs({"evidence": 10, "inconclusive": 10, "NEI": 10})
    val = _pairs({"evidence": 2, "inconclusive": 2, "NEI": 2}, claim="another claim")
    opts = tfidf_options(C_grid=[1.0, 0.01], cv_folds=3, spaces=["joint", "separate"], analyzers=["word", "word+char"])
    fitted = fit_tfidf(opts, LABELS, train, val)
    info = fitted.result.as_dict()
    assert info["selection"] == "cv" and info["cv_folds"] == 3 and info["n_train"] == 36
    assert set(info["validation"]) == {f"{s}/{a}/C={c}" for s in ("joint", "separate") for a in ("word", "word+char") for c in ("1", "0.01")}
    best = max(v["macro_f1"] for v in info["validation"].values())
    assert info["validation"][f"{info['variant']}/C={info['C']:g}"]["macro_f1"] == best
    # without refit_with_validation the validation examples are neither folded nor fit
    alone = fit_tfidf(tfidf_options(C_grid=[1.0], cv_folds=3, refit_with_validation=False), LABELS, train, val)
    assert alone.result.n_train == 30
    # the rarest class bounds the folds; below two there is nothing to fold and the first candidate is used
    few = fit_tfidf(tfidf_options(cv_folds=5, C_grid=[1.0, 3.0]), LABELS, _pairs({"evidence": 6, "inconclusive": 3, "NEI": 3}))
    assert few.result.cv_folds == 3
    none = fit_tfidf(tfidf_options(cv_folds=5, C_grid=[1.0, 3.0]), LABELS, _pairs({"evidence": 6, "inconclusive": 1, "NEI": 3}))
    assert none.result.cv_folds == 0 and none.result.validation == {} and none.result.variant == "joint/word" and none.result.C == 1.0


@pytest.mark.parametrize("system", ["pipeline", "oracle", "claims_only", "gold_explanations", "level_of_evidence"])
def test_every_healthfc_system_but_joint_runs_with_tfidf(system, healthfc_data, healthfc_recs):
    ds, folds = healthfc_data
    records, info = H.run_fold(ds, folds, healthfc_options(system, tfidf_options(), fold=1))
    assert records and {r["system"] for r in records} == {system}
    assert all(r["pred_label"] == max(r["probs"], key=r["probs"].get) for r in records)
    assert info["config"]["model"] == "sklearn:tfidf"
    if system == "pipeline":
        assert all(len(r["pred_evidence_ids"]) <= 5 for r in records) and info["evidence_model"]["n_train_pairs"] > 0


def test_joint_needs_an_encoder(healthfc_data):
    ds, folds = healthfc_data
    with pytest.raises(OptionsError, match=r"\.train: the joint system needs a model of kind encoder, not tfidf \(sklearn:tfidf\)"):
        healthfc_options("joint", tfidf_options(), fold=1)


def test_clinifact_with_tfidf(clinifact_data):
    options = PairsTrainOptions(CLINIFACT_PAIRS, tfidf_options(), include_title=True, predict_splits=("test",), checkpoint_dir=None)
    records, info = CF.run_discriminative(clinifact_data, options)
    assert len(records) == 6 and {r["split"] for r in records} == {"test"}
    assert info["train"]["C"] in section("experiments.tfidf")["C_grid"] and info["encode"] == {"truncated": 0}
    assert info["train"]["selection"] == "cv" and info["train"]["n_train"] == 18  # folded over train + validation, never test


def _healthfc_files(tmp_path, n=30, n_folds=3):
    """HealthFC records whose claims are unique texts (so the spy can tell them apart), folds k % n_folds."""
    import json

    labels = ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED"]
    words = {"SUPPORTED": "clearly helped", "NOT ENOUGH INFO": "was never studied", "REFUTED": "did not help"}
    recs = []
    for k in range(n):
        lab = labels[k % 3]
        recs.append({"id": f"c{k:02d}", "claim_en": f"does remedy{k} work", "label": lab, "evidence_level": "high",
                     "explanation_en": f"remedy{k} {words[lab]}", "sentences_en": [f"in trials remedy{k} {words[lab]}.", "we searched."],
                     "evidence_ids": [0]})
    ds, folds = tmp_path / "healthfc.jsonl", tmp_path / "folds.csv"
    ds.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    folds.write_text("id,fold\n" + "".join(f"{r['id']},{k % n_folds}\n" for k, r in enumerate(recs)), encoding="utf-8")
    return ds, folds, {r["claim_en"]: k % n_folds for k, r in enumerate(recs)}


def test_healthfc_tfidf_choices_and_refit_never_see_the_test_fold(tmp_path, monkeypatch):
    from medfc.experiments.models import tfidf as T

    ds, folds, fold_of = _healthfc_files(tmp_path)
    seen: list[tuple[str, list[str]]] = []
    fit_transform, transform = T.Space.fit_transform, T.Space.transform
    monkeypatch.setattr(T.Space, "fit_transform", lambda self, ex: seen.append(("fit", [e.text_a for e in ex])) or fit_transform(self, ex))
    monkeypatch.setattr(T.Space, "transform", lambda self, ex: seen.append(("apply", [e.text_a for e in ex])) or transform(self, ex))
    tfidf = tfidf_options(cv_folds=3, spaces=["joint", "separate"], analyzers=["word", "word+char"])
    records, info = H.run_fold(ds, folds, healthfc_options("oracle", tfidf, fold=1, val_fraction=0.0))
    test_claims = {c for c, f in fold_of.items() if f == 1}
    train_claims = {c for c, f in fold_of.items() if f != 1}
    choosing, predicting = seen[:-2], seen[-2:]  # the refit's fit_transform, then the test fold's transform
    assert info["n_train"] == 20 and info["n_validation"] == 0 and info["model"]["train"]["cv_folds"] == 3
    assert all(set(texts) <= train_claims for _, texts in choosing)  # no test claim in any choice
    assert len(choosing) == 3 * 2 * 2 * 2  # 3 inner folds x 2 spaces x 2 analyzers, fit + apply each
    for k in range(3):  # each inner fold: fit on two thirds of the training claims, apply to the rest
        fit, apply = choosing[k * 8][1], choosing[k * 8 + 1][1]
        assert not set(fit) & set(apply) and set(fit) | set(apply) == train_claims
    assert predicting[0] == ("fit", predicting[0][1]) and sorted(predicting[0][1]) == sorted(train_claims)  # the refit: every training claim
    assert predicting[1][0] == "apply" and set(predicting[1][1]) == test_claims
    assert {r["id"] for r in records} == {f"c{k:02d}" for k in range(30) if k % 3 == 1}


@pytest.mark.parametrize("system", ["retrieved_web", "open_domain_pubmed"])
def test_the_retrieved_evidence_systems_read_the_first_k_snippets_of_their_source(system, healthfc_data, healthfc_recs, tmp_path):
    from medfc.common.io import write_jsonl
    from medfc.scoring.steps import score_healthfc

    ds, folds = healthfc_data
    evidence = tmp_path / "evidence.jsonl"
    word = {"SUPPORTED": "confirmed", "REFUTED": "disproved", "NOT ENOUGH INFO": "unclear"}
    write_jsonl(evidence, [{"id": r["id"], "rank": n, "snippet": f"{r['id']} snippet {n} {word[r['label']]}"}
                           for r in healthfc_recs for n in (3, 1, 2)])  # out of rank order on purpose
    opts = healthfc_options(system, tfidf_options(), fold=1, retrieved_top_k=2)
    records, info = H.run_fold(ds, folds, opts, evidence=evidence)
    test_ids = [r["id"] for k, r in enumerate(healthfc_recs) if k % 2 == 1]
    binary = system.startswith("open_domain_")
    expected = [i for i, r in zip(test_ids, [r for k, r in enumerate(healthfc_recs) if k % 2 == 1])
                if not binary or r["label"] != "NOT ENOUGH INFO"]
    assert sorted(r["id"] for r in records) == sorted(expected)
    assert all(r["evidence"] == [f"{r['id']} snippet 1 {word[r['label']]}", f"{r['id']} snippet 2 {word[r['label']]}"] for r in records)
    assert {lab for r in records for lab in r["probs"]} == ({"SUPPORTED", "REFUTED"} if binary else {"SUPPORTED", "NOT ENOUGH INFO", "REFUTED"})
    scores = score_healthfc(records, system, labels=system_spec(system).labels, evidence=None, abstain="drop")
    assert set(scores["veracity"]["per_class"]) == ({"SUPPORTED", "REFUTED"} if binary else {"SUPPORTED", "NOT ENOUGH INFO", "REFUTED"})
    with pytest.raises(ValueError, match="needs the evidence file of source"):
        H.run_fold(ds, folds, opts)
