"""Crawl the Medizin Transparent portal with Scrapy: article URLs from the sitemap index (and a URL list), robots.txt
obeyed, throttled, retried, HTTP-cached; an interrupted crawl resumes from its job directory. Pages are kept raw.
Each crawl runs in a child process (``python -m medfc.healthfc.crawl``): Twisted's reactor cannot be restarted. The
demo crawl sends the origin's requests to a static mirror on 127.0.0.1 (:class:`MirrorDownloadHandler`)."""

from __future__ import annotations

import datetime as dt
import email.utils
import functools
import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NotRequired, TypedDict
from urllib.parse import urlsplit, urlunsplit

import scrapy
from scrapy import signals
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.spiders import SitemapSpider
from w3lib.url import canonicalize_url as url_key  # the key a URL is accounted under

from medfc.common.appendlog import JsonlAppender, read_appended
from medfc.common.io import write_json, write_jsonl
from medfc.common.jsontypes import JSONValue
from medfc.healthfc.options import CrawlOptions


class PageRecord(TypedDict):
    """One fetched page (the crawl's ``pages`` output without ``_urls``)."""

    url: str
    status: int
    fetched_at: str
    from_cache: bool
    html: str
    _urls: NotRequired[list[str]]  # the URLs this page accounts for (a redirect's too): the partial file's only


log = logging.getLogger(__name__)

PARTIAL_NAME = "pages.partial.jsonl"


def _fetch_time(response: scrapy.http.Response) -> str:
    """The server's Date header (kept in the HTTP cache, so stable across cached reruns), as ISO."""
    if raw := response.headers.get(b"Date"):
        try:
            return email.utils.parsedate_to_datetime(raw.decode("latin-1")).astimezone(dt.UTC).isoformat()
        except (TypeError, ValueError):
            pass
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class OffsiteURL(IgnoreRequest):
    """A request for a URL outside the crawl's origin (another host, or a scheme other than http(s))."""


def _host_port(parts) -> tuple[str, int | None]:
    port = parts.port  # ValueError on a bad port: the caller treats the URL as off-site
    return (parts.hostname or "").lower(), (None if port in (None, 80, 443) else port)


def same_origin(url: str, origin: str) -> bool:
    """Whether ``url`` is http(s) on ``origin``'s host and port (http and https both count)."""
    try:
        u, o = urlsplit(url), urlsplit(origin)
        return u.scheme.lower() in ("http", "https") and bool(u.hostname) and _host_port(u) == _host_port(o)
    except ValueError:
        return False


class OriginFilterMiddleware:
    """Downloader middleware (before robots.txt): a request off the origin (a redirect) is ignored and counted."""

    def __init__(self, origin: str, stats):
        self.origin, self.stats = origin, stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings["MEDFC_ORIGIN"], crawler.stats)

    def process_request(self, request, spider=None):
        if not same_origin(request.url, self.origin):
            self.stats.inc_value("medfc/offsite")
            raise OffsiteURL(f"off the crawl's origin {self.origin}: {request.url}")
        return None


