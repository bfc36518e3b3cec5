"""AVeriTeC scorer: assignment, empty-evidence rule, λ gate, labels, readers; METEOR with WordNet."""

from __future__ import annotations

import json

import pytest

from medfc.scoring.averitec import (
    AVERITEC_LABELS,
    ClaimPrediction,
    averitec_evidence_strings,
    claim_from_record,
    claims_from_averitec,
    evidence_score,
    normalise_label,
    read_averitec_json,
    score_claims,
)

SUP, REF, CON, NEE = AVERITEC_LABELS


def table_metric(table):
    """Stand-in pair metric: ``table[(prediction, gold)]``, 0 when absent."""
    return lambda pred, gold: table.get((pred, gold), 0.0)


# ---- evidence score -------------------------------------------------------------------------


def test_assignment_is_optimal_not_greedy():
    # greedy on p1 would take g1 (0.9) and leave p2-g2 = 0.1: 1.0; optimum is 0.8 + 0.8 = 1.6
    m = table_metric({("p1", "g1"): 0.9, ("p1", "g2"): 0.8, ("p2", "g1"): 0.8, ("p2", "g2"): 0.1})
    assert evidence_score(["p1", "p2"], ["g1", "g2"], m) == pytest.approx(1.6 / 2)


def test_ties_in_the_assignment():
    m = table_metric({(p, g): 0.5 for p in ("p1", "p2") for g in ("g1", "g2")})
    assert evidence_score(["p1", "p2"], ["g1", "g2"], m) == pytest.approx(0.5)
    m2 = table_metric({("p1", "g1"): 0.5, ("p1", "g2"): 0.5, ("p2", "g1"): 0.5, ("p2", "g2"): 0.2})
    assert evidence_score(["p1", "p2"], ["g1", "g2"], m2) == pytest.approx(0.5)


def test_each_string_matched_at_most_once_and_divided_by_gold_count():
    m = table_metric({("p1", "g1"): 0.8, ("p2", "g1"): 0.6})
    # only one prediction can take g1; four gold strings in the denominator
    assert evidence_score(["p1", "p2"], ["g1", "g2", "g3", "g4"], m) == pytest.approx(0.8 / 4)
    # more predictions than gold: the best one per gold string is used
    m3 = table_metric({("p1", "g1"): 0.2, ("p2", "g1"): 0.7, ("p3", "g1"): 0.4})
    assert evidence_score(["p1", "p2", "p3"], ["g1"], m3) == pytest.approx(0.7)


def test_predictions_capped_at_ten():
    preds = [f"p{i}" for i in range(12)]
    m = table_metric({("p11", "g1"): 1.0, ("p0", "g1"): 0.3})
    assert evidence_score(preds, ["g1"], m) == pytest.approx(0.3)
    assert evidence_score(preds, ["g1"], m, max_pred=None) == pytest.approx(1.0)


def test_empty_evidence_rule():
    m = table_metric({})
    assert evidence_score([], [], m) == 1.0
    assert evidence_score(["  ", ""], [" "], m) == 1.0  # blank strings are dropped first
    assert evidence_score(["p"], [], m) == 0.0
    assert evidence_score([], ["g"], m) == 0.0


# ---- claim-level scores -----------------------------------------------------------------------


def _claim(i, gold, pred, ev_pred=("p",), ev_gold=("g",), **kw):
    return ClaimPrediction(id=str(i), label=gold, pred_label=pred, evidence=list(ev_pred), gold_evidence=list(ev_gold), **kw)


def test_lambda_gate_is_strict():
    # one prediction scoring 0.5 against one of two gold strings -> evidence score exactly 0.25
    m = table_metric({("p", "g1"): 0.5})
    claims = [_claim(1, SUP, SUP, ("p",), ("g1", "g2"))]
    s = score_claims(claims, metric=m)
    assert s["evidence_score"] == 0.25
    assert s["averitec"] == {"0.1": 1.0, "0.2": 1.0, "0.25": 0.0, "0.3": 0.0, "0.4": 0.0, "0.5": 0.0}


