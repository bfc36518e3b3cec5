"""A local fake OpenAI-compatible server with scripted answers, for tests (no network).

``FakeOpenAI(responder)`` serves ``POST /v1/chat/completions`` on 127.0.0.1: ``responder(body)``
returns the assistant's text for a request body. Token usage is deterministic: prompt tokens = the
number of whitespace-separated words in all messages, completion tokens = the words of the answer.
``fail_next`` queues HTTP failures (status, headers) served before the next real answers, e.g.
``(429, {"Retry-After": "3"})``. ``requests`` records (path, body, Authorization header) of every
request, failures included.

``POST /v1/completions`` (the zero-shot scorer's option log-probabilities) answers one token with
``top_logprobs``: TRUE, FALSE and NONE with log-probabilities that follow from a hash of the prompt (so
answers differ between prompts and repeat for the same one), or ``completion_logprobs(body)``'s mapping.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.http_servers import reply_json


def words(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))


def hashed_logprobs(body: dict[str, Any]) -> dict[str, float]:
    """TRUE / FALSE / NONE log-probabilities from a hash of the prompt: -0.2 for one, -2 and -3 for the others."""
    first = hashlib.sha256(str(body.get("prompt", "")).encode()).digest()[0] % 3
    options = [" TRUE", " FALSE", " NONE"]
    return {options[(first + i) % 3]: lp for i, lp in enumerate((-0.2, -2.0, -3.0))}


class FakeOpenAI:
    def __init__(self, responder: Callable[[dict[str, Any]], str],
                 completion_logprobs: Callable[[dict[str, Any]], dict[str, float]] = hashed_logprobs) -> None:
        self.responder = responder
        self.completion_logprobs = completion_logprobs
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
                if not self.path.endswith("/chat/completions"):  # /completions: one token, its top log-probabilities
                    top = fake.completion_logprobs(body)
                    best = max(top, key=top.get)
                    reply_json(self, {"id": "x", "object": "text_completion", "model": body.get("model"),
                                      "choices": [{"index": 0, "text": best, "finish_reason": "length",
                                                   "logprobs": {"tokens": [best], "token_logprobs": [top[best]], "top_logprobs": [top]}}],
                                      "usage": {"prompt_tokens": len(str(body.get("prompt", "")).split()), "completion_tokens": 1}})
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

    def completion_requests(self) -> list[dict[str, Any]]:
        return [b for p, b, _ in self.requests if not p.endswith("/chat/completions")]

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