class PortalSpider(SitemapSpider):
    """Sitemap-driven spider accounting for every URL the sitemaps list: fetched, resumed (in ``done``), skipped with
    a reason (off-site, robots.txt, a 4xx but 404/410, a duplicate) or failed (network, 5xx or 429 after retries)."""

    name = "medizin_transparent"
    handle_httpstatus_list = [404, 410]  # kept as pages, so the parse report names them

    def __init__(self, base_url: str, sitemap_path: str, sitemap_follow: list[str], url_list: list[str],
                 done: list[str] = (), *a, **kw):
        self.origin = base_url
        self.sitemap_urls = [base_url.rstrip("/") + sitemap_path]
        self.sitemap_follow = sitemap_follow
        self.sitemap_rules = [("", "parse_page")]
        super().__init__(*a, **kw)
        self.extra_urls = list(url_list)
        self.done = {url_key(u) for u in done}
        self.listed: set[str] = set()
        self.resumed: set[str] = set()
        self.skipped: dict[str, dict[str, str]] = defaultdict(dict)  # reason -> key -> URL
        self.failed: dict[str, str] = {}  # URL -> reason
        self.sitemap_failures: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler, *a, **kw):
        spider = super().from_crawler(crawler, *a, **kw)
        crawler.signals.connect(spider._dropped, signal=signals.request_dropped)
        return spider

    async def start(self):
        for url in self.sitemap_urls:
            yield self._sitemap_request(url)
        for url in self.extra_urls:
            if (request := self._page_request(url)) is not None:
                yield request

    def _skip(self, reason: str, url: str) -> None:
        self.skipped[reason][url_key(url) if same_origin(url, self.origin) else url] = url

    def _sitemap_request(self, url: str) -> scrapy.Request | None:
        if not same_origin(url, self.origin):
            self._skip("offsite_sitemap", url)
            return None
        return scrapy.Request(url, callback=self._parse_sitemap, errback=self._sitemap_failed, dont_filter=True)

    def _page_request(self, url: str) -> scrapy.Request | None:
        if not same_origin(url, self.origin):
            self._skip("offsite", url)
            return None
        key = url_key(url)
        self.listed.add(key)
        if key in self.done:
            self.resumed.add(key)
            return None
        return scrapy.Request(url, callback=self.parse_page, errback=self._page_failed)

    def _parse_sitemap(self, response: scrapy.http.Response):
        if response.status != 200 or self._get_sitemap_body(response) is None:
            self.sitemap_failures[response.url] = f"http_{response.status}" if response.status != 200 else "not a sitemap"
            return
        for request in super()._parse_sitemap(response):
            make = self._sitemap_request if request.callback == self._parse_sitemap else self._page_request
            if (follow := make(request.url)) is not None:
                yield follow

    def _sitemap_failed(self, failure) -> None:
        self.sitemap_failures[failure.request.url] = f"{type(failure.value).__name__}: {failure.value}"[:300]

    def _page_failed(self, failure) -> None:
        request = failure.request
        listed = (request.meta.get("redirect_urls") or [request.url])[0]
        if failure.check(HttpError):
            status = failure.value.response.status
            if status >= 500 or status == 429:  # transient: the crawl fails, a rerun retries it
                self.failed[listed] = f"http_{status}"
            else:
                self._skip(f"http_{status}", listed)
        elif failure.check(OffsiteURL):
            self._skip("offsite_redirect", listed)
        elif failure.check(IgnoreRequest):
            self._skip("robots_forbidden", listed)
        else:
            self.failed[listed] = f"{type(failure.value).__name__}: {failure.value}"[:300]

    def _dropped(self, request, spider=None, **kw) -> None:
        if request.callback == self.parse_page:
            for url in (*request.meta.get("redirect_urls", ()), request.url):
                self._skip("duplicate", url)

    def parse_page(self, response: scrapy.http.Response):
        urls = {*response.request.meta.get("redirect_urls", ()), response.request.url, response.url}
        yield {"url": response.url, "status": response.status, "fetched_at": _fetch_time(response),
               "from_cache": "cached" in response.flags,
               "html": response.text if isinstance(response, scrapy.http.TextResponse) else "",
               "_urls": sorted(urls)}  # the URLs this page accounts for (a redirect's too); not in the output

    def accounting(self) -> dict[str, object]:
        return {"listed": sorted(self.listed), "resumed": sorted(self.resumed),
                "skipped": {r: dict(sorted(v.items())) for r, v in sorted(self.skipped.items())},
                "failed": dict(sorted(self.failed.items())), "sitemap_failures": dict(sorted(self.sitemap_failures.items()))}


class AppendPagesPipeline:
    """Append every page to the job's ``pages.partial.jsonl`` at once, so a resumed crawl keeps them."""

    def __init__(self, path: Path):
        self.out = JsonlAppender(path, sort_keys=False)  # the file is opened by the first page

    @classmethod
    def from_crawler(cls, crawler):
        return cls(Path(crawler.settings["MEDFC_PARTIAL"]))

    def close_spider(self, spider=None):
        self.out.close()

    def process_item(self, item, spider=None):
        self.out.append([dict(item)])
        return item


