from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.http_servers import reply, reply_cut, serving

from medfc.common.http import AnswerError, HttpClient, HttpError, RateLimiter, cache_key



@pytest.fixture
def served():
    """A 127.0.0.1 server answering from a per-test script: a list of (status, headers, body), or of
    ("cut", status, headers, body, bytes sent[, chunked]) for a body cut short (tests.helpers.http_servers.reply_cut)."""
    state = {"script": [], "log": []}

    class H(BaseHTTPRequestHandler):
        def _serve(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state["log"].append((self.command, self.path, body, self.headers.get("User-Agent")))
            step = state["script"].pop(0) if state["script"] else (200, {}, b'{"ok": true}')
            if step[0] == "cut":
                return reply_cut(self, *step[1:])
            reply(self, *step)

        do_GET = do_POST = _serve

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield state
    httpd.shutdown()
    httpd.server_close()


def test_rate_limiter_interval_with_fake_clock():
    clk = FakeClock()
    rl = RateLimiter(2.0, clock=clk, sleep=clk.sleep)  # 2/s, burst 1 → 0.5 s apart
    for _ in range(4):
        rl.acquire()
    assert clk.sleeps == [0.5, 0.5, 0.5]
    clk.now += 10  # idle time refills at most `burst` tokens
    rl.acquire()
    rl.acquire()
    assert clk.sleeps == [0.5, 0.5, 0.5, 0.5]


def test_rate_limiter_burst_and_a_rate_per_minute():
    clk = FakeClock()
    rl = RateLimiter(1.0, burst=3, clock=clk, sleep=clk.sleep)
    for _ in range(5):
        rl.acquire()
    assert clk.sleeps == [1.0, 1.0]
    clk2 = FakeClock()
    rl2 = RateLimiter(50 / 60.0, clock=clk2, sleep=clk2.sleep)  # 50 a minute
    rl2.acquire()
    rl2.acquire()
    assert clk2.sleeps == [1.2]


def test_cache_key_ignores_param_order_but_not_values():
    a = cache_key("GET", "http://x/a", {"b": 1, "a": "2"})
    assert a == cache_key("get", "http://x/a", {"a": "2", "b": "1"})
    assert a != cache_key("GET", "http://x/a", {"a": "2", "b": "3"})
    assert a != cache_key("POST", "http://x/a", {"a": "2", "b": "1"})
    assert cache_key("POST", "u", data={"id": "1,2"}) != cache_key("POST", "u", data={"id": "1,3"})


def test_retry_429_honours_retry_after_then_caches(served, tmp_path):
    clk = FakeClock()
    served["script"] = [(429, {"Retry-After": "7"}, b"slow down"), (200, {}, b'{"n": 1}')]
    http = HttpClient(cache_dir=tmp_path, rate=100, clock=clk, sleep=clk.sleep, user_agent="medfc-test/1 (mailto:t@example.org)")
    assert http.get_json(served["url"] + "/a", {"q": "x"}) == {"n": 1}
    assert 7.0 in clk.sleeps
    assert http.stats["retries"] == 1 and http.stats["requests"] == 2
    # second call: served from the disk cache, no request
    assert http.get_json(served["url"] + "/a", {"q": "x"}) == {"n": 1}
    assert len(served["log"]) == 2 and http.stats["cache_hits"] == 1
    assert served["log"][0][3] == "medfc-test/1 (mailto:t@example.org)"
    # a new client over the same cache directory does not refetch either
    http2 = HttpClient(cache_dir=tmp_path, rate=100, clock=clk, sleep=clk.sleep)
    assert http2.get_json(served["url"] + "/a", {"q": "x"}) == {"n": 1}
    assert http2.stats["requests"] == 0 and len(served["log"]) == 2


def test_retry_503_with_exponential_backoff(served, tmp_path):
    clk = FakeClock()
    served["script"] = [(503, {}, b""), (502, {}, b""), (200, {}, b"raw-bytes")]
    http = HttpClient(cache_dir=tmp_path, rate=100, backoff=1.5, clock=clk, sleep=clk.sleep)
    assert http.fetch("GET", served["url"] + "/b", kind="bytes") == b"raw-bytes"
    backoffs = [s for s in clk.sleeps if s >= 1.0]
    assert backoffs == [1.5, 3.0]
    assert http.stats["retries"] == 2


def test_gives_up_after_max_retries_and_does_not_retry_404(served, tmp_path):
    clk = FakeClock()
    served["script"] = [(500, {}, b"")] * 3
    http = HttpClient(cache_dir=tmp_path, rate=100, max_retries=2, clock=clk, sleep=clk.sleep)
    with pytest.raises(HttpError) as exc:
        http.get_json(served["url"] + "/c")
    assert exc.value.status == 500 and len(served["log"]) == 3
    served["script"] = [(404, {}, b"")]
    with pytest.raises(HttpError) as exc:
        http.get_json(served["url"] + "/d")
    assert exc.value.status == 404 and len(served["log"]) == 4
    assert not list(tmp_path.rglob("*.json"))  # failures are never cached


def test_timeout_is_retried(tmp_path):
    import requests

    clk = FakeClock()
    calls = []

    class FlakySession(requests.Session):
        def request(self, method, url, **kw):
            calls.append(url)
            if len(calls) == 1:
                raise requests.Timeout("read timed out")
            resp = requests.Response()
            resp.status_code = 200
            resp._content = json.dumps({"ok": 1}).encode()
            resp.url = url
            return resp

    http = HttpClient(cache_dir=None, rate=100, session=FlakySession(), clock=clk, sleep=clk.sleep)
    assert http.get_json("http://127.0.0.1:9/x") == {"ok": 1}
    assert len(calls) == 2 and http.stats["retries"] == 1


def test_post_body_is_part_of_the_cache_key(served, tmp_path):
    clk = FakeClock()
    served["script"] = [(200, {}, b"one"), (200, {}, b"two")]
    http = HttpClient(cache_dir=tmp_path, rate=100, clock=clk, sleep=clk.sleep)
    assert http.fetch("POST", served["url"] + "/p", data={"id": "1"}, kind="bytes") == b"one"
    assert http.fetch("POST", served["url"] + "/p", data={"id": "2"}, kind="bytes") == b"two"
    assert http.fetch("POST", served["url"] + "/p", data={"id": "1"}, kind="bytes") == b"one"
    assert [m for m, *_ in served["log"]] == ["POST", "POST"]
    assert served["log"][0][2] == b"id=1"


def test_two_clients_asking_the_same_thing_at_once_pay_for_it_once(tmp_path):
    """Two jobs (here two clients in two threads, each with its own lock file handle) miss the same
    request together: the second waits for the first's answer and reads it from the cache."""
    asked, release = [], threading.Event()

    class H(BaseHTTPRequestHandler):
        def do_POST(self):
            asked.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            release.wait(10)
            reply(self, 200, {}, b'{"answer": 42}')

        def log_message(self, *a):
            pass

    results = {}
    with serving(H) as url:
        def ask(name):
            http = HttpClient(cache_dir=tmp_path, rate=100)
            results[name] = (http.fetch("POST", url + "/v1/chat", data=b'{"q": 1}'), http.stats["cache_hits"])

        first = threading.Thread(target=ask, args=("first",))
        first.start()
        while not asked:
            time.sleep(0.01)
        second = threading.Thread(target=ask, args=("second",))
        second.start()
        time.sleep(0.3)  # the second is waiting at the lock, its request not sent
        assert len(asked) == 1
        release.set()
        first.join(10)
        second.join(10)
    assert asked == [b'{"q": 1}']
    assert results == {"first": ({"answer": 42}, 0), "second": ({"answer": 42}, 1)}


@pytest.mark.parametrize("umask,mode", [(0o002, 0o664), (0o022, 0o644)])
def test_cache_files_get_the_mode_of_the_umask(served, tmp_path, umask, mode):
    import os
    import stat

    old = os.umask(umask)
    try:
        http = HttpClient(cache_dir=tmp_path / "c", rate=100)
        http.get_json(served["url"] + "/a")
        http.fetch("GET", served["url"] + "/b", kind="bytes")
    finally:
        os.umask(old)
    files = sorted(p for p in (tmp_path / "c").rglob("*") if p.is_file())  # the answers and their lock files
    assert sorted(p.suffix for p in files if p.parent.name != "locks") == [".bin", ".json"]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(mode)}


