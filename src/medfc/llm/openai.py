"""An OpenAI-compatible server (vLLM, llama.cpp server, Ollama, a hosted API) behind
:class:`~medfc.llm.base.LLMClient`, through the project's :class:`~medfc.common.http.HttpClient`.

* ``chat``: ``POST {base_url}/chat/completions`` with ``model``, ``messages``, ``max_tokens``,
  ``temperature`` and, in JSON mode, ``response_format={"type": "json_object"}``. Tokens come from the
  answer's ``usage`` (0, counted as ``usage_missing``, when a server leaves it out).
* ``score_options``: ``POST {base_url}/completions`` with ``max_tokens=1, temperature=0,
  logprobs=top_logprobs``; an option's log-probability is the log-sum-exp over the returned top
  tokens equal to it after stripping whitespace (-inf when absent).
* The request body (JSON, keys sorted) and URL are the cache key: one answer per model, messages
  and parameters, kept on disk under ``cache_dir``, so a rerun sends nothing. The API key is read
  from the environment variable named by ``api_key_env`` and sent as a header, which is never part
  of the cache key and never logged; an error text is redacted (:func:`~medfc.common.http.redact`: no
  key, no password of the base URL).
* Retries on 429 (honouring ``Retry-After``), 5xx, timeouts and connection errors, and the rate
  limit, are the HttpClient's. A request that still fails comes back as a :class:`Completion` with
  ``error`` set; it never raises.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from medfc.common.http import HttpClient, HttpError
from medfc.common.redact import redact
from medfc.llm.base import Completion, GenerationParams, Ledger, LLMClient, Message


class OpenAICompatibleLM(LLMClient):
    backend = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "",
        cache_dir: str | os.PathLike | None = None,
        requests_per_second: float = 0.0,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        top_logprobs: int = 20,
        http: HttpClient | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        super().__init__(model, ledger)
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.top_logprobs = top_logprobs
        if http is None:
            rate = requests_per_second if requests_per_second > 0 else 1000.0
            http = HttpClient(cache_dir=cache_dir, rate=rate, user_agent="medfc", timeout=timeout_s,
                              max_retries=max_retries, backoff=1.0, max_backoff=30.0)
        self.http = http

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def post(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """(JSON answer, whether it came from the cache); raises HttpError when the request fails."""
        hits = self.http.stats["cache_hits"]
        data = json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")
        answer = self.http.fetch("POST", self.base_url + path, data=data, kind="json", headers=self._headers())
        return answer, self.http.stats["cache_hits"] > hits

    @property
    def requests_sent(self) -> int:
        return int(self.http.stats["requests"])

    @property
    def cache_hits(self) -> int:
        return int(self.http.stats["cache_hits"])

    def chat_body(self, conversation: Sequence[Message], params: GenerationParams) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in conversation],
                                "max_tokens": int(params.max_tokens), "temperature": float(params.temperature)}
        if params.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def _chat_one(self, conversation: Sequence[Message], params: GenerationParams) -> Completion:
        try:
            answer, cached = self.post("/chat/completions", self.chat_body(conversation, params))
        except HttpError as exc:
            return Completion("", 0, 0, error=redact(exc), usage_known=False)
        try:
            choice = answer["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            return Completion("", 0, 0, cached=cached, error="answer without choices[0].message", usage_known=False)
        usage = answer.get("usage") or {}
        known = "prompt_tokens" in usage and "completion_tokens" in usage
        return Completion(text=text, prompt_tokens=int(usage.get("prompt_tokens") or 0),
                          completion_tokens=int(usage.get("completion_tokens") or 0), cached=cached,
                          finish_reason=choice.get("finish_reason"), usage_known=known)

    def _chat(self, conversations: list[list[Message]], params: GenerationParams) -> list[Completion]:
        return [self._chat_one(c, params) for c in conversations]

    # -- option scoring --------------------------------------------------------------------------
    def score_one(self, prompt: str, options: Sequence[str]) -> np.ndarray:
        body = {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": self.top_logprobs}
        data, cached = self.post("/completions", body)
        usage = data.get("usage") or {}
        self.ledger.record("score_options", Completion("", int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                                                       cached=cached, usage_known="prompt_tokens" in usage))
        top = data["choices"][0]["logprobs"]["top_logprobs"][0] or {}
        out = np.full(len(options), -np.inf)
        for oi, option in enumerate(options):
            vals = [lp for tok, lp in top.items() if tok.strip() == option]
            if vals:
                m = max(vals)
                out[oi] = m + math.log(sum(math.exp(v - m) for v in vals))
        return out

    def score_options(self, prompts: Sequence[str], options: Sequence[str], batch_size: int = 1) -> np.ndarray:
        return np.stack([self.score_one(p, options) for p in prompts]) if prompts else np.zeros((0, len(options)))