class MirrorServer:
    """A threaded static HTTP server over ``root`` on 127.0.0.1 (any free port); ``requests``: every path asked."""

    def __init__(self, root: str | Path, delay: float = 0.0):
        self.root = Path(root).resolve()
        self.requests: list[str] = []
        requests = self.requests

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
                log.debug("mirror: " + format, *args)

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                requests.append(self.path)
                if delay:
                    time.sleep(delay)
                super().do_GET()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(self.root)))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> MirrorServer:
        self._thread.start()
        log.info("serving mirror %s on %s", self.root, self.origin)
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def tree_digest(root: str | Path) -> str:
    """A short digest of every file under ``root`` (names and bytes): the mirror's version."""
    h = hashlib.sha256()
    root = Path(root)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


class MirrorDownloadHandler(HTTP11DownloadHandler):
    """HTTP(S) download handler that fetches the origin's URLs from the local mirror, and nothing else:
    a request for another host is refused (a mirror crawl never leaves 127.0.0.1)."""

    def __init__(self, crawler):
        super().__init__(crawler)
        self._origin = crawler.settings["MEDFC_MIRROR_ORIGIN"]
        self._target = crawler.settings["MEDFC_MIRROR_TARGET"]

    async def download_request(self, request):
        url, target = urlsplit(request.url), urlsplit(self._target)
        if url.netloc.lower() != urlsplit(self._origin).netloc.lower():
            raise IgnoreRequest(f"the mirror serves {self._origin} only, not {request.url}")
        local = request.replace(url=urlunsplit((target.scheme, target.netloc, url.path, url.query, url.fragment)))
        response = await super().download_request(local)
        return response.replace(url=request.url, request=request)


def scrapy_settings(opts: CrawlOptions, mirror_target: str | None, log_file: str | None) -> dict[str, object]:
    """The Scrapy settings of a polite crawl (identical for the live site and the mirror). No Scrapy JOBDIR (a hard
    kill loses its queue but not its seen-requests file): the job state is the partial pages file."""
    jobdir = Path(opts.jobdir).resolve()
    handlers: dict[str, str | None] = {"file": None, "ftp": None, "s3": None, "data": None}  # http(s) only
    agent = f"{opts.user_agent} (+mailto:{opts.contact})" if opts.contact else opts.user_agent
    settings: dict[str, object] = {
        "BOT_NAME": "medfc", "USER_AGENT": agent, "ROBOTSTXT_OBEY": True, "ROBOTSTXT_USER_AGENT": opts.user_agent,
        "AUTOTHROTTLE_ENABLED": True, "AUTOTHROTTLE_START_DELAY": max(opts.download_delay, 0.0),
        "AUTOTHROTTLE_MAX_DELAY": opts.autothrottle_max_delay, "AUTOTHROTTLE_TARGET_CONCURRENCY": opts.autothrottle_target_concurrency,
        "DOWNLOAD_DELAY": opts.download_delay,
        "CONCURRENT_REQUESTS_PER_DOMAIN": opts.concurrent_requests_per_domain,
        "CONCURRENT_REQUESTS": max(2, opts.concurrent_requests_per_domain),
        "RETRY_ENABLED": True, "RETRY_TIMES": opts.retry_times, "DOWNLOAD_TIMEOUT": opts.download_timeout,
        "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(Path(opts.http_cache_dir).resolve()),
        "HTTPCACHE_EXPIRATION_SECS": opts.http_cache_expiration_secs, "HTTPCACHE_IGNORE_HTTP_CODES": [429, 500, 502, 503, 504],
        "MEDFC_PARTIAL": str(jobdir / PARTIAL_NAME), "MEDFC_ORIGIN": opts.base_url,
        "ITEM_PIPELINES": {"medfc.healthfc.crawl.AppendPagesPipeline": 300},
        "DOWNLOADER_MIDDLEWARES": {"medfc.healthfc.crawl.OriginFilterMiddleware": 40},  # before robots.txt (100)
        "DOWNLOAD_HANDLERS": handlers, "TELNETCONSOLE_ENABLED": False, "REMOTE_CONTROL_ENABLED": False,
        "LOG_LEVEL": opts.log_level, "LOGSTATS_INTERVAL": 30.0,
    }
    if opts.max_pages:
        settings["CLOSESPIDER_ITEMCOUNT"] = opts.max_pages
    if log_file:
        settings.update(LOG_FILE=str(log_file), LOG_FILE_APPEND=True)
    if mirror_target:
        handler = "medfc.healthfc.crawl.MirrorDownloadHandler"
        handlers.update({"http": handler, "https": handler})
        settings.update(MEDFC_MIRROR_ORIGIN=opts.base_url, MEDFC_MIRROR_TARGET=mirror_target)
    return settings


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux for SIGTERM when the parent dies, so a killed step never leaves its crawl running."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the call
        os.kill(os.getpid(), signal.SIGTERM)


