from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.http_servers import reply

from medfc.common.http import HttpClient, HttpError, RateLimiter, cache_key




@pytest.fixture
def served():
    """A 127.0.0.1 server answering from a per-test script: a list of (status, headers, body)."""
    state = {"script": [], "log": []}

    class H(BaseHTTPRequestHandler):
        def _serve(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state["log"].append((self.command, self.path, body, self.headers.get("User-Agent")))
            reply(self, *(state["script"].pop(0) if state["script"] else (200, {}, b'{"ok": true}')))

        do_GET = do_POST = _serve

        def log_message(self, *a):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
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


def test_rate_limiter_burst_and_per_minute():
    clk = FakeClock()
    rl = RateLimiter(1.0, burst=3, clock=clk, sleep=clk.sleep)
    for _ in range(5):
        rl.acquire()
    assert clk.sleeps == [1.0, 1.0]
    clk2 = FakeClock()
    rl2 = RateLimiter.per_minute(50, clock=clk2, sleep=clk2.sleep)
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
    assert http.get_bytes(served["url"] + "/b") == b"raw-bytes"
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
    assert http.post_bytes(served["url"] + "/p", data={"id": "1"}) == b"one"
    assert http.post_bytes(served["url"] + "/p", data={"id": "2"}) == b"two"
    assert http.post_bytes(served["url"] + "/p", data={"id": "1"}) == b"one"
    assert [m for m, *_ in served["log"]] == ["POST", "POST"]
    assert served["log"][0][2] == b"id=1"


@pytest.mark.parametrize("umask,mode", [(0o002, 0o664), (0o022, 0o644)])
def test_cache_files_get_the_mode_of_the_umask(served, tmp_path, umask, mode):
    import os
    import stat

    old = os.umask(umask)
    try:
        http = HttpClient(cache_dir=tmp_path / "c", rate=100)
        http.get_json(served["url"] + "/a")
        http.get_bytes(served["url"] + "/b")
    finally:
        os.umask(old)
    files = sorted(p for p in (tmp_path / "c").rglob("*") if p.is_file())
    assert sorted(p.suffix for p in files) == [".bin", ".json"]
    assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in files] == [oct(mode)] * 2
