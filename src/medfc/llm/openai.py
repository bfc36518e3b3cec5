"""An OpenAI-compatible server (vLLM, llama.cpp, Ollama, a hosted API) behind :class:`~medfc.llm.base.LLMClient`,
through :class:`~medfc.common.http.HttpClient` (retries, rate limit, disk cache keyed by URL and sorted body). The API
key is a header, never in the cache key, and redacted everywhere; every answer passes :func:`check_answer` before it
is used or cached."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from medfc.common.http import AnswerError, HttpClient, HttpError, answer_says
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.redact import redact, remember_secret_env
from medfc.llm.base import Completion, GenerationParams, Ledger, LLMClient, LLMEndpointError, Message

# what a dated or tagged variant adds to a model's name: -2024-08-06, -20240620, -0613, -001, :latest
_VARIANT = re.compile(r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{6,8}|\d{3,4})|:latest)")
# statuses of an error object that a retry can mend
_PASSING = frozenset({408, 409, 425, 429})
# OpenAI's error codes (as an error object with HTTP 200 may carry them) → the status they stand for
_CODE_STATUS = {"invalid_api_key": 401, "model_not_found": 404, "insufficient_quota": 402, "context_length_exceeded": 400}


def same_model(asked: str, answered: str) -> bool:
    """Whether the answer's model ``answered`` is the ``asked`` one: equal case aside, or with a date/version suffix
    (``gpt-4o-2024-08-06``, ``gpt-4-0613``, ``gemini-1.5-pro-002``) or ``:latest``. When only one is path-like
    (``Qwen/Qwen2.5-7B-Instruct``, ``/models/qwen``) their last segments are compared; two paths must match whole."""
    a, b = asked.strip().lower(), answered.strip().lower()
    if not ("/" in a and "/" in b):
        a, b = a.rstrip("/").rsplit("/", 1)[-1], b.rstrip("/").rsplit("/", 1)[-1]
    return a == b or (bool(a) and b.startswith(a) and _VARIANT.fullmatch(b[len(a):]) is not None)


def _status_of(error: object) -> int | None:
    """The HTTP status an error object names: a numeric ``code``/``status``, or one of OpenAI's codes."""
    for field in ("code", "status", "status_code", "statusCode"):
        value = error.get(field) if isinstance(error, dict) else None
        if isinstance(value, str):
            value = _CODE_STATUS.get(value) or (int(value) if value.isdigit() else None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
            return value
    return None


def check_answer(model: str, *, chat: bool, logprobs: bool = False) -> Callable[[JSONValue], None]:
    """The check (:class:`~medfc.common.http.AnswerError`) of an answer for ``model``: a chat completion
    (``choices[0].message.content`` a string) or, with ``logprobs``, ``choices[0].logprobs.top_logprobs[0]`` an object."""

    def check(doc: JSONValue) -> None:
        if not isinstance(doc, dict):
            raise AnswerError(f"the answer is a JSON {type(doc).__name__}, not an object", retryable=True)
        error = doc if doc.get("object") == "error" else doc.get("error")
        if error:
            status = _status_of(error) or _status_of(doc)
            said = answer_says(error, "message", "detail", "type") if isinstance(error, dict) else answer_says(error)
            text = f"error object: {said or 'no message'}{f' (code {status})' if status else ''}"
            refused = status is not None and 400 <= status < 500 and status not in _PASSING
            raise AnswerError(text, retryable=not refused, status=status)
        choices = doc.get("choices")
        if not isinstance(choices, list) or not choices:
            raise AnswerError(f"no choices in the answer ({'empty' if isinstance(choices, list) else 'missing'})", retryable=True)
        first = choices[0]
        if not isinstance(first, dict):
            raise AnswerError(f"choices[0] is a JSON {type(first).__name__}, not an object", retryable=True)
        answered = doc.get("model")
        if isinstance(answered, str) and answered and not same_model(model, answered):
            raise AnswerError(f"answered by model {answered!r}, not by the model asked ({model!r})", retryable=False)
        if chat:
            message = first.get("message")
            if not isinstance(message, dict):
                raise AnswerError("no message in choices[0]", retryable=True)
            content = message.get("content")
            if content is None:
                raise AnswerError(f"content null (finish_reason {first.get('finish_reason')!r})", retryable=True)
            if not isinstance(content, str):
                raise AnswerError(f"content is a {type(content).__name__}, not text", retryable=False)
        if logprobs:
            lp = first.get("logprobs")
            top = lp.get("top_logprobs") if isinstance(lp, dict) else None
            if not isinstance(top, list) or not top or not isinstance(top[0], dict):
                raise AnswerError("an answer without logprobs (choices[0].logprobs.top_logprobs[0]) although they were "
                                  "asked for: does the server return logprobs for /completions?", retryable=False)

    return check


class OpenAICompatibleLM(LLMClient):
    backend = "openai"

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "", cache_dir: str | os.PathLike | None = None,
                 requests_per_second: float = 0.0, timeout_s: float = 120.0, max_retries: int = 3, top_logprobs: int = 20,
                 http: HttpClient | None = None, ledger: Ledger | None = None) -> None:
        super().__init__(model, ledger)
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.top_logprobs = top_logprobs
        remember_secret_env(api_key_env)  # its value redacted from every error and log line, echoed or not
        if http is None:
            rate = requests_per_second if requests_per_second > 0 else 1000.0
            http = HttpClient(cache_dir=cache_dir, rate=rate, user_agent="medfc", timeout=timeout_s,
                              max_retries=max_retries, backoff=1.0, max_backoff=30.0)
        self.http = http

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        return {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}

    def post(self, path: str, body: Mapping[str, object]) -> tuple[JSONObject, bool]:
        """(JSON answer, whether it came from the cache), checked by :func:`check_answer`. Raises
        :class:`LLMEndpointError` for a refused request, HttpError for one that failed after its retries."""
        check = check_answer(self.model, chat=path.endswith("/chat/completions"), logprobs="logprobs" in body)
        url = self.base_url + path
        hits = self.http.stats["cache_hits"]
        data = json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")
        try:
            answer = self.http.fetch("POST", url, data=data, kind="json", headers=self._headers(), check=check)
        except HttpError as exc:
            if not exc.exhausted:
                raise self.endpoint_error(exc, url) from None
            raise
        return answer, self.http.stats["cache_hits"] > hits

    def endpoint_error(self, exc: HttpError, url: str) -> LLMEndpointError:
        """``exc`` (a request no retry can mend) as the :class:`LLMEndpointError` that stops the step."""
        status, env = exc.status, self.api_key_env
        key = f"the environment variable {env}" if env else "no variable (api_key_env is empty: no key sent)"
        if status in (401, 402, 403):
            hint = (f"check the key in the environment variable {env}" if env else
                    "no key was sent (api_key_env is empty): does the server need one?") + " and the account's access to the model"
        elif status == 404:
            hint = f"check the base URL and the model name: does the server serve model {self.model!r}?"
        elif status in (400, 413, 422):
            hint = "a parameter the server refuses (max_tokens above the model's context? an option it does not support?)"
        else:
            hint = "an answer no retry can mend: check the server and the model it serves"
        detail = str(exc).removeprefix(f"POST {redact(url)}: ")
        did = "refused the call" if status is not None and status >= 400 else "gave an answer no retry can mend"
        return LLMEndpointError(f"the LLM endpoint {url} {did} (HTTP {status}) for model {self.model!r}, key in {key}: "
                                f"{detail}; {hint}", url=url, status=status, model=self.model, api_key_env=env)

    def _chat_one(self, conversation: Sequence[Message], params: GenerationParams) -> Completion:
        json_mode = {"response_format": {"type": "json_object"}} if params.json_mode else {}
        body = {"model": self.model, "messages": [dict(m) for m in conversation], "max_tokens": int(params.max_tokens),
                "temperature": float(params.temperature), **json_mode}
        try:
            answer, cached = self.post("/chat/completions", body)
        except HttpError as exc:
            return Completion("", 0, 0, error=redact(exc), usage_known=False)
        choice = answer["choices"][0]  # the check made sure of these
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        known = "prompt_tokens" in usage and "completion_tokens" in usage
        return Completion(text=choice["message"]["content"], prompt_tokens=int(usage.get("prompt_tokens") or 0),
                          completion_tokens=int(usage.get("completion_tokens") or 0), cached=cached,
                          finish_reason=choice.get("finish_reason"), usage_known=known)

    def _chat(self, conversations: list[list[Message]], params: GenerationParams) -> list[Completion]:
        return [self._chat_one(c, params) for c in conversations]

    # -- option scoring --------------------------------------------------------------------------
    def score_options(self, prompts: Sequence[str], options: Sequence[str], batch_size: int = 1) -> np.ndarray:
        out = np.full((len(prompts), len(options)), -np.inf)
        for pi, prompt in enumerate(prompts):
            body = {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0,
                    "logprobs": self.top_logprobs}
            data, cached = self.post("/completions", body)  # checked: choices[0].logprobs.top_logprobs[0] is an object
            usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            self.ledger.record("score_options", Completion("", int(usage.get("prompt_tokens") or 0),
                                                           int(usage.get("completion_tokens") or 0),
                                                           cached=cached, usage_known="prompt_tokens" in usage))
            top = data["choices"][0]["logprobs"]["top_logprobs"][0]
            for oi, option in enumerate(options):
                vals = [float(lp) for tok, lp in top.items()
                        if isinstance(tok, str) and tok.strip() == option and isinstance(lp, (int, float))]
                if vals:
                    m = max(vals)
                    out[pi, oi] = m + math.log(sum(math.exp(v - m) for v in vals))
        return out
