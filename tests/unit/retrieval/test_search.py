"""The shared search clients (medfc.retrieval.search) against local fake servers: a Serper-compatible web
search, PubMed E-utilities (esearch, efetch) and the MediaWiki API (list=search, prop=extracts). Exact hits
in rank order, a cache hit on rerun, 429 retried, a missing key naming its variable."""

from __future__ import annotations

import json
import urllib.parse
from http.server import BaseHTTPRequestHandler

import pytest

from medfc.common.http import HttpClient, HttpError
from medfc.common.jsoncache import UnitCache
from medfc.retrieval.pubmed import PubmedFetcher
from medfc.retrieval.search import (CachedSearch, Hit, MissingApiKey, PubMedSearch, SearchKeyRejected, WebSearch, WikipediaSearch,
                                    strip_html)
from tests.helpers.http_servers import reply, reply_json, serving

SERPER_ANSWER = {"organic": [
    {"title": "One", "snippet": "First snippet.", "link": "https://a.example/1", "position": 1},
    {"title": "Empty", "snippet": "", "link": "https://a.example/x", "position": 2},
    {"title": "Two", "snippet": "Second snippet.", "link": "https://a.example/2", "position": 3},
    {"title": "Three", "snippet": "Third snippet.", "link": "https://a.example/3", "position": 4}]}


def fake_serper(log: list, fail_first: int = 0):
    class H(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append((body, self.headers.get("X-API-KEY")))
            if len(log) <= fail_first:
                return reply_json(self, {"message": "slow down"}, status=429, headers={"Retry-After": "0"})
            reply_json(self, SERPER_ANSWER)

        def log_message(self, *a):
            pass

    return H


def _client(**kw) -> HttpClient:
    return HttpClient(rate=1000, sleep=lambda s: None, **kw)


def test_web_search_hits_in_rank_order_cached_and_the_key_in_a_header_only(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "k-123")
    log: list = []
    with serving(fake_serper(log)) as base:
        web = CachedSearch(WebSearch(base + "/search", "MEDFC_TEST_SERPER", _client(), require_key=True), UnitCache(tmp_path / "c"))
        hits = web.search("Does  sugar make children hyperactive?", 3)
        assert hits == [Hit("One", "First snippet.", "https://a.example/1", "1"), Hit("Two", "Second snippet.", "https://a.example/2", "3"),
                        Hit("Three", "Third snippet.", "https://a.example/3", "4")]  # an empty snippet is no hit
        assert log == [({"num": 3, "q": "Does  sugar make children hyperactive?"}, "k-123")]
        assert web.search("Does sugar make children hyperactive?", 3) == hits  # same query, whitespace aside: the cache
        assert len(log) == 1 and web.searches == 1
        again = CachedSearch(WebSearch(base + "/search", "MEDFC_TEST_SERPER", _client(), require_key=True), UnitCache(tmp_path / "c"))
        assert again.search("Does sugar make children hyperactive?", 3) == hits and len(log) == 1 and again.searches == 0
        assert [h.title for h in web.search("Does sugar make children hyperactive?", 2)] == ["One", "Two"] and len(log) == 2
    assert "k-123" not in "".join(p.read_text() for p in (tmp_path / "c").rglob("*.json"))


def test_web_search_retries_a_429_then_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "k")
    log: list = []
    with serving(fake_serper(log, fail_first=1)) as base:
        http = _client(max_retries=2)
        hits = WebSearch(base + "/search", "MEDFC_TEST_SERPER", http, require_key=True).search("q", 1)
    assert [h.title for h in hits] == ["One"] and len(log) == 2 and http.stats["retries"] == 1


def test_a_missing_key_stops_before_any_request_naming_the_variable(monkeypatch):
    monkeypatch.delenv("MEDFC_NO_SUCH_KEY", raising=False)
    log: list = []
    with serving(fake_serper(log)) as base:
        with pytest.raises(MissingApiKey, match="set the environment variable MEDFC_NO_SUCH_KEY") as err:
            WebSearch(base + "/search", "MEDFC_NO_SUCH_KEY", _client(), require_key=True).search("q", 3)
        assert err.value.variable == "MEDFC_NO_SUCH_KEY" and log == []
        assert len(WebSearch(base + "/search", "MEDFC_NO_SUCH_KEY", _client()).search("q", 3)) == 3  # MedSNIP's optional key


EFETCH = """<?xml version="1.0" ?>
<PubmedArticleSet>
<PubmedArticle><MedlineCitation><PMID>22</PMID><Article><ArticleTitle>Second by id</ArticleTitle>
<Abstract><AbstractText>Abstract of 22.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>
<PubmedArticle><MedlineCitation><PMID>7</PMID><Article><ArticleTitle>First by relevance</ArticleTitle>
<Abstract><AbstractText Label="RESULTS">Abstract of 7.</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>
</PubmedArticleSet>
"""


