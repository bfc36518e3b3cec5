"""Crawl the Medizin Transparent portal with Scrapy.

The spider discovers article URLs from the WordPress/Yoast sitemap index (and optionally a URL
list), obeys robots.txt, throttles itself, retries, keeps an HTTP cache (a rerun refetches
nothing) and a JOBDIR (an interrupted crawl resumes where it stopped). Every fetched page is kept
raw — url, fetch time, status, html — so the parser can change without a recrawl.

Each crawl runs in a child Python process (``python -m medfc.healthfc.crawl``): Twisted's reactor
cannot be restarted inside one process, and this keeps :func:`crawl_site` callable any number of
times (tests, notebooks, Snakemake scripts).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import logging
import shutil
import subprocess
import sys
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import scrapy
from scrapy.spiders import SitemapSpider

from medfc.common.io import read_jsonl, write_json, write_jsonl
from medfc.healthfc.crawl_options import CrawlOptions
from medfc.healthfc.mirror import MirrorServer, tree_digest

log = logging.getLogger(__name__)

PARTIAL_NAME = "pages.partial.jsonl"


def _fetch_time(response: scrapy.http.Response) -> str:
    """The server's Date header (kept in the HTTP cache, so stable across cached reruns), as ISO."""
    raw = response.headers.get(b"Date")
    if raw:
        try:
            return email.utils.parsedate_to_datetime(raw.decode("latin-1")).astimezone(dt.UTC).isoformat()
        except (TypeError, ValueError):
            pass
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class PortalSpider(SitemapSpider):
    """Sitemap-driven spider for the portal's article pages."""

    name = "medizin_transparent"
    handle_httpstatus_list = [404, 410]  # kept as pages, so the parse report names them

    def __init__(self, base_url: str, sitemap_path: str, sitemap_follow: list[str], url_list: list[str], *a, **kw):
        self.sitemap_urls = [base_url.rstrip("/") + sitemap_path]
        self.sitemap_follow = sitemap_follow
        self.sitemap_rules = [("", "parse_page")]
        super().__init__(*a, **kw)
        self.extra_urls = list(url_list)

    async def start(self):
        async for request in super().start():
            yield request
        for url in self.extra_urls:
            yield scrapy.Request(url, callback=self.parse_page)

    def parse_page(self, response: scrapy.http.Response):
        yield {
            "url": response.url,
            "status": response.status,
            "fetched_at": _fetch_time(response),
            "from_cache": "cached" in response.flags,
            "html": response.text if isinstance(response, scrapy.http.TextResponse) else "",
        }


class AppendPagesPipeline:
    """Append every page to ``<JOBDIR>/pages.partial.jsonl`` at once, so a resumed crawl keeps them."""

    def __init__(self, path: Path):
        self.path = path
        self.fh = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(Path(crawler.settings["JOBDIR"]) / PARTIAL_NAME)

    def open_spider(self, spider=None):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a", encoding="utf-8")

    def close_spider(self, spider=None):
        if self.fh:
            self.fh.close()

    def process_item(self, item, spider=None):
        self.fh.write(json.dumps(dict(item), ensure_ascii=False) + "\n")
        self.fh.flush()
        return item


def scrapy_settings(opts: CrawlOptions, mirror_target: str | None, log_file: str | None) -> dict[str, Any]:
    """The Scrapy settings of a polite crawl (identical for the live site and the mirror)."""
    settings: dict[str, Any] = {
        "BOT_NAME": "medfc",
        "USER_AGENT": opts.full_user_agent,
        "ROBOTSTXT_OBEY": True,
        "ROBOTSTXT_USER_AGENT": opts.user_agent,
        "AUTOTHROTTLE_ENABLED": True,
        "AUTOTHROTTLE_START_DELAY": max(opts.download_delay, 0.0),
        "AUTOTHROTTLE_MAX_DELAY": opts.autothrottle_max_delay,
        "AUTOTHROTTLE_TARGET_CONCURRENCY": opts.autothrottle_target_concurrency,
        "DOWNLOAD_DELAY": opts.download_delay,
        "CONCURRENT_REQUESTS_PER_DOMAIN": opts.concurrent_requests_per_domain,
        "CONCURRENT_REQUESTS": max(2, opts.concurrent_requests_per_domain),
        "RETRY_ENABLED": True,
        "RETRY_TIMES": opts.retry_times,
        "DOWNLOAD_TIMEOUT": opts.download_timeout,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(Path(opts.http_cache_dir).resolve()),
        "HTTPCACHE_EXPIRATION_SECS": opts.http_cache_expiration_secs,
        "HTTPCACHE_IGNORE_HTTP_CODES": [429, 500, 502, 503, 504],
        "JOBDIR": str(Path(opts.jobdir).resolve()),
        "ITEM_PIPELINES": {"medfc.healthfc.crawl.AppendPagesPipeline": 300},
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "LOG_LEVEL": opts.log_level,
        "LOGSTATS_INTERVAL": 30.0,
    }
    if opts.max_pages:
        settings["CLOSESPIDER_ITEMCOUNT"] = opts.max_pages
    if log_file:
        settings["LOG_FILE"] = str(log_file)
        settings["LOG_FILE_APPEND"] = True
    if mirror_target:
        handler = "medfc.healthfc.mirror.MirrorDownloadHandler"
        settings["DOWNLOAD_HANDLERS"] = {"http": handler, "https": handler}
        settings["MEDFC_MIRROR_ORIGIN"] = opts.base_url
        settings["MEDFC_MIRROR_TARGET"] = mirror_target
    return settings


