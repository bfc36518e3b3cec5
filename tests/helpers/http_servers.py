"""Answering requests in the tests' local HTTP servers (127.0.0.1 only)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


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