def test_pubmed_search_keeps_esearch_relevance_order_and_caches(tmp_path):
    log: list = []

    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            url = urllib.parse.urlparse(self.path)
            q = dict(urllib.parse.parse_qsl(url.query))
            log.append((url.path, q))
            if url.path == "/esearch":
                return reply_json(self, {"esearchresult": {"idlist": ["7", "22"]}})
            reply(self, 200, {"Content-Type": "text/xml"}, EFETCH.encode())

        def log_message(self, *a):
            pass

    with serving(H) as base:
        fetcher = PubmedFetcher(tmp_path / "pm", api_key="", email="t@example.org", url=base + "/efetch", esearch_url=base + "/esearch",
                                requests_per_second=1000)
        pm = CachedSearch(PubMedSearch(fetcher), UnitCache(tmp_path / "c"))
        hits = pm.search("coffee atrial fibrillation", 2)
        assert hits == [Hit("First by relevance", "RESULTS: Abstract of 7.", "https://pubmed.ncbi.nlm.nih.gov/7/", "7"),
                        Hit("Second by id", "Abstract of 22.", "https://pubmed.ncbi.nlm.nih.gov/22/", "22")]
        assert [p for p, _ in log] == ["/esearch", "/efetch"]
        assert log[0][1]["term"] == "coffee atrial fibrillation" and log[0][1]["retmax"] == "2" and log[0][1]["sort"] == "relevance"
        assert log[1][1]["id"] == "7,22"
        assert pm.search("coffee atrial fibrillation", 2) == hits and len(log) == 2


def fake_mediawiki(log: list):
    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(self.path).query))
            log.append(q)
            if q.get("list") == "search":
                results = [{"pageid": 30, "title": "Sugar rush", "snippet": 'A <span class="searchmatch">sugar</span> &amp; behaviour'},
                           {"pageid": 10, "title": "Hyperactivity", "snippet": "snippet of ten"},
                           {"pageid": 20, "title": "No extract", "snippet": "only the <b>snippet</b>"}]
                return reply_json(self, {"query": {"search": results[: int(q["srlimit"])]}})
            pages = [{"pageid": 10, "title": "Hyperactivity", "extract": "Hyperactivity is\na state."},
                     {"pageid": 30, "title": "Sugar rush", "extract": "Sugar rush is a myth."}, {"pageid": 20, "title": "No extract"}]
            reply_json(self, {"query": {"pages": pages}})

        def log_message(self, *a):
            pass

    return H


def test_wikipedia_search_order_extracts_and_snippet_fallback(tmp_path):
    log: list = []
    with serving(fake_mediawiki(log)) as base:
        wiki = CachedSearch(WikipediaSearch(base + "/w/api.php", _client(), page_url="https://wiki.example/wiki/"), UnitCache(tmp_path / "c"))
        hits = wiki.search("sugar hyperactive", 3)
        assert hits == [Hit("Sugar rush", "Sugar rush is a myth.", "https://wiki.example/wiki/Sugar_rush", "30"),
                        Hit("Hyperactivity", "Hyperactivity is a state.", "https://wiki.example/wiki/Hyperactivity", "10"),
                        Hit("No extract", "only the snippet", "https://wiki.example/wiki/No_extract", "20")]
        assert log[0]["srsearch"] == "sugar hyperactive" and log[0]["srlimit"] == "3"
        assert log[1]["prop"] == "extracts" and log[1]["pageids"] == "30|10|20" and log[1]["explaintext"] == "1"
        assert wiki.search("sugar hyperactive", 3) == hits and len(log) == 2
    assert strip_html('A <span class="searchmatch">sugar</span> &amp;  b') == "A sugar & b"


# --- a bad day: error answers are errors (also with HTTP 200), never cached as "no results" ----------------------


