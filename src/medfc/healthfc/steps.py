"""Workflow steps of the HealthFC stage (see docs/CONTRIBUTING.md for the step convention)."""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

import pandas as pd

from medfc.common.io import read_jsonl, write_jsonl
from medfc.common.report import SkipReport
from medfc.healthfc.crawl import CrawlOptions, crawl_site
from medfc.healthfc.parse import PageSkipped, parse_page
from medfc.healthfc.records import schema_errors

log = logging.getLogger(__name__)


def crawl(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Crawl the portal (or the demo mirror) → ``pages`` (gzip JSONL) and ``stats`` (JSON)."""
    opts = CrawlOptions.from_dict(options)
    crawl_site(opts, outputs["pages"], outputs["stats"], log_file=options.get("log_file"))


def parse_pages(pages_path: str) -> tuple[list[dict], list[dict], SkipReport]:
    """Parse every raw page; return article records, claim records and the skip report."""
    report = SkipReport("healthfc.parse")
    articles: list[dict] = []
    claims: list[dict] = []
    seen_ids: dict[str, str] = {}
    for page in read_jsonl(pages_path):
        url = page.get("url", "<no url>")
        report.count("pages")
        try:
            article = parse_page(url, page.get("html", ""), int(page.get("status", 200)))
        except PageSkipped as exc:
            report.skip(url, exc.reason, exc.detail)
            continue
        except Exception as exc:  # a parser bug on one page must not stop the run
            log.exception("unexpected error parsing %s", url)
            report.skip(url, "parser_error", f"{type(exc).__name__}: {exc}")
            continue
        record = article.record()
        errors = schema_errors("article", record)
        if errors:
            report.skip(url, "article_schema", "; ".join(errors))
            continue
        if article.article_id in seen_ids:
            report.skip(url, "duplicate_article_id", f"same slug as {seen_ids[article.article_id]}")
            continue
        seen_ids[article.article_id] = url
        good_claims = []
        for claim in article.claims:
            crec = asdict(claim)
            cerr = schema_errors("claim", crec)
            if cerr:
                report.skip(claim.claim_id, "claim_schema", "; ".join(cerr))
            else:
                good_claims.append(crec)
        for problem in article.problems:
            report.skip(url, "claim_skipped", problem)
        if not good_claims:
            report.skip(url, "no_valid_claim", "every claim failed validation")
            continue
        record["n_claims"] = len(good_claims)
        articles.append(record)
        claims.extend(good_claims)
        report.count(f"layout/{article.layout}")
    report.count("articles", len(articles))
    report.count("claims", len(claims))
    for c in claims:
        report.count(f"label/{c['label']}")
    return articles, claims, report


def parse(inputs: dict[str, Any], outputs: dict[str, Any], options: dict[str, Any]) -> None:
    """Raw pages → ``articles`` and ``claims`` (JSONL + Parquet) and ``report`` (JSON)."""
    articles, claims, report = parse_pages(inputs["pages"])
    articles.sort(key=lambda a: a["url"])
    claims.sort(key=lambda c: (c["url"], c["claim_index"]))
    write_jsonl(outputs["articles"], articles)
    write_jsonl(outputs["claims"], claims)
    if "claims_table" in outputs:
        pd.DataFrame(claims).to_parquet(outputs["claims_table"], index=False)
    if "articles_table" in outputs:
        pd.DataFrame(articles).to_parquet(outputs["articles_table"], index=False)
    report.write(outputs["report"])
    log.info("parsed %d articles with %d claims; skipped %d pages/claims: %s",
             len(articles), len(claims), len(report.skipped), report.reasons())
