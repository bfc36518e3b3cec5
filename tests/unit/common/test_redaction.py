"""No secret in any message, log or cache file: API keys in query strings, passwords in URLs and credential
headers are redacted wherever the HTTP client reports a URL."""

from __future__ import annotations

import logging
import socket
from http.server import BaseHTTPRequestHandler

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.http_servers import reply, reply_json, serving

from medfc.common.http import HttpClient, HttpError
from medfc.common.redact import redact
from medfc.common.logs import setup_logging

SECRET = "s3cr3t-NCBI-key-0123456789"


@pytest.fixture
def eutils():
    """A 127.0.0.1 stand-in for E-utilities: 400 for id=123 (as NCBI answers a bad request), JSON otherwise."""
    seen = []

    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append(self.path)
            if "id=123" in self.path or "term=bad" in self.path:
                reply(self, 400, {"Content-Type": "text/plain"}, b"Bad Request")
            else:
                reply_json(self, {"esearchresult": {"idlist": ["11"]}})

        def log_message(self, *a):
            pass

    with serving(H) as url:
        yield url, seen


def _files_text(root) -> str:
    return "\n".join(f"{p}\n{p.read_bytes().decode('utf-8', 'replace')}" for p in sorted(root.rglob("*")) if p.is_file())


def test_redact_hides_query_secrets_userinfo_and_credential_headers():
    url = f"https://user:pa55word@eutils.example.org/efetch.fcgi?db=pubmed&api_key={SECRET}&id=123&email=a%40b.org"
    assert redact(url) == "https://***@eutils.example.org/efetch.fcgi?db=pubmed&api_key=***&id=123&email=a%40b.org"
    for name in ("key", "token", "access_token", "apikey", "API_KEY", "password", "client_secret", "X-Api-Key", "sig"):
        assert redact(f"GET http://h/p?a=1&{name}={SECRET}#f") == f"GET http://h/p?a=1&{name}=***#f"
    text = (f"HTTPConnectionPool(host='h', port=1): Max retries exceeded with url: /esearch.fcgi?api_key={SECRET}&term=x "
            f"headers={{'Authorization': 'Bearer {SECRET}', 'X-API-KEY': '{SECRET}'}} Authorization: Basic {SECRET}")
    out = redact(text)
    assert SECRET not in out
    assert "url: /esearch.fcgi?api_key=***&term=x" in out and "'Authorization': 'Bearer ***'" in out and "'X-API-KEY': '***'" in out
    deepl = redact(f"POST https://api.deepl.com/v2/translate headers {{'Authorization': 'DeepL-Auth-Key {SECRET}:fx'}}")
    assert deepl.endswith("{'Authorization': 'DeepL-Auth-Key ***'}")
    assert redact(f"authorization: {SECRET}") == "authorization: ***" and redact(f"x-api-key={SECRET}") == "x-api-key=***"
    # what is not a credential stays as it was
    plain = "GET http://127.0.0.1:8/esearch.fcgi?db=pubmed&term=aspirin+key+facts&retmax=3: HTTP 400"
    assert redact(plain) == plain and redact("http://h/a?monkey=1&keyword=2") == "http://h/a?monkey=1&keyword=2"


def test_eutils_400_with_an_api_key_leaks_it_nowhere(eutils, tmp_path, caplog):
    from medfc.retrieval.pubmed import PubmedFetcher

    base, seen = eutils
    http = HttpClient(cache_dir=tmp_path / "http", rate=1000, max_retries=0)
    fetcher = PubmedFetcher(tmp_path / "pm", api_key=SECRET, email="t@example.org", url=base + "/efetch.fcgi",
                            esearch_url=base + "/esearch.fcgi", http=http)
    with caplog.at_level(logging.DEBUG), pytest.raises(HttpError) as info:
        fetcher.esearch("bad", 3)
    assert f"api_key={SECRET}" in seen[-1]  # the key was sent ...
    exc = info.value
    assert exc.status == 400 and "HTTP 400" in str(exc) and "api_key=***" in str(exc) and "term=bad" in str(exc)
    for text in (str(exc), repr(exc), exc.url, caplog.text, _files_text(tmp_path)):
        assert SECRET not in text  # ... and shows up in no message, log record or file
    with caplog.at_level(logging.DEBUG), pytest.raises(HttpError) as info2:
        http.fetch("GET", base + "/efetch.fcgi", {"db": "pubmed", "api_key": SECRET, "id": "123"}, kind="bytes")
    assert SECRET not in str(info2.value) and "id=123" in str(info2.value) and SECRET not in caplog.text


def test_cached_answers_of_requests_with_a_key_hold_no_key(eutils, tmp_path):
    base, _ = eutils
    http = HttpClient(cache_dir=tmp_path / "http", rate=1000)
    assert http.get_json(base + "/esearch.fcgi", {"api_key": SECRET, "term": "ok"}) == {"esearchresult": {"idlist": ["11"]}}
    assert http.get_json(base + "/esearch.fcgi", {"api_key": SECRET, "term": "ok"}) and http.stats["cache_hits"] == 1
    files = [p for p in (tmp_path / "http").rglob("*") if p.is_file() and p.parent.name != "locks"]  # the answer (and its empty lock file)
    assert len(files) == 1 and SECRET not in _files_text(tmp_path)


def test_connection_errors_and_their_retries_leak_no_key(tmp_path, caplog):
    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clk = FakeClock()
    http = HttpClient(cache_dir=tmp_path, rate=1000, max_retries=1, clock=clk, sleep=clk.sleep, timeout=5)
    with caplog.at_level(logging.DEBUG), pytest.raises(HttpError) as info:
        http.get_json(f"http://user:pa55word@127.0.0.1:{port}/esearch.fcgi", {"api_key": SECRET, "term": "x"})
    assert "ConnectionError" in str(info.value) and "after 2 attempts" in str(info.value)
    assert http.stats["retries"] == 1 and "retry 1/1" in caplog.text
    for text in (str(info.value), info.value.url, caplog.text):
        assert SECRET not in text and "pa55word" not in text


def test_the_rule_log_redacts_what_any_module_logs(tmp_path, root_logging):
    log = tmp_path / "rule.log"
    setup_logging(log)
    logging.getLogger("medfc.somewhere").warning("GET %s failed", f"https://h/x?api_key={SECRET}")
    try:
        raise RuntimeError(f"boom at https://u:{SECRET}@h/ with Authorization: Bearer {SECRET}")
    except RuntimeError:
        logging.getLogger("medfc.somewhere").exception("step failed")
    text = log.read_text(encoding="utf-8")
    assert "GET https://h/x?api_key=*** failed" in text and "RuntimeError: boom at https://***@h/" in text
    assert SECRET not in text


def test_a_skip_detail_never_holds_a_credential(tmp_path):
    from medfc.common.report import SkipReport

    report = SkipReport("demo")
    report.skip("p1", "fetch_failed", "GET https://user:hunter2@example.org/x?api_key=SECRET123&id=1: HTTP 400")
    report.write(tmp_path / "report.json")
    text = (tmp_path / "report.json").read_text(encoding="utf-8")
    assert "SECRET123" not in text and "hunter2" not in text
    assert report.skipped[0]["detail"] == "GET https://***@example.org/x?api_key=***&id=1: HTTP 400"
