"""Shared fixtures for the CliniFact tests: a scripted local HTTP server and the offline MiniLM embedder."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.http_servers import reply

REPO = Path(__file__).resolve().parents[3]
DEMO_ZIP = REPO / "resources" / "demo" / "ctgov" / "studies.zip"
DEMO_PUBMED = REPO / "resources" / "demo" / "pubmed"


class ScriptedServer:
    """127.0.0.1 server whose ``handler(method, path, query, body) -> (status, headers, bytes)`` is set by the test.

    Every request is logged in ``requests`` as (method, path, query dict, body).
    """

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, list[str]], bytes]] = []
        self.handler: Callable[[str, str, dict[str, list[str]], bytes], tuple[int, dict[str, str], bytes]] = lambda *a: (404, {}, b"")
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                query = parse_qs(parts.query, keep_blank_values=True)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append((self.command, parts.path, query, body))
                outer.user_agents.append(self.headers.get("User-Agent"))
                reply(self, *outer.handler(self.command, parts.path, query, body))

            do_GET = _serve
            do_POST = _serve

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

        self.user_agents: list[str | None] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    yield srv
    srv.close()




@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def minilm():
    from medfc.common.embeddings import TransformersEmbedder

    return TransformersEmbedder()
