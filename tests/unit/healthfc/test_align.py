"""Release rows → crawled claims, and gold evidence sentences → sentence ids."""

import json

import pytest

from tests.helpers.demo import DEMO_RELEASE, parsed_demo_site

from medfc.healthfc.align import (
    align_evidence,
    align_release,
    alignment_from_records,
    alignment_records,
    match_claims,
    normalize_sentence,
    normalize_url,
)
from medfc.healthfc.release import ReleaseRow

EVIDENCE = (90, 25)  # healthfc.align's fuzzy_threshold and min_contained_chars (the schema's defaults)
ALIGN = (90, 50, 25)  # the same with min_claim_score between them, as align_release takes them
SENTS = [
    "Kaffee gilt vielen als Genussmittel.",                                   # 0
    "Koffein regt das Nervensystem an und kann den Puls beschleunigen.",    # 1
    "Menschen, die täglich Kaffee tranken, hatten kein höheres Risiko.",    # 2
    "Bei ca. zwei bis drei Tassen pro Tag war das Risiko sogar niedriger.",  # 3
    "Die Studie sagt: „Kein Effekt“.",                                        # 4
    "Sie war klein.",                                                         # 5
    "Sie dauerte zwei Wochen.",                                               # 6
]


def row(n, url, claim, evidence, label="REFUTED"):
    return ReleaseRow(row=n, url=url, de_claim=claim, en_claim="", de_explanation="", en_explanation="",
                      de_evidence=evidence, en_evidence=[], label=label, label_code=2, de_verdict="Nein",
                      evidence_level="high", small_effect=False, title="", authors=[], date=None, date_text="",
                      variant="12col")


def claim(cid, url, question):
    return {"claim_id": cid, "article_id": cid.split("#")[0], "url": url, "question": question}


def test_normalize_url_and_sentence():
    assert normalize_url("https://www.Medizin-Transparent.at/kaffee-herz/") == "medizin-transparent.at/kaffee-herz"
    assert normalize_url("http://medizin-transparent.at/kaffee-herz") == "medizin-transparent.at/kaffee-herz"
    assert normalize_url("https://www.medizin-transparent.at/k%C3%A4se/?utm=1#x") == "medizin-transparent.at/käse"
    assert normalize_sentence("  Er sagt: „Nein“ – oder?  ") == 'Er sagt: "Nein" - oder?'
    assert normalize_sentence("Das Risiko sank.1 Danach") == "Das Risiko sank. Danach"


def test_exact_alignment_with_whitespace_and_quotes():
    ev = ["Menschen,  die täglich Kaffee tranken, hatten kein höheres Risiko.", 'Die Studie sagt: "Kein Effekt".']
    out = align_evidence(ev, SENTS, *EVIDENCE)
    assert [(a.ids, a.method) for a in out] == [([2], "exact"), ([4], "exact")]


def test_contained_merged_fuzzy_and_unaligned():
    ev = [
        "Koffein regt das Nervensystem an",                                        # part of 1
        "Sie war klein. Sie dauerte zwei Wochen.",                                 # 5 + 6 glued
        "Bei ca. zwei bis drei Tassen pro Tag war das Risiko sogar geringer.",     # edited 3
        "Dieser Satz steht nirgends im Artikel und wurde gestrichen.",
    ]
    out = align_evidence(ev, SENTS, *EVIDENCE)
    assert [(a.ids, a.method) for a in out] == [([1], "contained"), ([5, 6], "merged"), ([3], "fuzzy"), ([], "unaligned")]
    assert out[2].score >= 90 and out[3].score < 90
    # a stricter threshold turns the edited sentence into an unaligned one
    strict = align_evidence(ev[2:3], SENTS, 99, 25)
    assert strict[0].method == "unaligned" and strict[0].best_id == 3


def test_match_claims_by_url_then_question():
    url = "https://www.medizin-transparent.at/kaffee/"
    rows = [
        row(0, "http://medizin-transparent.at/kaffee", "Senkt Kaffee das Risiko für Diabetes?", []),
        row(1, url, "Verursacht Kaffee Herzrhythmusstörungen?", []),
        row(2, "https://www.medizin-transparent.at/weg/", "Gibt es nicht mehr?", []),
    ]
    claims = [
        claim("kaffee#0", url, "Führt Kaffee zu Herzrhythmusstörungen?"),
        claim("kaffee#1", url, "Senkt regelmäßiger Kaffee das Risiko für Diabetes?"),
        claim("neu#0", "https://www.medizin-transparent.at/neu/", "Neue Frage?"),
    ]
    matches, unmatched_rows, unmatched_claims, _ = match_claims(rows, claims, 50)
    assert [(m.release_row, m.claim_id) for m in matches] == [(0, "kaffee#1"), (1, "kaffee#0")]
    assert unmatched_rows == [2]
    assert unmatched_claims == ["neu#0"]


