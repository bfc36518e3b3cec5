"""Every page of the demo snapshot parses exactly as written (tests/data/demo_site_expected.json)."""

import json
from pathlib import Path

import pytest

from medfc.healthfc.parse import PageSkipped, parse_page
from medfc.healthfc.sentences import split_paragraphs

REPO = Path(__file__).resolve().parents[3]
SITE = REPO / "resources/demo/site"
EXPECTED = json.loads((REPO / "tests/data/demo_site_expected.json").read_text(encoding="utf-8"))["pages"]
SKIP_REASON = {"listing": "listing_page", "no_verdict": "no_verdict_box", "truncated": "truncated_html"}


def words(text: str, n: int, last: bool = False) -> str:
    w = text.split()
    return " ".join(w[-n:] if last else w[:n])


@pytest.mark.parametrize("page", [p for p in EXPECTED if p["kind"] in ("article", "disallowed")], ids=lambda p: p["path"])
def test_article_pages_parse_exactly(page):
    a = parse_page(page["url"], (SITE / page["path"]).read_text(encoding="utf-8"))
    assert a.layout == page["layout"]
    assert a.title == page["title"]
    assert a.date == page["date"]
    assert a.authors == page["authors"]
    assert a.reviewers == page["reviewers"]
    assert a.teaser == page["teaser"]
    assert a.topics == page["topics"]
    assert a.references == page["references"]
    assert words(a.studies, 8) == page["studies_first_words"]
    assert words(a.body_paragraphs[0], 8) == page["body_first_words"]
    assert words(a.body_paragraphs[-1], 8, last=True) == page["body_last_words"]
    got = [{k: getattr(c, k) for k in ("question", "verdict_text", "answer_index", "label", "evidence_level", "small_effect", "explanation")}
           for c in a.claims]
    assert got == page["claims"]
    # the expected count leaves out the body's subheadings, which the parser keeps as paragraphs
    n_sentences = len(split_paragraphs(a.body_paragraphs))
    assert page["n_body_sentences_approx"] - 2 <= n_sentences <= page["n_body_sentences_approx"] + 8


@pytest.mark.parametrize("page", [p for p in EXPECTED if p["kind"] in SKIP_REASON], ids=lambda p: p["path"])
def test_non_article_pages_are_skipped_with_their_reason(page):
    with pytest.raises(PageSkipped) as exc:
        parse_page(page["url"], (SITE / page["path"]).read_text(encoding="utf-8"))
    assert exc.value.reason == SKIP_REASON[page["kind"]]


def test_demo_covers_what_the_snapshot_promises():
    articles = [p for p in EXPECTED if p["kind"] == "article"]
    claims = [c for p in articles for c in p["claims"]]
    assert len(articles) >= 24
    assert {p["layout"] for p in articles} == {"current", "2014_2017", "pre_2014"}
    assert {c["answer_index"] for c in claims if c["answer_index"]} >= {1, 2, 3, 4, 5, 6, 8, 9, 10, 11}
    assert {len(p["claims"]) for p in articles} >= {1, 2, 3}
    verdicts = {c["verdict_text"] for c in claims}
    assert {"Studienlage widersprüchlich", "wissenschafliche Beweise fehlen", "wahrscheinlich", "möglicherweise"} <= verdicts