def test_averitec_needs_label_and_evidence():
    m = table_metric({("good", "g"): 0.9, ("bad", "g"): 0.05})
    claims = [
        _claim(1, SUP, SUP, ("good",)),  # right label, good evidence -> 1
        _claim(2, REF, SUP, ("good",)),  # wrong label -> 0
        _claim(3, REF, REF, ("bad",)),   # evidence below every lambda -> 0
        _claim(4, NEE, NEE, ()),         # no predicted evidence -> 0
    ]
    s = score_claims(claims, metric=m, per_claim=True)
    assert s["averitec"]["0.25"] == pytest.approx(0.25)
    assert s["averitec"]["0.1"] == pytest.approx(0.25)
    assert s["evidence_score"] == pytest.approx((0.9 + 0.9 + 0.05 + 0) / 4)
    assert [c["correct"] for c in s["claims"]] == [True, False, True, True]
    assert s["n_no_pred_evidence"] == 1


def test_label_macro_f1_with_unpredicted_class_and_label_spelling():
    m = table_metric({})
    claims = [
        _claim(1, SUP, "supported"),
        _claim(2, REF, "Refuted"),
        _claim(3, CON, "Refuted"),
        _claim(4, NEE, "Not Enough Evidence"),
    ]
    s = score_claims(claims, metric=m)
    # Supported 1, Refuted P .5 R 1 -> 2/3, Conflicting never predicted 0, NEE 1
    assert s["label"]["per_class"][CON]["f1"] == 0.0
    assert s["label"]["macro_f1"] == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)
    assert s["label"]["accuracy"] == pytest.approx(0.75)
    assert normalise_label("Conflicting Evidence/Cherrypicking") == CON
    with pytest.raises(ValueError, match="not an AVeriTeC label"):
        score_claims([_claim(9, "Mostly true", SUP)], metric=m)


def test_justification_gated_on_evidence_only():
    # official: the gated justification score at λ needs evidence > λ, not a right label
    m = table_metric({("p", "g"): 0.3, ("J", "GJ"): 0.6, ("K", "GJ"): 0.4})
    claims = [
        _claim(1, SUP, SUP, justification="J", gold_justification="GJ"),  # ev 0.3, right label
        _claim(2, SUP, REF, justification="K", gold_justification="GJ"),  # ev 0.3, wrong label: still counts
        _claim(3, SUP, SUP, justification="", gold_justification="GJ"),  # empty justification given -> 0
        _claim(4, SUP, SUP),  # no gold justification: not in the justification average
    ]
    s = score_claims(claims, metric=m)
    j = s["justification"]
    assert j["n"] == 3
    assert j["meteor"] == pytest.approx((0.6 + 0.4 + 0) / 3)
    assert j["gated"]["0.25"] == pytest.approx((0.6 + 0.4) / 3)
    assert j["gated"]["0.3"] == 0.0  # 0.3 is not > 0.3
    assert (j["fallback"], j["n_from_evidence"]) == (True, 0)
    assert s["averitec"]["0.25"] == pytest.approx(0.75)  # claims 1, 3, 4: label right and ev 0.3 > 0.25
    assert score_claims([_claim(1, SUP, SUP)], metric=m)["justification"] is None


# ---- readers -----------------------------------------------------------------------------------


GOLD_EXAMPLE = {
    "claim": "X cures Y.",
    "label": "Refuted",
    "justification": "No trial shows it.",
    "claim_types": ["Causal Claim"],
    "questions": [
        {"question": "Is there a trial?", "answers": [
            {"answer": "No", "answer_type": "Boolean", "boolean_explanation": "None was registered."},
            {"answer": "A 2019 review found none.", "answer_type": "Extractive"},
        ]},
        {"question": "Who made the claim?", "answers": []},
        {"question": "Is it approved?", "answers": [{"answer": "No", "answer_type": "Boolean", "boolean_explanation": ""}]},
        {"question": "Sold where? ", "answers": [{"answer": " In  shops", "answer_type": "Abstractive"}]},
    ],
    "string_evidence": [" free  text "],
}


