"""Crawls of a generated mirror of several hundred pages, killed (SIGKILL, SIGTERM) at a seeded random
point and resumed, end with every page and a byte-identical parse to an uninterrupted crawl.

The point of the kill is exact, not timed: the test's mirror serves the first ``k`` article requests
and holds every further one until the crawl child has been signalled."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
from pathlib import Path

import pytest

from medfc.common.io import read_jsonl
from medfc.healthfc import crawl
from medfc.healthfc.crawl import CrawlOptions, crawl_site
from medfc.healthfc.steps import parse
from medfc.common.options import NoOptions
from tests.helpers.config import section
from tests.helpers.crawl_site import GatedMirror, crawl_children, kill_all, make_mirror

N_ARTICLES = 400


def options(tmp: Path, site: Path) -> CrawlOptions:
    return CrawlOptions.from_mapping(section(
        "healthfc.crawl", mirror_dir=str(site), download_delay=0.0, retry_times=0, sitemap_follow=["post-sitemap"],
        http_cache_dir=str(tmp / "cache/http"), jobdir=str(tmp / "cache/job"), contact="test@example.org"))


def parsed(pages: Path, out: Path) -> dict[str, bytes]:
    """The parse step's outputs for ``pages``, as bytes."""
    names = {"articles": "articles.jsonl", "claims": "claims.jsonl", "report": "report.json",
             "claims_table": "claims.parquet", "articles_table": "articles.parquet"}
    out.mkdir(parents=True)
    parse({"pages": str(pages)}, {k: str(out / v) for k, v in names.items()}, NoOptions())
    return {v: (out / v).read_bytes() for v in names.values()}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    return make_mirror(tmp_path_factory.mktemp("mirror") / "site", N_ARTICLES)


@pytest.fixture(scope="module")
def reference(mirror, tmp_path_factory):
    """One uninterrupted crawl of the mirror and its parse."""
    tmp = tmp_path_factory.mktemp("reference")
    crawl_site(options(tmp, mirror.root), tmp / "pages.jsonl.gz", tmp / "stats.json")
    return {"pages": list(read_jsonl(tmp / "pages.jsonl.gz")), "stats": json.loads((tmp / "stats.json").read_text()),
            "parsed": parsed(tmp / "pages.jsonl.gz", tmp / "parsed")}


def interrupt(opts: CrawlOptions, mirror, sig: int, open_pages: int, monkeypatch, out: Path):
    """Run :func:`crawl_site` until the mirror has served ``open_pages`` article requests, send ``sig`` to the
    crawl child; return what crawl_site returned or raised."""
    gated = GatedMirror(mirror.root, open_pages)
    monkeypatch.setattr(crawl, "MirrorServer", lambda root, delay=0.0: gated)
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = crawl_site(opts, out / "pages.jsonl.gz", out / "stats.json")
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    children: list[int] = []
    thread.start()
    try:
        while thread.is_alive() and not gated.held.wait(0.05):
            pass
        assert gated.held.is_set(), f"the crawl ended before the gate: {outcome}"
        children = crawl_children()
        assert len(children) == 1
        os.kill(children[0], sig)
        if sig != signal.SIGKILL:
            gated.release()  # a graceful stop finishes the requests in flight
        thread.join(120)
        assert not thread.is_alive()
    finally:
        kill_all(children)
        gated.release()
        thread.join(120)
        monkeypatch.undo()
    return outcome


@pytest.mark.parametrize("sig, seed", [(signal.SIGKILL, 1), (signal.SIGTERM, 2)], ids=["sigkill", "sigterm"])
def test_a_killed_crawl_resumes_to_every_page_and_the_same_parse(sig, seed, mirror, reference, tmp_path, monkeypatch):
    k = random.Random(seed).randint(50, N_ARTICLES - 50)
    opts = options(tmp_path, mirror.root)
    partial = Path(opts.jobdir) / "pages.partial.jsonl"
    outcome = interrupt(opts, mirror, sig, k, monkeypatch, tmp_path / "first")

    # the interrupted crawl fails its job, writes no output and keeps its state for the resume
    assert "result" not in outcome and isinstance(outcome["error"], RuntimeError)
    if sig == signal.SIGTERM:
        assert "shutdown" in str(outcome["error"])
    assert not (tmp_path / "first/pages.jsonl.gz").exists()
    kept = [p["url"] for p in read_jsonl(partial)]
    if sig == signal.SIGKILL:  # the gate served k article pages; the last few may not have been written
        assert 0 < len(kept) <= k
    else:  # a graceful stop writes the pages in flight too
        assert k <= len(kept) <= k + 2

    result = crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
    pages = list(read_jsonl(tmp_path / "out/pages.jsonl.gz"))
    assert [p["url"] for p in pages] == sorted(mirror.articles + mirror.gone)
    assert [(p["url"], p["status"], p["html"]) for p in pages] == [(p["url"], p["status"], p["html"]) for p in reference["pages"]]
    assert parsed(tmp_path / "out/pages.jsonl.gz", tmp_path / "parsed") == reference["parsed"]

    stats = json.loads((tmp_path / "out/stats.json").read_text())
    assert result.resumed and stats["finish_reason"] == "finished"
    urls = stats["urls"]
    assert urls["listed"] == N_ARTICLES + 3
    assert urls["resumed"] == len(set(kept))
    assert urls["resumed"] + urls["fetched"] + urls["from_cache"] == N_ARTICLES + 1
    assert urls["skipped"] == {"robots_forbidden": 2}
    assert urls["gone"] == 1
    assert not Path(opts.jobdir).exists()


def test_the_uninterrupted_crawl_counts_every_listed_url(mirror, reference):
    stats = reference["stats"]
    assert stats["pages"] == N_ARTICLES + 1
    assert stats["urls"] == {"listed": N_ARTICLES + 3, "fetched": N_ARTICLES + 1, "from_cache": 0, "resumed": 0,
                             "gone": 1, "skipped": {"robots_forbidden": 2}, "partial_torn_lines": 0}
    assert stats["skipped_urls"] == {"robots_forbidden": sorted(mirror.forbidden)}