def _run_spider(opts_dict: Mapping[str, JSONValue], mirror_target: str | None, log_file: str | None, stats_path: str) -> None:
    from scrapy.crawler import CrawlerProcess

    opts = CrawlOptions.from_mapping(opts_dict)
    partial = Path(opts.jobdir) / PARTIAL_NAME
    done = sorted({u for page in read_partial(partial)[0] for u in page_urls(page)})
    process = CrawlerProcess(settings=scrapy_settings(opts, mirror_target, log_file))
    crawler = process.create_crawler(PortalSpider)
    process.crawl(crawler, base_url=opts.base_url, sitemap_path=opts.sitemap_path,
                  sitemap_follow=list(opts.sitemap_follow), url_list=list(opts.url_list), done=done)
    process.start()
    stats = {k: (v.isoformat() if isinstance(v, dt.datetime) else v) for k, v in crawler.stats.get_stats().items()}
    out = {"scrapy": stats, "urls": crawler.spider.accounting()}
    Path(stats_path).write_text(json.dumps(out, indent=2, sort_keys=True, default=str), encoding="utf-8")


def page_urls(page: PageRecord) -> list[str]:
    """The URLs a kept page accounts for: the listed one, any redirects, the final one."""
    return list(page.get("_urls") or [page["url"]])


class CrawlIncomplete(RuntimeError):
    """The crawl did not reach every page it should have; its job state is kept for a resume."""


@dataclass
class CrawlResult:
    n_pages: int
    stats: dict[str, object]
    mirror_requests: list[str] | None
    resumed: bool


def child_command(opts: CrawlOptions, mirror_target: str | None, log_file: str | None, stats_path: str | Path) -> list[str]:
    args = {"opts": opts.as_dict(), "mirror_target": mirror_target, "log_file": log_file, "stats_path": str(stats_path),
            "parent_pid": os.getpid()}
    return [sys.executable, "-m", "medfc.healthfc.crawl", json.dumps(args)]


def prepare(opts: CrawlOptions) -> CrawlOptions:
    """Options as the crawl uses them: one HTTP cache per version of a mirror (edited demo pages are never stale); the
    plan has checked that ``mirror_dir`` and ``mirror_url`` are not both set."""
    if opts.mirror_dir:
        if not Path(opts.mirror_dir).is_dir():
            raise FileNotFoundError(f"healthfc.crawl.mirror_dir {opts.mirror_dir!r} does not exist (or is not a directory)")
        opts = opts.replace(http_cache_dir=str(Path(opts.http_cache_dir) / f"mirror-{tree_digest(opts.mirror_dir)}"))
    elif opts.mirror_url:  # a served copy: its own HTTP cache, never the live site's
        digest = hashlib.sha256(opts.mirror_url.encode()).hexdigest()[:16]
        opts = opts.replace(http_cache_dir=str(Path(opts.http_cache_dir) / f"mirror-url-{digest}"))
    return opts


def read_partial(path: Path) -> tuple[list[PageRecord], int]:
    """The pages kept in the partial pages file, and how many torn lines were skipped (their pages fetched again)."""
    pages, torn = read_appended(path, valid=lambda record: "url" in record, what="page record")
    return pages, len(torn)