def test_averitec_evidence_strings_as_the_official_script_builds_them():
    assert averitec_evidence_strings(GOLD_EXAMPLE) == [
        "Is there a trial? No. None was registered.",  # Boolean: ". " + boolean_explanation
        "Is there a trial? A 2019 review found none.",
        "Who made the claim? No answer could be found.",  # question without answers
        "Is it approved? No. ",  # Boolean with an empty explanation still gets ". "
        "Sold where?   In  shops",  # nothing stripped or collapsed
        " free  text ",  # string_evidence as it is
    ]
    pred = {"pred_label": "Refuted", "evidence": [{"question": "Q?", "answer": "A."}, "free text"]}
    assert averitec_evidence_strings(pred) == ["Q? A.", "free text"]


def test_claims_from_averitec_pairs_by_position(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([GOLD_EXAMPLE]), encoding="utf-8")
    gold = read_averitec_json(path)
    claims = claims_from_averitec(gold, [{"pred_label": "Refuted", "evidence": [], "justification": "J"}])
    assert claims[0].label == "Refuted" and claims[0].pred_label == "Refuted"
    assert len(claims[0].gold_evidence) == 6 and claims[0].evidence == []
    assert claims[0].gold_questions == ["Is there a trial?", "Who made the claim?", "Is it approved?", "Sold where? "]
    assert claims[0].questions is None and claims[0].claim_types == ["Causal Claim"] and claims[0].verbatim
    assert claims[0].gold_justification == "No trial shows it." and claims[0].justification == "J"
    with pytest.raises(ValueError, match="paired by position"):
        claims_from_averitec(gold, [])


def test_claim_from_record():
    c = claim_from_record({"id": 7, "label": "Supported", "pred_label": "Refuted", "evidence": ["a"], "gold_evidence": "b"})
    assert (c.id, c.evidence, c.gold_evidence, c.justification) == ("7", ["a"], ["b"], None)
    assert (c.questions, c.gold_questions, c.claim_types, c.verbatim) == (None, None, [], False)
    c = claim_from_record({"id": 8, "label": "Supported", "pred_label": "Refuted", "questions": ["q"],
                           "gold_questions": ["g1", "g2"], "claim_types": ["Numerical Claim"]})
    assert (c.questions, c.gold_questions, c.claim_types) == (["q"], ["g1", "g2"], ["Numerical Claim"])
    with pytest.raises(ValueError, match="pred_label"):
        claim_from_record({"id": 1, "label": "Supported"})


# ---- parity with the official evaluation script (hand-computed, stand-in metric) ----------------


def _qa(question, *answers):
    return {"question": question, "answers": [{"answer": a, "answer_type": "Extractive"} for a in answers]}


def _gold(label=SUP, questions=(), strings=(), types=("Numerical Claim",), justification="GJ"):
    return {"label": label, "justification": justification, "claim_types": list(types),
            "questions": list(questions), "string_evidence": list(strings)}


def test_question_only_score():
    m = table_metric({
        ("P1?", "G1?"): 0.6, ("P1?", "G2?"): 0.5, ("P2?", "G1?"): 0.4, ("P2?", "G2?"): 0.1,
        ("S1", "G3?"): 0.8,
        ("q10?", "G4?"): 1.0, ("q0?", "G4?"): 0.2,
        ("S2", "G6?"): 0.9,
    })
    gold = [
        _gold(questions=[_qa("G1?", "a"), _qa("G2?", "b")]),
        _gold(questions=[_qa("G3?", "c")]),
        _gold(questions=[_qa("G4?", "d"), _qa("G5?")]),
        _gold(questions=[_qa("G6?", "e")]),
    ]
    pred = [
        # Hungarian: P1?-G2? 0.5 + P2?-G1? 0.4 = 0.9 beats 0.6 + 0.1; / 2 gold questions = 0.45
        {"label": SUP, "questions": [_qa("P1?", "x"), _qa("P2?", "y")]},
        # no "questions" key: its evidence strings stand in for the questions -> 0.8 / 1
        {"label": SUP, "string_evidence": ["S1"]},
        # 11 questions: the 11th (a perfect match) is not read -> 0.2 / 2 gold questions = 0.1
        {"label": SUP, "questions": [_qa(f"q{i}?", "z") for i in range(11)]},
        # "questions" present but empty: no fallback -> 0
        {"label": SUP, "questions": [], "string_evidence": ["S2"]},
    ]
    s = score_claims(claims_from_averitec(gold, pred), metric=m, per_claim=True)
    assert [c["question_only_score"] for c in s["claims"]] == pytest.approx([0.45, 0.8, 0.1, 0.0])
    assert s["question_only_score"] == pytest.approx((0.45 + 0.8 + 0.1 + 0.0) / 4)  # 0.3375
    assert (s["n_question_only"], s["n_questions_from_evidence"]) == (4, 1)


