"""Answering requests in the tests' local HTTP servers (127.0.0.1 only)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threaded server on 127.0.0.1 (a free port) answering with ``handler``; yields its base URL and
    shuts it down on exit."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def reply(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], payload: bytes) -> None:
    """Send ``payload`` with ``status`` and ``headers`` (Content-Length added)."""
    handler.send_response(status)
    for k, v in {**headers, "Content-Length": str(len(payload))}.items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(payload)


def reply_json(handler: BaseHTTPRequestHandler, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
    """Answer with ``payload`` as JSON (bytes are sent as they are)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    reply(handler, status, {"Content-Type": "application/json", **(headers or {})}, data)


def reply_cut(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], payload: bytes, sent: int,
              chunked: bool = False) -> None:
    """A body cut short, as a connection that breaks mid-answer leaves it: the headers announce all of
    ``payload`` (its Content-Length, or chunked transfer with a first chunk of its full size), only the first
    ``sent`` bytes follow, then the connection closes."""
    handler.close_connection = True
    handler.send_response(status)
    for k, v in headers.items():
        handler.send_header(k, v)
    handler.send_header("Transfer-Encoding" if chunked else "Content-Length", "chunked" if chunked else str(len(payload)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write((f"{len(payload):x}\r\n".encode() if chunked else b"") + payload[:sent])
    handler.wfile.flush()