# --- a bad day: huge Retry-After, endless 503s, cut bodies, damaged cache files, HTML answers, redirects ---------


def test_the_total_retry_budget_stops_a_client_that_would_sleep_longer(served, tmp_path):
    clk = FakeClock()
    served["script"] = [(503, {}, b"")] * 10
    http = HttpClient(cache_dir=tmp_path, rate=1000, backoff=4.0, max_retries=8, retry_budget=10.0, clock=clk, sleep=clk.sleep)
    with pytest.raises(HttpError, match=r"retry budget of 10 s spent") as exc:
        http.get_json(served["url"] + "/a")
    assert [s for s in clk.sleeps if s > 0.01] == [4.0] and len(served["log"]) == 2  # 4 s slept; 8 more would pass 10
    assert exc.value.status == 503 and exc.value.exhausted
    with pytest.raises(HttpError, match=r"retry budget"):  # one budget for the whole client: 4 s left, one 4 s retry
        http.get_json(served["url"] + "/b")
    with pytest.raises(HttpError, match=r"retry budget of 10 s spent \(8 s slept in 2 retries\)"):
        http.get_json(served["url"] + "/c")
    assert [s for s in clk.sleeps if s > 0.01] == [4.0, 4.0] and [p for _, p, *_ in served["log"]] == ["/a", "/a", "/b", "/b", "/c"]


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_cut_short_is_retried_and_only_the_whole_answer_cached(served, tmp_path, chunked):
    clk = FakeClock()
    whole = json.dumps({"idlist": [str(i) for i in range(2000)]}).encode()
    served["script"] = [("cut", 200, {"Content-Type": "application/json"}, whole, 5000, chunked),
                        ("cut", 200, {"Content-Type": "application/json"}, whole, 10, chunked), (200, {}, whole)]
    http = HttpClient(cache_dir=tmp_path, rate=1000, clock=clk, sleep=clk.sleep)
    assert http.get_json(served["url"] + "/esearch", {"term": "x"}) == json.loads(whole)
    assert len(served["log"]) == 3 and http.stats["retries"] == 2
    [cached] = list(tmp_path.rglob("*.json"))
    assert cached.read_bytes() == whole