def test_justification_fallback_to_first_ten_evidence_strings():
    joined = " ".join(f"s{i}" for i in range(10))  # "s0 s1 ... s9": s10 is not part of it
    m = table_metric({("s0", "g"): 0.3, ("p", "g"): 0.2, (joined, "GJ"): 0.7, ("J", "GJ"): 0.4})
    gold = [_gold(strings=["g"]), _gold(strings=["g"]), _gold(strings=["g"])]
    pred = [
        {"label": SUP, "string_evidence": [f"s{i}" for i in range(11)]},  # no justification; ev 0.3
        {"label": REF, "string_evidence": ["p"], "justification": "J"},  # ev 0.2, wrong label
        {"label": SUP, "string_evidence": [], "justification": None},  # null = absent; no evidence -> ""
    ]
    claims = claims_from_averitec(gold, pred)
    j = score_claims(claims, metric=m)["justification"]
    assert j["meteor"] == pytest.approx((0.7 + 0.4 + 0.0) / 3)
    assert j["gated"]["0.1"] == pytest.approx((0.7 + 0.4) / 3)  # label not involved
    assert j["gated"]["0.25"] == pytest.approx(0.7 / 3)  # only claim 1 has ev > 0.25
    assert j["gated"]["0.3"] == 0.0
    assert (j["fallback"], j["n_from_evidence"]) == (True, 2)
    strict = score_claims(claims, metric=m, justification_fallback=False)["justification"]
    assert strict["meteor"] == pytest.approx(0.4 / 3)
    assert strict["gated"]["0.1"] == pytest.approx(0.4 / 3) and strict["gated"]["0.25"] == 0.0
    assert (strict["fallback"], strict["n_from_evidence"]) == (False, 0)


def test_evidence_score_by_claim_type():
    m = table_metric({("p1", "g"): 0.25, ("p2", "g"): 0.5, ("p3", "g"): 0.2, ("p4", "g"): 0.35})
    gold = [
        _gold(strings=["g"], types=["Numerical Claim"]),
        _gold(strings=["g"], types=["Numerical Claim", "Position Statement"]),  # counts in both
        _gold(strings=["g"], types=["Position Statement"]),
        _gold(strings=["g"], types=["Event/Property Claim"]),
    ]
    pred = [
        {"label": SUP, "string_evidence": ["p1"]},
        {"label": REF, "string_evidence": ["p2"]},  # wrong label: does not matter
        {"label": SUP, "string_evidence": ["p3"]},  # 0.2 <= 0.2 -> 0 at both λ
        {"label": SUP, "string_evidence": ["p4"]},
    ]
    s = score_claims(claims_from_averitec(gold, pred), metric=m)
    by_type = s["evidence_score_by_claim_type"]
    assert list(by_type) == ["0.2", "0.3"]
    assert list(by_type["0.2"]) == ["Numerical Claim", "Position Statement", "Event/Property Claim"]
    assert by_type["0.2"] == {"Numerical Claim": pytest.approx((0.25 + 0.5) / 2), "Position Statement": pytest.approx(0.5 / 2),
                              "Event/Property Claim": pytest.approx(0.35)}
    assert by_type["0.3"] == {"Numerical Claim": pytest.approx(0.5 / 2), "Position Statement": pytest.approx(0.5 / 2),
                              "Event/Property Claim": pytest.approx(0.35)}
    assert s["n_by_claim_type"] == {"Numerical Claim": 2, "Position Statement": 2, "Event/Property Claim": 1}
    assert score_claims([_claim(1, SUP, SUP)], metric=m)["evidence_score_by_claim_type"] is None


