"""Every HTTP client of the project on a bad day: a Retry-After above the client's cap fails at once saying when
to rerun (and the client sends nothing more to that server until then) instead of sleeping; one within the cap
is honoured in full; a server that is down fails within a small total of retries, named as down; a key the
client sent never shows in an error or a log, even when the server echoes it."""

from __future__ import annotations

import json
import logging
import socket
import time
from http.server import BaseHTTPRequestHandler

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.http_servers import reply, reply_json, serving

from medfc.common.http import AnswerError, HttpClient, HttpError
from medfc.common.redact import redact, remember_secret, remember_secret_env
from medfc.retrieval.search import WebSearch


def scripted(script: list, log: list):
    """A handler answering each request with the next (status, headers, body) of ``script``; {"ok": true} after."""

    class H(BaseHTTPRequestHandler):
        def _serve(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            log.append((self.path, dict(self.headers)))
            step = script.pop(0) if script else (200, {}, b'{"ok": true}')
            reply(self, step[0], {"Content-Type": "application/json", **step[1]}, step[2])

        do_GET = do_POST = _serve

        def log_message(self, *a):
            pass

    return H


def test_a_retry_after_of_an_hour_fails_at_once_saying_when_to_rerun(tmp_path):
    clk = FakeClock()
    log: list = []
    started = time.monotonic()
    with serving(scripted([(429, {"Retry-After": "3600"}, b'{"error": "slow down"}')], log)) as url:
        http = HttpClient(cache_dir=tmp_path, rate=1000, max_backoff=30.0, clock=clk, sleep=clk.sleep)
        with pytest.raises(HttpError, match=r"HTTP 429: slow down; the server asks to retry after 3600 s, at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ") as exc:
            http.get_json(url + "/a")
        assert exc.value.exhausted and exc.value.status == 429 and "rerun after that" in str(exc.value)
        assert clk.sleeps == [] and len(log) == 1 and http.stats["retries"] == 0
        # the client remembers: nothing more is sent to that server before the time it named
        with pytest.raises(HttpError, match=r"not sent: .* retry after \d+ s, at \d{4}-") as exc2:
            http.get_json(url + "/b")
        assert exc2.value.exhausted and len(log) == 1
        clk.now += 3601  # after that time it asks again
        assert http.get_json(url + "/b") == {"ok": True} and len(log) == 2
    assert time.monotonic() - started < 5
    assert list(tmp_path.rglob("*.json")) and all(json.loads(p.read_text()) == {"ok": True} for p in tmp_path.rglob("*.json"))


def test_an_http_date_beyond_the_cap_names_that_date(tmp_path):
    clk = FakeClock()
    log: list = []
    with serving(scripted([(503, {"Retry-After": "Fri, 31 Dec 2099 23:59:59 GMT"}, b"")], log)) as url:
        http = HttpClient(cache_dir=tmp_path, rate=1000, clock=clk, sleep=clk.sleep)
        with pytest.raises(HttpError, match=r"HTTP 503; the server asks to retry after \d+ s, at 2099-12-31T23:59:59Z"):
            http.get_json(url + "/a")
    assert clk.sleeps == [] and len(log) == 1


def test_a_retry_after_within_the_cap_is_honoured_in_full(tmp_path):
    clk = FakeClock()
    log: list = []
    with serving(scripted([(429, {"Retry-After": "90"}, b"")], log)) as url:
        http = HttpClient(cache_dir=tmp_path, rate=1000, max_backoff=30.0, max_retry_after=120.0, clock=clk, sleep=clk.sleep)
        assert http.get_json(url + "/a") == {"ok": True}
    assert clk.sleeps == [90.0] and len(log) == 2  # not cut to max_backoff: a retry before the time asked is refused again


def test_a_check_asking_for_a_long_wait_fails_at_once(tmp_path):
    clk = FakeClock()
    log: list = []

    def check(doc):
        if "error" in doc:
            raise AnswerError("maxlag", retryable=True, retry_after=600.0)

    with serving(scripted([(200, {}, b'{"error": {"code": "maxlag"}}')], log)) as url:
        http = HttpClient(cache_dir=tmp_path, rate=1000, clock=clk, sleep=clk.sleep, max_retry_after=120.0)
        with pytest.raises(HttpError, match=r"maxlag; the server asks to retry after 600 s"):
            http.get_json(url + "/api", check=check)
    assert clk.sleeps == [] and list(tmp_path.rglob("*.json")) == []


def test_the_web_search_fails_at_once_on_a_429_asking_for_an_hour(monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER_KEY", "serper-key-987654")
    log: list = []
    started = time.monotonic()
    body = json.dumps({"message": "Too many requests", "statusCode": 429}).encode()
    with serving(scripted([(429, {"Retry-After": "3600"}, body)], log)) as url:
        web = WebSearch(url + "/search", "MEDFC_TEST_SERPER_KEY", HttpClient(rate=1.0, max_retries=3), require_key=True)
        with pytest.raises(HttpError, match="retry after 3600 s") as exc:
            web.search("sugar and hyperactivity", 3)
    assert len(log) == 1 and time.monotonic() - started < 5 and "serper-key-987654" not in str(exc.value)


def _closed_port() -> int:
    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_that_is_down_is_named_and_retried_for_a_small_total_only(tmp_path, caplog):
    clk = FakeClock()
    started = time.monotonic()
    url = f"http://127.0.0.1:{_closed_port()}"
    http = HttpClient(cache_dir=tmp_path, rate=1000, backoff=2.0, max_retries=8, max_backoff=120.0, clock=clk, sleep=clk.sleep)
    with caplog.at_level(logging.WARNING), pytest.raises(HttpError, match=rf"server down at {url}") as exc:
        http.get_json(url + "/a")
    assert exc.value.exhausted and exc.value.down and [s for s in clk.sleeps if s > 0.01] == [2.0, 4.0, 8.0, 16.0]  # 32 s more would pass 30
    for path in ("/b", "/c", "/d"):  # the budget is the client's: the next requests fail after one attempt each
        with pytest.raises(HttpError, match="server down at"):
            http.get_json(url + path)
    assert sum(s for s in clk.sleeps if s > 0.01) == 30.0 and time.monotonic() - started < 5 and http.stats["requests"] == 8


def test_the_value_of_a_key_the_client_sent_never_shows_even_when_the_server_echoes_it(tmp_path, caplog, monkeypatch):
    key = "sk-echoed-5f3a9c"
    log: list = []
    body = json.dumps({"error": {"message": f"invalid key {key} (did you mean another one?)"}}).encode()
    with serving(scripted([(503, {"Retry-After": "0"}, body), (401, {}, body)], log)) as url, caplog.at_level(logging.DEBUG):
        http = HttpClient(cache_dir=tmp_path, rate=1000, sleep=lambda s: None, max_retries=2)
        with pytest.raises(HttpError) as exc:
            http.fetch("POST", url + "/v1/chat", data=b"{}", headers={"Authorization": f"Bearer {key}"})
    assert exc.value.status == 401 and "invalid key *** (did you mean" in str(exc.value)
    assert key not in str(exc.value) and key not in caplog.text and "invalid key ***" in caplog.text
    # a variable's value is redacted once the variable is known as a key's, pattern or not
    monkeypatch.setenv("MEDFC_TEST_ECHO_KEY", "plainvalue-42-zz")
    assert redact("server said plainvalue-42-zz") == "server said plainvalue-42-zz"
    remember_secret_env("MEDFC_TEST_ECHO_KEY")
    assert redact("server said plainvalue-42-zz") == "server said ***"
    remember_secret("tiny")  # too short to be told from ordinary words: kept
    assert redact("a tiny key") == "a tiny key"