def _run_spider(opts_dict: dict[str, Any], mirror_target: str | None, log_file: str | None, stats_path: str) -> None:
    """Child-process body: run the spider to the end and write Scrapy's stats."""
    from scrapy.crawler import CrawlerProcess

    opts = CrawlOptions.from_mapping(opts_dict)
    process = CrawlerProcess(settings=scrapy_settings(opts, mirror_target, log_file))
    crawler = process.create_crawler(PortalSpider)
    process.crawl(crawler, base_url=opts.base_url, sitemap_path=opts.sitemap_path,
                  sitemap_follow=list(opts.sitemap_follow), url_list=list(opts.url_list))
    process.start()
    stats = {k: (v.isoformat() if isinstance(v, dt.datetime) else v) for k, v in crawler.stats.get_stats().items()}
    Path(stats_path).write_text(json.dumps(stats, indent=2, sort_keys=True, default=str), encoding="utf-8")


@dataclass
class CrawlResult:
    n_pages: int
    stats: dict[str, Any]
    mirror_requests: list[str] | None
    resumed: bool

    def summary(self) -> dict[str, Any]:
        return asdict(self)


def child_command(opts: CrawlOptions, mirror_target: str | None, log_file: str | None, stats_path: str | Path) -> list[str]:
    """The command line of the child process that runs the spider."""
    args = {"opts": opts.as_dict(), "mirror_target": mirror_target, "log_file": log_file, "stats_path": str(stats_path)}
    return [sys.executable, "-m", "medfc.healthfc.crawl", json.dumps(args)]


def prepare(opts: CrawlOptions) -> CrawlOptions:
    """Options as the crawl uses them: one HTTP cache per version of a mirror, so that editing
    the demo pages never serves stale cached copies."""
    if opts.mirror_dir:
        opts = opts.replace(http_cache_dir=str(Path(opts.http_cache_dir) / f"mirror-{tree_digest(opts.mirror_dir)}"))
    return opts


def crawl_site(opts: CrawlOptions, pages_out: str | Path, stats_out: str | Path, log_file: str | None = None,
               mirror_delay: float = 0.0) -> CrawlResult:
    """Crawl the site (or its local mirror) into ``pages_out`` (gzip JSONL) and ``stats_out``.

    A finished crawl removes its JOBDIR; an interrupted one leaves it, and the next call resumes
    from it, keeping the pages fetched before the interruption.
    """
    jobdir = Path(opts.jobdir)
    partial = jobdir / PARTIAL_NAME
    resumed = partial.exists()
    if resumed:
        log.info("resuming the interrupted crawl in %s", jobdir)
    opts = prepare(opts)
    Path(stats_out).parent.mkdir(parents=True, exist_ok=True)
    scrapy_stats = Path(stats_out).with_suffix(".scrapy.json")
    server = MirrorServer(opts.mirror_dir, delay=mirror_delay) if opts.mirror_dir else nullcontext()
    with server as srv:
        target = srv.origin if opts.mirror_dir else None
        child = subprocess.run(child_command(opts, target, log_file, scrapy_stats), check=False)
        if child.returncode != 0:
            raise RuntimeError(f"the crawl process failed with exit code {child.returncode}; see the log {log_file or ''}")
        requests = list(srv.requests) if opts.mirror_dir else None
    stats = json.loads(scrapy_stats.read_text(encoding="utf-8"))
    scrapy_stats.unlink()
    pages: dict[str, dict[str, Any]] = {}
    if partial.exists():
        for page in read_jsonl(partial):
            pages[page["url"]] = page  # a page fetched again after a resume: the later copy wins
    n = write_jsonl(pages_out, (pages[u] for u in sorted(pages)))
    reason = stats.get("finish_reason")
    summary = {
        "finish_reason": reason,
        "pages": n,
        "resumed": resumed,
        "from_cache": sum(1 for p in pages.values() if p.get("from_cache")),
        "fetched": sum(1 for p in pages.values() if not p.get("from_cache")),
        "robots_forbidden": stats.get("robotstxt/forbidden", 0),
        "mirror_requests": len(requests) if requests is not None else None,
        "scrapy": stats,
    }
    write_json(stats_out, summary)
    if reason in ("finished", "closespider_itemcount"):
        shutil.rmtree(jobdir, ignore_errors=True)
    else:
        log.warning("crawl ended with %r; keeping %s so the next run resumes", reason, jobdir)
    log.info("crawl: %d pages (%d from cache), %d forbidden by robots.txt", n, summary["from_cache"], summary["robots_forbidden"])
    return CrawlResult(n_pages=n, stats=summary, mirror_requests=requests, resumed=resumed)


if __name__ == "__main__":
    _args = json.loads(sys.argv[1])
    _run_spider(_args["opts"], _args["mirror_target"], _args["log_file"], _args["stats_path"])