def test_evidence_strings_scored_as_built_ten_predicted_all_gold():
    boolean = {"question": "Q1?", "answers": [{"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "E."}]}
    m = table_metric({
        ("Q1? Yes. E.", "Q1? Yes. E."): 1.0,  # Boolean: ". " + explanation on both sides
        ("Q2? No answer could be found.", "Q2? No answer could be found."): 0.9,  # unanswered question
        ("s10", "g0"): 1.0, ("s0", "g0"): 0.6, ("s1", "g1"): 0.6,
    })
    gold = [
        _gold(questions=[boolean, _qa("Q2?")], strings=["S"]),
        _gold(strings=[f"g{i}" for i in range(12)]),
        _gold(strings=["g0", " "]),
    ]
    pred = [
        {"label": SUP, "questions": [boolean, _qa("Q2?")]},
        {"label": SUP, "string_evidence": [f"s{i}" for i in range(11)]},
        {"label": SUP, "string_evidence": ["s0"]},
    ]
    s = score_claims(claims_from_averitec(gold, pred), metric=m, per_claim=True)
    ev = [c["evidence_score"] for c in s["claims"]]
    assert ev[0] == pytest.approx((1.0 + 0.9) / 3)  # the gold string_evidence "S" is unmatched
    assert ev[1] == pytest.approx((0.6 + 0.6) / 12)  # s10 is the 11th string: not read; all 12 gold count
    assert ev[2] == pytest.approx(0.6 / 2)  # a blank gold string still counts, as officially
    assert s["n_pred_evidence_truncated"] == 1
    # the workflow's JSONL drops blank strings instead
    rec = claim_from_record({"id": 1, "label": SUP, "pred_label": SUP, "evidence": ["s0"], "gold_evidence": ["g0", " "]})
    assert score_claims([rec], metric=m)["evidence_score"] == pytest.approx(0.6)


# ---- METEOR (needs WordNet; skipped with a message when the data is absent) ---------------------


def test_meteor_reference_value(meteor):
    assert meteor("a cat sits", "the cat sat") == 0.16666666666666666


def test_meteor_matches_plain_nltk_and_uses_synonyms(meteor):
    import nltk
    from nltk.translate.meteor_score import single_meteor_score

    pairs = [
        ("The vaccine was tested on 300 adults in 2021.", "In 2021, 300 adults received the vaccine in a trial."),
        ("Doctors didn't recommend it.", "Physicians do not recommend the drug."),
        ("", "Anything at all."),
    ]
    for pred, gold in pairs:
        assert meteor(pred, gold) == single_meteor_score(nltk.word_tokenize(gold), nltk.word_tokenize(pred))
    # "car"/"auto" share a WordNet synset: no exact or stem match, only synonymy. (NLTK looks synonyms
    # up on the Porter stems of still-unmatched words, so the pair must survive stemming unchanged.)
    with_syn = meteor("the car is red", "the auto is red")
    assert with_syn == 0.9921875  # 4 matches in 1 chunk: 1 - 0.5 * (1/4) ** 3

    class NoSynonyms:
        def synsets(self, word):
            return []

    without = single_meteor_score(["the", "auto", "is", "red"], ["the", "car", "is", "red"], wordnet=NoSynonyms())
    assert without == pytest.approx(0.6388888888888888)  # 3 matches in 2 chunks


def test_evidence_score_with_meteor(meteor):
    gold = ["Who said it? The WHO said it in 2020.", "When? In 2020."]
    pred = ["Who said it? The WHO said it in 2020."]
    expected = meteor(pred[0], gold[0]) / 2
    assert evidence_score(pred, gold) == pytest.approx(expected)