def test_cut_body_exceptions_of_every_layer_are_retried(tmp_path):
    import http.client

    import requests
    import urllib3

    clk = FakeClock()
    raised = [requests.exceptions.ChunkedEncodingError("Connection broken: IncompleteRead(12 bytes read, 88 more expected)"),
              http.client.IncompleteRead(b"{\"a\"", 88), urllib3.exceptions.ProtocolError("Connection broken")]

    class CutSession(requests.Session):
        def request(self, method, url, **kw):
            resp = requests.Response()
            resp.status_code, resp.url = 200, url
            if raised:
                raise raised.pop(0)
            if not getattr(self, "short", False):  # a JSON body shorter than its Content-Length, read without an error
                self.short = True
                resp._content, resp.headers["Content-Length"] = b'{"a": [1, 2', "40"
                return resp
            resp._content = b'{"a": [1, 2, 3]}'
            return resp

    http = HttpClient(cache_dir=tmp_path, rate=1000, session=CutSession(), clock=clk, sleep=clk.sleep)
    assert http.get_json("http://127.0.0.1:9/x") == {"a": [1, 2, 3]}
    assert http.stats["retries"] == 4 and http.stats["requests"] == 5


def test_an_html_answer_is_an_error_naming_the_url_and_is_never_cached(served, tmp_path):
    clk = FakeClock()
    page = b"<!DOCTYPE html><html><body>Our servers are currently under maintenance</body></html>"
    served["script"] = [(200, {"Content-Type": "text/html"}, page)] * 2
    http = HttpClient(cache_dir=tmp_path, rate=1000, max_retries=1, clock=clk, sleep=clk.sleep)
    with pytest.raises(HttpError) as exc:
        http.get_json(served["url"] + "/w/api.php", {"api_key": "s3cr3t-key", "srsearch": "sugar"})
    msg = str(exc.value)
    assert msg.startswith(f"GET {served['url']}/w/api.php?api_key=***&srsearch=sugar: the answer is not JSON (text/html, {len(page)} bytes: '<!DOCTYPE html>")
    assert msg.endswith("after 2 attempts") and "s3cr3t-key" not in msg and not list(tmp_path.rglob("*.json"))
    assert http.get_json(served["url"] + "/w/api.php", {"api_key": "s3cr3t-key", "srsearch": "sugar"}) == {"ok": True}


