"""A local fake OpenAI-compatible server with scripted answers, for tests (no network).

``FakeOpenAI(responder)`` serves ``POST /v1/chat/completions`` on 127.0.0.1: ``responder(body)``
returns the assistant's text for a request body. Token usage is deterministic: prompt tokens = the
number of whitespace-separated words in all messages, completion tokens = the words of the answer.
``fail_next`` queues HTTP failures (status, headers) served before the next real answers, e.g.
``(429, {"Retry-After": "3"})``. ``requests`` records (path, body, Authorization header) of every
request, failures included.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.http_servers import reply_json


def words(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))


class FakeOpenAI:
    def __init__(self, responder: Callable[[dict[str, Any]], str]) -> None:
        self.responder = responder
        self.requests: list[tuple[str, dict[str, Any], str | None]] = []
        self.fail_next: list[tuple[int, dict[str, str]]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.requests.append((self.path, body, self.headers.get("Authorization")))
                    failure = fake.fail_next.pop(0) if fake.fail_next else None
                if failure is not None:
                    reply_json(self, {"error": "scripted failure"}, failure[0], failure[1])
                    return
                text = fake.responder(body)
                reply_json(self, {"id": "x", "object": "chat.completion", "model": body.get("model"),
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": words(body), "completion_tokens": len(text.split())}})

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [b for p, b, _ in self.requests if p.endswith("/chat/completions")]

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
