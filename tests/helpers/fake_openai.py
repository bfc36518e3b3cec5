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

Bad days, as vLLM, OpenAI, OpenRouter or a proxy have them: a ``fail_next`` entry may carry a third element,
the JSON body to send (e.g. a 401 whose message echoes the key); ``bad_next`` queues named faults applied to
the next answers (HTTP 200), ``bad_always`` one applied to every answer while set (:data:`BAD_DAYS`):
``error_with_200`` (``{"error": {...}}``), ``error_401_with_200`` (the same naming a refused key),
``no_choices``, ``empty_choices``, ``no_message``, ``null_content`` (a reasoning model out of tokens:
``finish_reason: "length"``), ``list_content``, ``wrong_model``, ``dated_model`` (``<model>-2024-08-06``),
``no_logprobs`` and ``length`` (the answer cut at ``max_tokens``: ``finish_reason: "length"``).
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


def _error_with_200(doc: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"message": "Provider returned error", "code": 502}}


def _error_401_with_200(doc: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"message": "No auth credentials found", "code": 401}}


def _choice(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["choices"][0]


def _set(target: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        target(doc)[key] = value
        return doc
    return apply


def _drop(target: Callable[[dict[str, Any]], dict[str, Any]], key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        target(doc).pop(key, None)
        return doc
    return apply


def _content(value: Any, finish: str | None = None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        _choice(doc)["message"]["content"] = value
        if finish:
            _choice(doc)["finish_reason"] = finish
        return doc
    return apply


def _dated(doc: dict[str, Any]) -> dict[str, Any]:
    doc["model"] = f"{doc.get('model')}-2024-08-06"
    return doc


#: Named faults of an answer sent with HTTP 200: each maps the healthy answer to the bad one.
BAD_DAYS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "error_with_200": _error_with_200,
    "error_401_with_200": _error_401_with_200,
    "no_choices": _drop(lambda d: d, "choices"),
    "empty_choices": _set(lambda d: d, "choices", []),
    "no_message": _drop(_choice, "message"),
    "null_content": _content(None, "length"),
    "list_content": _content([{"type": "text", "text": "x"}]),
    "wrong_model": _set(lambda d: d, "model", "some-other-model"),
    "dated_model": _dated,
    "no_logprobs": _drop(_choice, "logprobs"),
    "length": _set(_choice, "finish_reason", "length"),
}


class FakeOpenAI:
    def __init__(self, responder: Callable[[dict[str, Any]], str],
                 completion_logprobs: Callable[[dict[str, Any]], dict[str, float]] = hashed_logprobs) -> None:
        self.responder = responder
        self.completion_logprobs = completion_logprobs
        self.requests: list[tuple[str, dict[str, Any], str | None]] = []
        self.fail_next: list[tuple[Any, ...]] = []
        self.bad_next: list[str] = []
        self.bad_always: str | None = None
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.requests.append((self.path, body, self.headers.get("Authorization")))
                    failure = fake.fail_next.pop(0) if fake.fail_next else None
                    bad = fake.bad_next.pop(0) if fake.bad_next else fake.bad_always
                if failure is not None:
                    reply_json(self, failure[2] if len(failure) > 2 else {"error": "scripted failure"}, failure[0], failure[1])
                    return
                if not self.path.endswith("/chat/completions"):  # /completions: one token, its top log-probabilities
                    top = fake.completion_logprobs(body)
                    best = max(top, key=top.get)
                    doc = {"id": "x", "object": "text_completion", "model": body.get("model"),
                           "choices": [{"index": 0, "text": best, "finish_reason": "length",
                                        "logprobs": {"tokens": [best], "token_logprobs": [top[best]], "top_logprobs": [top]}}],
                           "usage": {"prompt_tokens": len(str(body.get("prompt", "")).split()), "completion_tokens": 1}}
                else:
                    text = fake.responder(body)
                    doc = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": words(body), "completion_tokens": len(text.split())}}
                reply_json(self, BAD_DAYS[bad](doc) if bad else doc)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

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
