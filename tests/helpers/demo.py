"""The demo snapshot as the tests read it: its pages parsed straight from resources/demo/site (no crawl)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO_EXPECTED = REPO / "tests" / "data" / "demo_site_expected.json"
DEMO_RELEASE = REPO / "resources" / "demo" / "healthfc_release" / "Datensatz.csv"
DEMO_SITE = REPO / "resources" / "demo" / "site"


def parsed_demo_site() -> tuple[list[dict], list[dict]]:
    """(article records, claim records) of every article page of the demo site."""
    from medfc.healthfc.parse import parse_page

    expected = json.loads(DEMO_EXPECTED.read_text(encoding="utf-8"))
    articles, claims = [], []
    for page in expected["pages"]:
        if page["kind"] == "article":
            art = parse_page(page["url"], (DEMO_SITE / page["path"]).read_text(encoding="utf-8"))
            articles.append(art.record())
            claims.extend(asdict(c) for c in art.claims)
    return articles, claims