def test_align_release_report_and_roundtrip():
    url = "https://www.medizin-transparent.at/kaffee/"
    rows = [row(0, url, "Verursacht Kaffee Herzrhythmusstörungen?",
                [SENTS[2], SENTS[3], "Ein Satz, den es nicht gibt, ganz sicher nicht."])]
    claims = [claim("kaffee#0", url, "Verursacht Kaffee Herzrhythmusstörungen?")]
    result = align_release(rows, claims, {"kaffee": SENTS}, *ALIGN)
    rep = result.report()
    assert rep["evidence_sentences"] == 3 and rep["evidence_sentences_aligned"] == 2
    assert rep["alignment_rate"] == pytest.approx(0.6667)
    assert rep["unaligned"][0]["sentence"].startswith("Ein Satz") and rep["unaligned"][0]["claim_id"] == "kaffee#0"
    assert result.evidence_ids(0) == [2, 3]
    back = alignment_from_records(json.loads(json.dumps(alignment_records(result))))
    assert back.evidence_ids(0) == [2, 3] and back.matches[0].claim_id == "kaffee#0"


@pytest.fixture(scope="module")
def demo():
    """The demo articles parsed straight from the committed pages (no crawl), and the demo release."""
    from medfc.healthfc.dataset import sentences_by_article
    from medfc.healthfc.release import read_release

    articles, claims = parsed_demo_site()
    rows, report = read_release(DEMO_RELEASE)
    sentences, sections = sentences_by_article(articles)
    return articles, claims, sentences, rows, report, sections


def test_demo_release_reads_with_its_quirks(demo):
    _, _, _, rows, report, _ = demo
    rep = report.as_dict()
    assert len(rows) == 28 and rep["n_skipped"] == 0
    assert rep["mojibake_fixed_rows"] == 1 and {m["column"] for m in rep["mojibake"]} == {"de_claim", "de_explanation"}
    assert rep["counts"]["empty_explanation_de"] == 1
    assert all(r.evidence_level is not None for r in rows)
    assert not any("√" in r.de_claim for r in rows)
    assert any(len(r.authors) >= 2 for r in rows)
    assert all(1 <= len(r.de_evidence) <= 5 for r in rows)


def test_demo_alignment_is_complete(demo):
    articles, claims, sentences, rows, _, sections = demo
    result = align_release(rows, claims, sentences, *ALIGN, sections=sections)
    rep = result.report()
    assert rep["release_rows_matched"] == 27
    assert [rows[i].url for i in rep["unmatched_release_rows"]] == [
        "https://www.medizin-transparent.at/intern/entwurf-vitamin-d/"]
    assert rep["unmatched_crawled_claims"] == ["homoeopathie-heuschnupfen#0", "melatonin-schlaf-jetlag#2",
                                               "sport-depression#0"]
    assert rep["alignment_rate"] == 1.0 and rep["unaligned"] == []
    assert rep["by_method"] == {"exact": rep["evidence_sentences"] - 1, "fuzzy": 1}
    kaffee = next(m for m in result.matches if m.claim_id == "kaffee-herzrhythmus#0")
    fuzzy = [a for a in result.evidence[kaffee.release_row] if a.method == "fuzzy"]
    assert len(fuzzy) == 1 and "erhöhtes" in fuzzy[0].text
    assert sentences["kaffee-herzrhythmus"][fuzzy[0].ids[0]].count("höheres Risiko") == 1
    # every aligned id points at the very sentence the release copied (exact ones)
    for m in result.matches:
        for a in result.evidence[m.release_row]:
            if a.method == "exact":
                art = next(c["article_id"] for c in claims if c["claim_id"] == m.claim_id)
                assert sentences[art][a.ids[0]] == a.text


def test_demo_evidence_in_the_studies_section_aligns_and_needs_it(demo):
    """Three demo claims (one per layout) have a gold sentence in the studies section ("Die Studien im
    Detail"): it aligns against the article's sentence list (body, then studies), not against the body alone."""
    from medfc.healthfc.sentences import split_paragraphs

    articles, claims, sentences, rows, _, sections = demo
    result = align_release(rows, claims, sentences, *ALIGN, sections=sections)
    rep = result.report()
    assert rep["alignment_rate"] == 1.0
    assert rep["aligned_by_section"] == {"body": rep["evidence_sentences"] - 3, "studies": 3}
    in_studies = {}
    for m in result.matches:
        art = next(c["article_id"] for c in claims if c["claim_id"] == m.claim_id)
        for a in result.evidence[m.release_row]:
            if sections[art][a.ids[0]] == "studies":
                in_studies[m.claim_id] = sentences[art][a.ids[0]]
    assert sorted(in_studies) == ["glucosamin-arthrose#0", "kaffee-herzrhythmus#0", "rotwein-herzinfarkt#0"]
    assert in_studies["kaffee-herzrhythmus#0"].startswith("Sie fand keinen Zusammenhang")
    layouts = {a["article_id"]: a["layout"] for a in articles}
    assert {layouts[c.split("#")[0]] for c in in_studies} == {"current", "2014_2017", "pre_2014"}
    # against the body alone (sentence ids without the studies section) exactly those three sentences stay unaligned
    body_only = {a["article_id"]: split_paragraphs(a["body_paragraphs"]) for a in articles}
    body_rep = align_release(rows, claims, body_only, *ALIGN).report()
    assert body_rep["evidence_sentences"] - body_rep["evidence_sentences_aligned"] == 3
    assert sorted(u["claim_id"] for u in body_rep["unaligned"]) == sorted(in_studies)
    # body sentence ids are unchanged by appending the studies section
    for aid, body in body_only.items():
        assert sentences[aid][: len(body)] == body and sections[aid][len(body):] == ["studies"] * (len(sentences[aid]) - len(body))