def crawl_site(opts: CrawlOptions, pages_out: str | Path, stats_out: str | Path,
               log_file: str | None = None) -> CrawlResult:
    """Crawl the site (or its mirror) into ``pages_out`` (gzip JSONL) and ``stats_out`` once Scrapy finished (or hit
    ``max_pages``) with every listed URL accounted for; else :class:`CrawlIncomplete`, the job directory kept."""
    jobdir = Path(opts.jobdir)
    partial = jobdir / PARTIAL_NAME
    opts = prepare(opts)
    kept, torn = read_partial(partial)
    before = {page["url"]: page for page in kept}  # a page fetched again after a resume: the later copy wins
    resumed = partial.exists()
    if resumed:
        log.info("resuming the interrupted crawl in %s (%d pages kept)", jobdir, len(before))
    jobdir.mkdir(parents=True, exist_ok=True)
    child_out = jobdir / "child-stats.json"
    child_out.unlink(missing_ok=True)
    keep = f"the job state in {jobdir} is kept: run the crawl again to resume"
    server = MirrorServer(opts.mirror_dir) if opts.mirror_dir else nullcontext()
    with server as srv:
        target = srv.origin if opts.mirror_dir else opts.mirror_url
        child = subprocess.run(child_command(opts, target, log_file, child_out), check=False)
        requests = list(srv.requests) if opts.mirror_dir else None
    if child.returncode != 0 or not child_out.exists():
        how = (f"was killed by {signal.Signals(-child.returncode).name}" if child.returncode < 0
               else f"failed with exit code {child.returncode}")
        raise CrawlIncomplete(f"the crawl process {how}; {keep} (see the log {log_file or ''})")
    out = json.loads(child_out.read_text(encoding="utf-8"))
    child_out.unlink()
    stats, acc = out["scrapy"], out["urls"]
    pages = {page["url"]: page for page in read_partial(partial)[0]}
    new = [p for u, p in pages.items() if u not in before]
    reason = stats.get("finish_reason")
    skipped = acc["skipped"]
    summary = {
        "finish_reason": reason, "pages": len(pages), "resumed": resumed,
        "from_cache": sum(1 for p in pages.values() if p.get("from_cache")),
        "fetched": sum(1 for p in pages.values() if not p.get("from_cache")),
        "robots_forbidden": stats.get("robotstxt/forbidden", 0),
        "mirror_requests": len(requests) if requests is not None else None,
        "urls": {
            "listed": len(acc["listed"]), "fetched": sum(1 for p in new if not p.get("from_cache")),
            "from_cache": sum(1 for p in new if p.get("from_cache")), "resumed": len(before),
            "gone": sum(1 for p in pages.values() if p.get("status") in (404, 410)),
            "skipped": {r: len(v) for r, v in skipped.items() if v}, "partial_torn_lines": torn,
        },
        "skipped_urls": {r: sorted(v.values()) for r, v in skipped.items() if v},
        "scrapy": stats,
    }
    problems = [] if reason in ("finished", "closespider_itemcount") else [
        f"the crawl stopped before its end (finish_reason {reason!r})"]
    for key, name, what in (("sitemap_failures", "failed_sitemaps", "sitemaps could not be read"),
                            ("failed", "failed_urls", "pages could not be fetched")):
        if items := list(acc[key].items()):
            summary[name] = acc[key]
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            problems.append(f"{len(items)} {what}: {', '.join(f'{u} ({r})' for u, r in items[:3])}{more}")
    if reason == "finished":
        accounted = {url_key(u) for p in pages.values() for u in page_urls(p)}
        accounted |= {k for v in skipped.values() for k in v} | {url_key(u) for u in acc["failed"]}
        if missing := sorted(set(acc["listed"]) - accounted):
            summary["missing_urls"] = missing
            problems.append(f"{len(missing)} listed pages were never fetched: {', '.join(missing[:3])}")
    if problems:
        write_json(jobdir / "stats.incomplete.json", summary)
        raise CrawlIncomplete(f"incomplete crawl: {'; '.join(problems)}; {len(pages)} pages kept so far; {keep} "
                              f"(its stats: {jobdir / 'stats.incomplete.json'})")
    n = write_jsonl(pages_out, ({k: v for k, v in pages[u].items() if not k.startswith("_")} for u in sorted(pages)))
    write_json(stats_out, summary)
    shutil.rmtree(jobdir, ignore_errors=True)
    log.info("crawl: %d pages (%d resumed, %d fetched, %d from cache); skipped: %s", n, len(before),
             summary["urls"]["fetched"], summary["urls"]["from_cache"], summary["urls"]["skipped"] or "none")
    return CrawlResult(n_pages=n, stats=summary, mirror_requests=requests, resumed=resumed)


if __name__ == "__main__":
    _args = json.loads(sys.argv[1])
    _die_with_parent(_args["parent_pid"])  # child_command passes its pid
    _run_spider(_args["opts"], _args["mirror_target"], _args["log_file"], _args["stats_path"])
