"""The Scrapy crawl against a local mirror: robots.txt, HTTP cache, URL list, resume."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from medfc.common.io import read_jsonl
from medfc.healthfc.crawl import CrawlIncomplete, CrawlOptions, MirrorServer, child_command, crawl_site, prepare
from tests.helpers.config import section

ORIGIN = "https://www.medizin-transparent.at"
PAGE = '<!DOCTYPE html><html><head><title>{slug} | Medizin Transparent</title></head><body><p>{slug}</p></body></html>'


def make_site(root: Path, slugs: list[str], extra: list[str] = ()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /intern/\n")
    (root / "sitemap_index.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{ORIGIN}/post-sitemap.xml</loc></sitemap><sitemap><loc>{ORIGIN}/other-sitemap.xml</loc></sitemap>"
        "</sitemapindex>")
    locs = "".join(f"<url><loc>{ORIGIN}/{s}/</loc></url>" for s in slugs + ["intern/geheim"])
    (root / "post-sitemap.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>')
    (root / "other-sitemap.xml").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>{ORIGIN}/nicht-gefolgt/</loc></url></urlset>')
    for slug in slugs + ["intern/geheim", "nicht-gefolgt"] + list(extra):
        (root / slug).mkdir(parents=True, exist_ok=True)
        (root / slug / "index.html").write_text(PAGE.format(slug=slug))
    return root


def options(tmp_path: Path, site: Path, **kw) -> CrawlOptions:
    """The healthfc.crawl section (schema defaults) as the rule passes it, with the test's changes."""
    return CrawlOptions.from_mapping(section(
        "healthfc.crawl", mirror_dir=str(site), download_delay=0.0, retry_times=0, sitemap_follow=["post-sitemap"],
        http_cache_dir=str(tmp_path / "cache/http"), jobdir=str(tmp_path / "cache/job"), contact="test@example.org", **kw))


def test_crawl_obeys_robots_follows_only_wanted_sitemaps_and_caches(tmp_path):
    site = make_site(tmp_path / "site", ["a", "b", "c"], extra=["x"])
    opts = options(tmp_path, site, url_list=[f"{ORIGIN}/x/"])
    first = crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
    pages = list(read_jsonl(tmp_path / "out/pages.jsonl.gz"))
    assert [p["url"] for p in pages] == [f"{ORIGIN}/{s}/" for s in ("a", "b", "c", "x")]
    assert all(p["status"] == 200 and "<title>" in p["html"] and p["fetched_at"].endswith("+00:00") for p in pages)
    assert not any(r.startswith("/intern/") for r in first.mirror_requests)  # disallowed: never fetched
    assert "/other-sitemap.xml" not in first.mirror_requests
    assert sorted(first.mirror_requests) == sorted(["/robots.txt", "/sitemap_index.xml", "/post-sitemap.xml", "/a/", "/b/", "/c/", "/x/"])
    stats = json.loads((tmp_path / "out/stats.json").read_text())
    assert stats["robots_forbidden"] == 1 and stats["fetched"] == 4 and stats["finish_reason"] == "finished"
    assert not Path(opts.jobdir).exists()  # a finished crawl leaves no job state

    second = crawl_site(opts, tmp_path / "out2/pages.jsonl.gz", tmp_path / "out2/stats.json")
    assert second.mirror_requests == []  # everything from the HTTP cache
    assert json.loads((tmp_path / "out2/stats.json").read_text())["from_cache"] == 4
    again = list(read_jsonl(tmp_path / "out2/pages.jsonl.gz"))
    assert [(p["url"], p["html"], p["fetched_at"]) for p in again] == [(p["url"], p["html"], p["fetched_at"]) for p in pages]