def test_a_refused_web_key_is_search_key_rejected_and_nothing_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "wrong")

    class H(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            reply_json(self, {"message": "Unauthorized.", "statusCode": 403}, status=403)

        def log_message(self, *a):
            pass

    with serving(H) as base:
        web = CachedSearch(WebSearch(base + "/search", "MEDFC_TEST_SERPER", _client(), require_key=True), UnitCache(tmp_path / "c"))
        with pytest.raises(SearchKeyRejected, match=r"HTTP 403: Unauthorized\.\): check the key in the environment variable MEDFC_TEST_SERPER$"):
            web.search("q", 3)
    assert web.searches == 1 and not list((tmp_path / "c").rglob("*.json"))


def fake_eutils(log: list, state: dict):
    """E-utilities on a bad day: ``state["esearch"]`` / ``state["efetch"]`` name what they answer."""

    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            url = urllib.parse.urlparse(self.path)
            log.append(url.path)
            mode = state.get(url.path.strip("/"), "ok")
            if mode == "backend_failed":  # HTTP 200, as NCBI sends it
                return reply_json(self, {"header": {"type": "esearch", "version": "0.3"},
                                         "esearchresult": {"ERROR": "Search Backend failed: Database is not supported: pubmed"}})
            if mode == "key_invalid":
                return reply_json(self, {"error": "API key invalid", "api-key": "bad-ncbi-key", "type": "invalid", "status": "unknown"},
                                  status=400)
            if mode == "fetch_error":
                return reply(self, 200, {"Content-Type": "text/xml"},
                             b'<?xml version="1.0" ?>\n<eFetchResult>\n\t<ERROR>Unable to obtain query #1</ERROR>\n</eFetchResult>\n')
            if url.path == "/esearch":
                return reply_json(self, {"esearchresult": {"count": "2", "idlist": ["7", "22"]}})
            reply(self, 200, {"Content-Type": "text/xml"}, EFETCH.encode())

        def log_message(self, *a):
            pass

    return H


@pytest.mark.parametrize("failing,mode,said", [("esearch", "backend_failed", "E-utilities error: Search Backend failed"),
                                                ("efetch", "fetch_error", "E-utilities error: Unable to obtain query #1")])
def test_eutilities_errors_with_http_200_are_retried_and_never_cached(tmp_path, failing, mode, said):
    log: list = []
    state = {failing: mode}
    with serving(fake_eutils(log, state)) as base:
        fetcher = PubmedFetcher(tmp_path / "pm", api_key="", email="t@example.org", url=base + "/efetch", esearch_url=base + "/esearch",
                                requests_per_second=1000, max_retries=1, sleep=lambda s: None)
        pm = CachedSearch(PubMedSearch(fetcher), UnitCache(tmp_path / "c"))
        with pytest.raises(HttpError, match=said) as err:
            pm.search("coffee", 2)
        assert err.value.exhausted and log.count("/" + failing) == 2
        assert not list((tmp_path / "c").rglob("*.json")) and not list((tmp_path / "pm").glob("*.xml"))
        state.clear()  # NCBI recovers: the search is asked again and answered
        assert [h.id for h in pm.search("coffee", 2)] == ["7", "22"] and pm.searches == 2


def test_an_invalid_ncbi_key_is_search_key_rejected_naming_the_variable(tmp_path):
    log: list = []
    with serving(fake_eutils(log, {"esearch": "key_invalid"})) as base:
        fetcher = PubmedFetcher(tmp_path / "pm", api_key="bad-ncbi-key", email="t@example.org", url=base + "/efetch",
                                esearch_url=base + "/esearch", requests_per_second=1000, sleep=lambda s: None)
        with pytest.raises(SearchKeyRejected) as err:
            PubMedSearch(fetcher, api_key_env="MEDFC_TEST_NCBI").search("coffee", 2)
    assert str(err.value).startswith(f"PubMed E-utilities ({base}/esearch) refused the request (GET {base}/esearch?")
    assert "HTTP 400: API key invalid" in str(err.value) and str(err.value).endswith("environment variable MEDFC_TEST_NCBI")
    assert "bad-ncbi-key" not in str(err.value) and log == ["/esearch"]


def test_a_mediawiki_parameter_error_fails_at_once_and_a_damaged_cache_file_is_asked_again(tmp_path, caplog):
    log: list = []

    class Refusing(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            log.append(self.path)
            reply_json(self, {"error": {"code": "srsearch-text-disabled", "info": "Search text is disabled", "docref": "See api.php"}})

        def log_message(self, *a):
            pass

    with serving(Refusing) as base:
        with pytest.raises(HttpError, match=r"MediaWiki error srsearch-text-disabled: Search text is disabled$") as err:
            WikipediaSearch(base + "/w/api.php", _client()).search("q", 3)
    assert not err.value.exhausted and len(log) == 1  # not a passing error: not retried
    log.clear()
    with serving(fake_mediawiki(log)) as base:
        wiki = CachedSearch(WikipediaSearch(base + "/w/api.php", _client(), page_url="https://wiki.example/wiki/"), UnitCache(tmp_path / "c"))
        hits = wiki.search("sugar hyperactive", 3)
        [path] = list((tmp_path / "c").rglob("*.json"))
        path.write_bytes(path.read_bytes()[:40])  # cut short
        again = CachedSearch(WikipediaSearch(base + "/w/api.php", _client(), page_url="https://wiki.example/wiki/"), UnitCache(tmp_path / "c"))
        with caplog.at_level("WARNING"):
            assert again.search("sugar hyperactive", 3) == hits
    assert again.searches == 1 and again.cache.stats["damaged"] == 1 and len(log) == 4 and str(path) in caplog.text
    assert json.loads(path.read_text()) == [h.__dict__ for h in hits]
