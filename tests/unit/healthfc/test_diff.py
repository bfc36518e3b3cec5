"""The HealthFC diff (crawl against release) on constructed rows and claims: every category, the join, the step."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import date

import pandas as pd
import pytest

from medfc.common.io import write_jsonl
from medfc.healthfc import diff as D
from medfc.healthfc import steps
from medfc.healthfc.release import ReleaseRow
from tests.helpers.config import call_step, section

SITE = "https://www.medizin-transparent.at"
CUTOFF = date(2022, 12, 31)


def row(n: int, slug: str, claim: str, label: str = "REFUTED", verdict: str = "Nein", date_: str | None = "2018-06-07") -> ReleaseRow:
    return ReleaseRow(row=n, url=f"{SITE}/{slug}/", de_claim=claim, en_claim="", de_explanation="", en_explanation="", de_evidence=[],
                      en_evidence=[], label=label, label_code=2, de_verdict=verdict, evidence_level="high", small_effect=False,
                      title="", authors=[], date=date_, date_text="", variant="12col")


def claim(slug: str, i: int, question: str, label: str = "REFUTED", verdict: str = "Nein") -> dict:
    # the crawl stores URLs without "www." and with a query string now and then: the join normalises them
    return {"claim_id": f"{slug}#{i}", "article_id": slug, "url": f"https://medizin-transparent.at/{slug}?utm=x", "question": question,
            "label": label, "verdict_text": verdict}


def article(slug: str, date_: str | None) -> dict:
    return {"article_id": slug, "url": f"https://medizin-transparent.at/{slug}/", "date": date_}


def diff(rows, claims, articles, parse_report=None) -> pd.DataFrame:
    return D.diff_crawl(rows, claims, articles, parse_report or {}, CUTOFF, min_claim_score=50)


def test_joined_claims_agree_or_differ_on_the_verdict_with_both_texts():
    rows = [row(0, "a", "Hilft Kaffee?", "SUPPORTED", "ja"), row(1, "b", "Schadet Zucker?", "NOT ENOUGH INFO", "Studienlage widersprüchlich")]
    claims = [claim("a", 0, "Hilft Kaffee?", "SUPPORTED", "Ja"), claim("b", 0, "Schadet Zucker?", "REFUTED", "Nein, möglicherweise nicht")]
    got = diff(rows, claims, [article("a", "2020-01-01"), article("b", "2018-06-07")])
    assert list(got["category"]) == ["verdict_agrees", "verdict_differs"]
    differs = got.iloc[1].to_dict()
    assert {k: differs[k] for k in ("claim_id", "release_row", "release_label", "crawl_label", "release_verdict", "crawl_verdict", "score")} == {
        "claim_id": "b#0", "release_row": 1, "release_label": "NOT ENOUGH INFO", "crawl_label": "REFUTED",
        "release_verdict": "Studienlage widersprüchlich", "crawl_verdict": "Nein, möglicherweise nicht", "score": 100.0}


def test_a_claim_that_differs_in_whitespace_only_is_its_own_category():
    rows = [row(0, "a", "Hilft Kaffee bei 10\u00a0mg?"), row(1, "b", "Schadet Zucker?"), row(2, "c", "Hilft „Tee“?")]
    claims = [claim("a", 0, "Hilft  Kaffee bei 10 mg?"), claim("b", 0, "Schadet Zucker?"), claim("c", 0, 'Hilft "Tee"?')]
    got = diff(rows, claims, [article("a", "2020-01-01"), article("b", "2020-01-01"), article("c", "2020-01-01")])
    assert list(got["category"]) == ["verdict_agrees"] * 3 + ["claim_whitespace_only"]  # exact "b", quotes only "c": no finding
    found = got.iloc[3].to_dict()
    assert (found["claim_id"], found["release_row"], found["reason"], found["detail"]) == (
        "a#0", 0, "whitespace", "U+0020 (release) vs U+0020+U+0020 (page) at offset 5; 2 places")
    assert (found["release_claim"], found["crawl_claim"]) == ("Hilft Kaffee bei 10\u00a0mg?", "Hilft  Kaffee bei 10 mg?")


def test_a_reworded_claim_is_joined_and_listed_with_its_score():
    got = diff([row(0, "a", "Macht Zucker Kinder hyperaktiv?")], [claim("a", 0, "Werden Kinder durch Zucker hyperaktiv?")],
               [article("a", "2018-09-20")])
    assert list(got["category"]) == ["verdict_agrees", "claim_text_changed"]
    changed = got.iloc[1].to_dict()
    assert (changed["claim_id"], changed["reason"], changed["detail"], changed["score"]) == ("a#0", "reworded", "joined", 75.36)
    assert (changed["release_claim"], changed["crawl_claim"]) == ("Macht Zucker Kinder hyperaktiv?", "Werden Kinder durch Zucker hyperaktiv?")


def test_quotes_case_and_spacing_are_not_a_changed_text():
    got = diff([row(0, "a", "Hilft „Detox“ wirklich?")], [claim("a", 0, 'hilft "Detox"  wirklich?')], [article("a", None)])
    assert list(got["category"]) == ["verdict_agrees"]


def test_a_release_row_left_unjoined_on_a_crawled_page_is_a_changed_text_with_its_best_score():
    rows = [row(0, "a", "Hilft Akupunktur gegen Migräne?"), row(1, "a", "Ist Vitamin C gegen Erkältungen wirksam?")]
    claims = [claim("a", 0, "Hilft Akupunktur gegen Migräne?"), claim("a", 1, "Lindert Yoga Rückenschmerzen bei Erwachsenen?")]
    got = diff(rows, claims, [article("a", "2015-10-28")])
    assert sorted(got["category"]) == ["claim_text_changed", "crawl_only", "verdict_agrees"]
    changed = got[got["category"] == "claim_text_changed"].iloc[0]
    assert (changed["release_row"], changed["claim_id"], changed["reason"]) == (1, "a#1", "not_joined")
    assert changed["detail"] == "not joined: the closest unjoined claim is below 50" and changed["score"] < 50
    crawl_only = got[got["category"] == "crawl_only"].iloc[0]
    assert (crawl_only["claim_id"], crawl_only["detail"]) == ("a#1", "the article has release rows")


def test_a_release_row_whose_page_has_no_claim_left_for_it_was_removed():
    rows = [row(0, "a", "Hilft Akupunktur gegen Migräne?"), row(1, "a", "Ist Vitamin C gegen Erkältungen wirksam?")]
    got = diff(rows, [claim("a", 0, "Hilft Akupunktur gegen Migräne?")], [article("a", "2015-10-28")])
    changed = got[got["category"] == "claim_text_changed"].iloc[0].to_dict()
    assert (changed["release_row"], changed["claim_id"], changed["reason"], changed["detail"], changed["score"]) == (
        1, "", "removed", "no claim of the page is left for it", 0.0)


def test_page_gone_gives_the_parsers_reason_or_not_crawled():
    rows = [row(0, "intern/entwurf", "Schützt Vitamin D?"), row(1, "kaputt", "Hilft Ingwer?")]
    got = diff(rows, [], [], parse_report={"skipped": [{"id": f"{SITE}/kaputt/", "reason": "truncated_html"}]})
    assert list(zip(got["category"], got["release_row"], got["reason"])) == [("page_gone", 0, "not_crawled"),
                                                                             ("page_gone", 1, "truncated_html")]


@pytest.mark.parametrize(
    "published,category",
    [("2023-04-27", "published_after_release"), ("2023-01-01", "published_after_release"), ("2022-12-31", "crawl_only"),
     ("2017-02-02", "crawl_only"), (None, "crawl_only")],
)
def test_crawled_claims_without_a_release_row_by_their_article_date(published, category):
    got = diff([], [claim("neu", 0, "Hilft Sport gegen Depression?", "SUPPORTED", "Ja, wahrscheinlich")], [article("neu", published)])
    found = got.iloc[0].to_dict()
    assert (found["category"], found["claim_id"], found["crawl_label"], found["detail"]) == (
        category, "neu#0", "SUPPORTED", "the article is not in the release")
    assert found["crawl_article_date"] == (published or "")


def test_articles_in_both_updated_after_the_release_date_one_row_each():
    rows = [row(0, "a", "Frage eins?", date_="2018-06-07"), row(1, "a", "Frage zwei?", date_="2018-06-07"), row(2, "b", "Frage drei?")]
    claims = [claim("a", 0, "Frage eins?"), claim("a", 1, "Frage zwei?"), claim("b", 0, "Frage drei?")]
    got = diff(rows, claims, [article("a", "2023-09-12"), article("b", "2022-12-31"), article("c", "2024-01-01")])
    updated = got[got["category"] == "article_updated"]
    assert updated[["url", "release_article_date", "crawl_article_date"]].to_dict("records") == [
        {"url": "https://medizin-transparent.at/a/", "release_article_date": "2018-06-07", "crawl_article_date": "2023-09-12"}]


def test_the_step_writes_every_category_even_empty_ones(tmp_path):
    rows = [asdict(row(0, "a", "Hilft Kaffee?")), asdict(row(1, "weg", "Hilft Tee?"))]
    write_jsonl(tmp_path / "rows.jsonl", rows)
    write_jsonl(tmp_path / "claims.jsonl", [claim("a", 0, "Hilft Kaffee?"), claim("neu", 0, "Hilft Sport?", "SUPPORTED", "Ja")])
    write_jsonl(tmp_path / "articles.jsonl", [article("a", "2019-01-01"), article("neu", "2023-05-01")])
    (tmp_path / "parse.json").write_text(json.dumps({"skipped": [{"id": f"{SITE}/weg/", "reason": "http_404", "detail": ""}]}))
    (tmp_path / "release.json").write_text(json.dumps({"source": "Datensatz.csv"}))
    inputs = {"rows": tmp_path / "rows.jsonl", "claims": tmp_path / "claims.jsonl", "articles": tmp_path / "articles.jsonl",
              "parse_report": tmp_path / "parse.json", "release_report": tmp_path / "release.json"}
    outputs = {"markdown": tmp_path / "d" / "diff.md", "rows": tmp_path / "d" / "diff_rows.csv", "counts": tmp_path / "d" / "diff_counts.csv"}
    options = {**section("healthfc.diff"), "min_claim_score": section("healthfc.align")["min_claim_score"]}
    got = call_step(steps.diff, {k: str(v) for k, v in inputs.items()}, {k: str(v) for k, v in outputs.items()}, options)
    assert got == {"verdict_agrees": 1, "page_gone": 1, "published_after_release": 1}
    counts = pd.read_csv(outputs["counts"])
    assert dict(zip(counts["category"], counts["rows"])) == {"verdict_agrees": 1, "verdict_differs": 0, "claim_whitespace_only": 0,
                                                             "claim_text_changed": 0, "page_gone": 1,
                                                             "published_after_release": 1, "crawl_only": 0, "article_updated": 0}
    found = pd.read_csv(outputs["rows"], keep_default_na=False)
    assert list(found.columns) == D.COLUMNS
    assert found.loc[found["category"] == "page_gone", "reason"].tolist() == ["http_404"]
    md = outputs["markdown"].read_text()
    assert "Release rows: 2 (`Datensatz.csv`), release date 2022-12-31. Crawled claims: 2." in md
    assert "Claims in both: 1" in md and "## article_updated (0)" in md