def test_a_served_copy_is_crawled_through_mirror_url_under_the_real_origin(tmp_path):
    """healthfc.crawl.mirror_url: a server that is already running (a web-archive replay, a proxy, the chaos run's
    faulty portal) gets the crawl's requests; the stored URLs are base_url's, the HTTP cache its own."""
    site = make_site(tmp_path / "site", ["a", "b"])
    with MirrorServer(site) as srv:
        opts = options(tmp_path, site, mirror_url=srv.origin).replace(mirror_dir=None)
        result = crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
        served = list(srv.requests)
    assert result.mirror_requests is None and sorted(served) == sorted(["/robots.txt", "/sitemap_index.xml", "/post-sitemap.xml", "/a/", "/b/"])
    assert [p["url"] for p in read_jsonl(tmp_path / "out/pages.jsonl.gz")] == [f"{ORIGIN}/a/", f"{ORIGIN}/b/"]
    assert "mirror-url-" in prepare(opts).http_cache_dir


def test_editing_the_mirror_uses_a_fresh_cache(tmp_path):
    site = make_site(tmp_path / "site", ["a"])
    opts = options(tmp_path, site)
    crawl_site(opts, tmp_path / "o1.jsonl.gz", tmp_path / "s1.json")
    (site / "a" / "index.html").write_text(PAGE.format(slug="a-geaendert"))
    result = crawl_site(opts, tmp_path / "o2.jsonl.gz", tmp_path / "s2.json")
    assert "/a/" in result.mirror_requests
    assert "a-geaendert" in next(read_jsonl(tmp_path / "o2.jsonl.gz"))["html"]