def test_a_damaged_cache_file_is_a_counted_miss_refetched_and_named_in_the_log(served, tmp_path, caplog):
    clk = FakeClock()
    served["script"] = [(200, {}, b'{"n": 1}'), (200, {}, b'{"n": 2}'), (200, {}, b"ab")]
    http = HttpClient(cache_dir=tmp_path, rate=1000, clock=clk, sleep=clk.sleep)
    assert http.get_json(served["url"] + "/a") == {"n": 1}
    [path] = list(tmp_path.rglob("*.json"))
    path.write_bytes(b'{"n": ')  # half written
    with caplog.at_level("WARNING"):
        assert http.get_json(served["url"] + "/a") == {"n": 2}
    assert http.stats["cache_damaged"] == 1 and http.stats["cache_hits"] == 0 and len(served["log"]) == 2
    assert str(path) in caplog.text and path.read_bytes() == b'{"n": 2}'
    assert http.get_json(served["url"] + "/a") == {"n": 2} and http.stats["cache_hits"] == 1 and len(served["log"]) == 2


def test_an_answer_its_check_rejects_is_retried_or_refused_and_never_cached(served, tmp_path):
    clk = FakeClock()

    def check(doc):
        if "error" in doc:
            raise AnswerError(doc["error"]["info"], retryable=doc["error"]["code"] == "maxlag")

    lagged = json.dumps({"error": {"code": "maxlag", "info": "Waiting for db1: 6 seconds lagged"}}).encode()
    served["script"] = [(200, {"Retry-After": "5"}, lagged), (200, {}, b'{"query": {}}')]
    http = HttpClient(cache_dir=tmp_path, rate=1000, clock=clk, sleep=clk.sleep)
    assert http.get_json(served["url"] + "/api", {"q": "1"}, check=check) == {"query": {}}
    assert 5.0 in clk.sleeps and http.stats["retries"] == 1
    served["script"] = [(200, {}, json.dumps({"error": {"code": "badvalue", "info": "Unrecognized value"}}).encode())]
    with pytest.raises(HttpError, match=r"api\?q=2: Unrecognized value$") as exc:
        http.get_json(served["url"] + "/api", {"q": "2"}, check=check)
    assert not exc.value.exhausted and len(list(tmp_path.rglob("*.json"))) == 1  # only the real answer
    [path] = list(tmp_path.rglob("*.json"))
    path.write_bytes(lagged)  # a cached error (an older version stored it) is no answer: asked again
    served["script"] = [(200, {}, b'{"query": {"n": 1}}')]
    assert http.get_json(served["url"] + "/api", {"q": "1"}, check=check) == {"query": {"n": 1}}
    assert http.stats["cache_damaged"] == 1


def _header_log_server(log: list):
    from http.server import BaseHTTPRequestHandler

    class H(BaseHTTPRequestHandler):
        def _serve(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            log.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            reply(self, 200, {"Content-Type": "application/json"}, b'{"organic": []}')

        do_GET = do_POST = _serve

        def log_message(self, *a):
            pass

    return H


def _redirecting_server(target: str, log: list):
    from http.server import BaseHTTPRequestHandler

    class H(BaseHTTPRequestHandler):
        def _serve(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            log.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            if self.path.startswith("/same"):
                return reply(self, 200, {"Content-Type": "application/json"}, b'{"organic": []}')
            where = "/same" + self.path if self.path.startswith("/stay") else target + self.path  # the query string echoed
            reply(self, 307, {"Location": where}, b"")

        do_GET = do_POST = _serve

        def log_message(self, *a):
            pass

    return H


def test_a_redirect_to_another_origin_carries_no_credential_header_or_key_parameter(tmp_path):
    elsewhere: list = []
    origin: list = []
    secret = "s3cr3t-serper-key"
    with serving(_header_log_server(elsewhere)) as other, serving(_redirecting_server(other, origin)) as base:
        http = HttpClient(rate=1000, sleep=lambda s: None)
        http.session.cookies.set("session", "c00kie", domain="127.0.0.1")
        headers = {"X-API-KEY": secret, "api-key": secret, "Authorization": f"Bearer {secret}", "Cookie": "sid=c00kie",
                   "X-Custom": "kept"}
        http.fetch("POST", base + "/search", params={"api_key": secret, "token": secret, "q": "sugar"}, data=b'{"q": "sugar"}',
                   headers=headers, use_cache=False)
        assert origin[0][1]["x-api-key"] == secret  # the endpoint itself got the key
        [(path, got)] = elsewhere
        assert path == "/search?q=sugar" and got["x-custom"] == "kept"
        assert not {"x-api-key", "api-key", "authorization", "cookie"} & set(got) and secret not in repr(got)
        # a redirect within the origin keeps what the request carries
        http.fetch("GET", base + "/stay", params={"api_key": secret}, headers={"X-API-KEY": secret}, use_cache=False)
        assert origin[-1][0] == f"/same/stay?api_key={secret}" and origin[-1][1]["x-api-key"] == secret
