"""The crawl of the portal against the HealthFC release, joined as the dataset joins them: what both have, and what
changed since; one finding a row, in the categories of :data:`CATEGORIES`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import date

import pandas as pd

from medfc.common.diff import SAME, WHITESPACE, after, text_difference, whitespace_detail
from medfc.common.jsontypes import JSONValue
from medfc.healthfc.align import claim_similarity, match_claims, normalize_sentence, normalize_url
from medfc.healthfc.records import ArticleRecord, ClaimRecord
from medfc.healthfc.release import ReleaseRow

CATEGORIES: dict[str, str] = {
    "verdict_agrees": "claims in both (joined by URL and claim text as the dataset is): the release's label equals our reading of the page's verdict",
    "verdict_differs": "claims in both whose release label differs from our reading of the page's verdict (both verdicts shown)",
    "claim_whitespace_only": "claims in both whose text on the page differs from the release's in whitespace only (no-break or thin spaces, line breaks, doubled spaces; the first place in detail)",
    "claim_text_changed": "release claims whose text on the page differs today (score: similarity 0–100); unjoined ones were reworded beyond healthfc.align.min_claim_score or removed",
    "page_gone": "release claims whose page gave no crawled article (the parser's reason, or not_crawled: not in the sitemaps, forbidden or gone)",
    "published_after_release": "crawled claims without a release row, on articles dated after the release date",
    "crawl_only": "crawled claims without a release row, on articles dated on or before the release date (or undated)",
    "article_updated": "articles in both whose 'zuletzt aktualisiert' date is after the release date (one row per article)",
}
COLUMNS = ["category", "claim_id", "release_row", "url", "score", "reason", "detail", "release_label", "crawl_label",
           "release_verdict", "crawl_verdict", "release_claim", "crawl_claim", "release_article_date", "crawl_article_date"]
LISTED: dict[str, list[str]] = {
    "verdict_differs": ["claim_id", "release_row", "release_label", "crawl_label", "release_verdict", "crawl_verdict"],
    "claim_whitespace_only": ["claim_id", "release_row", "detail", "release_claim", "crawl_claim"],
    "claim_text_changed": ["claim_id", "release_row", "score", "detail", "release_claim", "crawl_claim"],
    "page_gone": ["release_row", "url", "reason", "release_claim"],
    "published_after_release": ["claim_id", "crawl_article_date", "detail", "crawl_label", "crawl_claim"],
    "crawl_only": ["claim_id", "crawl_article_date", "detail", "crawl_label", "crawl_claim"],
    "article_updated": ["url", "release_article_date", "crawl_article_date", "detail"],
}


def _finding(category: str, row: ReleaseRow | None = None, claim: ClaimRecord | None = None, article: ArticleRecord | None = None,
             **extra: str | float) -> dict[str, object]:
    out: dict[str, object] = dict.fromkeys(COLUMNS, "")
    out["category"] = category
    if row is not None:
        out.update(release_row=row.row, url=row.url, release_label=row.label, release_verdict=row.de_verdict, release_claim=row.de_claim,
                   release_article_date=row.date or row.date_text)
    if claim is not None:
        out.update(claim_id=claim["claim_id"], url=claim["url"], crawl_label=claim["label"], crawl_verdict=claim["verdict_text"],
                   crawl_claim=claim["question"])
    if article is not None:
        out.update(url=article["url"], crawl_article_date=article.get("date") or "")
    out.update(extra)
    return out


def diff_crawl(rows: Sequence[ReleaseRow], claims: Sequence[ClaimRecord], articles: Iterable[ArticleRecord],
               parse_report: Mapping[str, JSONValue], release_date: date, min_claim_score: float) -> pd.DataFrame:
    """The findings (columns :data:`COLUMNS`) of the crawl against the release ``rows``."""
    matches, unmatched_rows, unmatched_claims, _ = match_claims(rows, claims, min_claim_score)
    problems: dict[str, str] = {}  # normalised URL → the parser's first reason for a page it skipped
    for s in parse_report.get("skipped") or []:
        problems.setdefault(normalize_url(str(s["id"])), str(s["reason"]))
    row_by_id = {r.row: r for r in rows}
    claim_by_id = {c["claim_id"]: c for c in claims}
    article_by_url = {normalize_url(a["url"]): a for a in articles}
    claims_by_url: dict[str, list[ClaimRecord]] = defaultdict(list)
    for c in claims:
        claims_by_url[normalize_url(c["url"])].append(c)
    unjoined = set(unmatched_claims)
    release_urls = {normalize_url(r.url): r for r in reversed(rows)}  # each article's first release row
    out: list[dict[str, object]] = []
    for m in matches:
        row, claim = row_by_id[m.release_row], claim_by_id[m.claim_id]
        article = article_by_url.get(normalize_url(claim["url"]))
        category = "verdict_agrees" if row.label == claim["label"] else "verdict_differs"
        out.append(_finding(category, row, claim, article, score=m.score))
        difference = text_difference(row.de_claim or "", claim["question"] or "")
        if difference == WHITESPACE:
            out.append(_finding("claim_whitespace_only", row, claim, article, score=m.score, reason="whitespace",
                                detail=whitespace_detail(row.de_claim, claim["question"], ("release", "page"))))
        elif difference != SAME and (normalize_sentence(row.de_claim).casefold()
                                     != normalize_sentence(claim["question"]).casefold()):
            out.append(_finding("claim_text_changed", row, claim, article, score=m.score, reason="reworded", detail="joined"))
    for n in unmatched_rows:
        row = row_by_id[n]
        key = normalize_url(row.url)
        article = article_by_url.get(key)
        if article is None:
            out.append(_finding("page_gone", row, reason=problems.get(key, "not_crawled")))
            continue
        cands = [c for c in claims_by_url.get(key, []) if c["claim_id"] in unjoined]
        if not cands:  # every claim of the page went to another row: this one is gone from the page
            out.append(_finding("claim_text_changed", row, None, article, score=0.0, reason="removed",
                                detail="no claim of the page is left for it"))
            continue
        score, best = max(((claim_similarity(row.de_claim, c["question"]), c) for c in cands), key=lambda sc: sc[0])
        out.append(_finding("claim_text_changed", row, best, article, score=round(score, 2),
                            reason="not_joined", detail=f"not joined: the closest unjoined claim is below {min_claim_score:g}"))
    for cid in unmatched_claims:
        claim = claim_by_id[cid]
        key = normalize_url(claim["url"])
        article = article_by_url.get(key)
        published = (article or {}).get("date")
        category = "published_after_release" if after(published, release_date) else "crawl_only"
        detail = "the article has release rows" if key in release_urls else "the article is not in the release"
        out.append(_finding(category, None, claim, article, detail=detail))
    for key, article in sorted(article_by_url.items()):
        if key in release_urls and after(article.get("date"), release_date):
            row = release_urls[key]
            out.append(_finding("article_updated", None, None, article, release_article_date=row.date or row.date_text,
                                detail=f"updated since the release ({row.date or row.date_text or 'undated'} in the release)"))
    order = {c: i for i, c in enumerate(CATEGORIES)}
    out.sort(key=lambda f: (order[f["category"]], f["release_row"] if f["release_row"] != "" else 10**9, f["claim_id"], f["url"]))
    return pd.DataFrame(out, columns=COLUMNS)


def preamble(release_source: str, release_date: date, rows: Sequence[ReleaseRow], claims: Sequence[ClaimRecord],
             findings: pd.DataFrame) -> list[str]:
    joined = int(findings["category"].isin(["verdict_agrees", "verdict_differs"]).sum()) if len(findings) else 0
    return [
        f"Release rows: {len(rows)} (`{release_source}`), release date {release_date.isoformat()}. Crawled claims: {len(claims)}.",
        f"Claims in both: {joined} (joined by URL and claim text, as the dataset is).",
        "A release row is joined, `claim_text_changed` (not joined, page crawled) or `page_gone`; a crawled claim is joined, "
        "`published_after_release` or `crawl_only`. `claim_text_changed` also lists joined claims whose text changed.",
    ]