def test_an_interrupted_crawl_resumes_without_refetching(tmp_path):
    slugs = [f"artikel-{i:02d}" for i in range(12)]
    site = make_site(tmp_path / "site", slugs)
    opts = prepare(options(tmp_path, site))
    partial = Path(opts.jobdir) / "pages.partial.jsonl"
    with MirrorServer(site, delay=0.4) as slow:
        proc = subprocess.Popen(child_command(opts, slow.origin, str(tmp_path / "crawl.log"), tmp_path / "s.json"))
        deadline = time.time() + 60
        while time.time() < deadline and (not partial.exists() or len(partial.read_text().splitlines()) < 3):
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)  # what Ctrl-C or a cluster's preemption sends
        assert proc.wait(timeout=60) == 0
        fetched_before = [p for p in slow.requests if p.startswith("/artikel-")]
    done_before = {r["url"] for r in read_jsonl(partial)}
    assert 3 <= len(done_before) < len(slugs), "the crawl should have been interrupted midway"

    result = crawl_site(options(tmp_path, site), tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
    assert result.resumed
    pages = [p["url"] for p in read_jsonl(tmp_path / "out/pages.jsonl.gz")]
    assert pages == [f"{ORIGIN}/{s}/" for s in slugs]  # nothing lost
    refetched = {f"{ORIGIN}{p}" for p in result.mirror_requests} & done_before
    assert not refetched, f"pages fetched before the interruption were fetched again: {refetched}"
    assert not Path(opts.jobdir).exists()
    assert len(fetched_before) >= 3


@pytest.mark.parametrize("cut", ["half", "inside_a_multibyte_character"])
def test_a_torn_last_line_in_the_partial_file_is_dropped_counted_and_refetched(tmp_path, cut):
    """A kill mid-write leaves half a line at the end of the job's partial pages file (cut inside "Ü": its
    bytes are not UTF-8); the pages appended after it start a line of their own."""
    slugs = ["a", "b", "c", "d"]
    site = make_site(tmp_path / "site", slugs)
    opts = options(tmp_path, site)
    crawl_site(opts, tmp_path / "ref/pages.jsonl.gz", tmp_path / "ref/stats.json")
    ref = list(read_jsonl(tmp_path / "ref/pages.jsonl.gz"))
    partial = Path(opts.jobdir) / "pages.partial.jsonl"
    partial.parent.mkdir(parents=True)
    lines = [json.dumps(p, ensure_ascii=False).encode("utf-8") for p in ref[:2]]
    torn = json.dumps({**ref[2], "html": "Übersicht " + ref[2]["html"]}, ensure_ascii=False).encode("utf-8")
    torn = torn[: len(torn) // 2] if cut == "half" else torn[: torn.index("Ü".encode("utf-8")) + 1]
    partial.write_bytes(lines[0] + b"\n" + lines[1] + b"\n" + torn)

    result = crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
    pages = list(read_jsonl(tmp_path / "out/pages.jsonl.gz"))
    assert [(p["url"], p["html"]) for p in pages] == [(p["url"], p["html"]) for p in ref]
    stats = json.loads((tmp_path / "out/stats.json").read_text())
    assert result.resumed and stats["urls"]["partial_torn_lines"] == 1
    assert stats["urls"]["resumed"] == 2 and stats["urls"]["from_cache"] == 2  # c (torn) and d again, from the cache


def test_the_crawl_stays_on_its_origin(tmp_path):
    """Off-site, file:, data: and ftp: URLs listed in a sitemap (or the URL list) are counted, never fetched."""
    secret = tmp_path / "secret.txt"
    secret.write_text("GEHEIM")
    with MirrorServer(make_site(tmp_path / "other", ["fremd"])) as other:  # another site, on 127.0.0.1
        offsite = [f"{other.origin}/fremd/", f"file://{secret}", "data:text/plain,hallo", "ftp://127.0.0.1:9/x",
                   other.origin.replace("http://", "https://") + "/fremd/"]
        site = make_site(tmp_path / "site", ["a", "b"])
        sitemap = site / "post-sitemap.xml"
        sitemap.write_text(sitemap.read_text().replace("</urlset>", "".join(f"<url><loc>{u}</loc></url>" for u in offsite) + "</urlset>"))
        opts = options(tmp_path, site, url_list=[f"{other.origin}/fremd/?liste"])
        result = crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
        assert other.requests == []
    pages = list(read_jsonl(tmp_path / "out/pages.jsonl.gz"))
    assert [p["url"] for p in pages] == [f"{ORIGIN}/a/", f"{ORIGIN}/b/"]
    assert not any("GEHEIM" in p["html"] or "hallo" in p["html"] for p in pages)
    assert sorted(result.mirror_requests) == sorted(["/robots.txt", "/sitemap_index.xml", "/post-sitemap.xml", "/a/", "/b/"])
    stats = json.loads((tmp_path / "out/stats.json").read_text())
    assert stats["urls"]["skipped"] == {"offsite": 6, "robots_forbidden": 1}
    assert sorted(stats["skipped_urls"]["offsite"]) == sorted(offsite + [f"{other.origin}/fremd/?liste"])


def test_only_http_download_handlers_are_on():
    from medfc.healthfc.crawl import scrapy_settings
    opts = CrawlOptions.from_mapping(section("healthfc.crawl", http_cache_dir="c", jobdir="j"))
    for target in (None, "http://127.0.0.1:9"):
        handlers = scrapy_settings(opts, target, None)["DOWNLOAD_HANDLERS"]
        assert {k: v for k, v in handlers.items() if v is not None}.keys() <= {"http", "https"}
        assert all(handlers[s] is None for s in ("file", "ftp", "s3", "data"))


def test_a_missing_mirror_dir_stops_the_crawl_naming_the_key(tmp_path):
    opts = options(tmp_path, tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="healthfc.crawl.mirror_dir"):
        crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")


def test_max_pages_is_a_legitimate_finish(tmp_path):
    site = make_site(tmp_path / "site", [f"s{i}" for i in range(8)])
    opts = options(tmp_path, site, max_pages=2)
    result = crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
    assert result.stats["finish_reason"] == "closespider_itemcount"
    assert 2 <= result.n_pages < 8
    assert not Path(opts.jobdir).exists()


def test_a_sitemap_that_cannot_be_read_fails_the_crawl_and_keeps_its_state(tmp_path):
    site = make_site(tmp_path / "site", ["a", "b"])
    (site / "post-sitemap.xml").unlink()  # listed in the index, gone from the server
    opts = options(tmp_path, site)
    with pytest.raises(CrawlIncomplete, match=r"1 sitemaps could not be read: https://www\.medizin-transparent\.at/post-sitemap\.xml \(http_404\)"):
        crawl_site(opts, tmp_path / "out/pages.jsonl.gz", tmp_path / "out/stats.json")
    assert not (tmp_path / "out/pages.jsonl.gz").exists()
    stats = json.loads((Path(opts.jobdir) / "stats.incomplete.json").read_text())
    assert stats["failed_sitemaps"] == {f"{ORIGIN}/post-sitemap.xml": "http_404"}
