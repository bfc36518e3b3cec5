"""A polite HTTP client: rate limit, retries with backoff, and an on-disk response cache.

Every network call of the workflow goes through :class:`HttpClient`:

* a token-bucket :class:`RateLimiter` (``burst=1`` makes it a plain minimum interval) whose clock
  and sleep are injectable, so tests never really sleep;
* retries with exponential backoff on 429 (``Retry-After`` honoured), 5xx, timeouts and
  connection errors;
* a per-request cache on disk keyed by a hash of (method, url, sorted params, body), holding the
  JSON document or the raw bytes of each successful response, so a rerun never refetches;
* no secret in what it reports: every URL in an :class:`HttpError` and in a log line goes through
  :func:`redact` (credential query parameters, passwords in URLs, credential headers), and cache
  files are named by a hash and hold only the response.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import requests

from medfc.common.io import atomic_write

log = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "medfc/0.1 (medical fact-checking research workflow)"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504, 529})  # 529: "site overloaded" (e.g. DeepL)

T = TypeVar("T")

from medfc.common.redact import RedactingFilter, redact, redact_url

# urllib3 logs every request line, query string included, at DEBUG
logging.getLogger("urllib3.connectionpool").addFilter(RedactingFilter())


class HttpError(RuntimeError):
    """A request that failed for good (non-retryable status or retries exhausted).

    Its message and ``url`` are redacted (:func:`redact`): they can be logged and stored."""

    def __init__(self, message: str, status: int | None = None, url: str = ""):
        super().__init__(redact(message))
        self.status = status
        self.url = redact_url(url)


class RateLimiter:
    """Token bucket: ``rate`` tokens per second, at most ``burst`` stored.

    ``acquire()`` takes one token, sleeping (through the injected ``sleep``) until one is free.
    """

    def __init__(
        self,
        rate: float,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self.clock = clock
        self.sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        self.waited = 0.0

    @classmethod
    def per_minute(cls, n: float, **kwargs: Any) -> RateLimiter:
        return cls(n / 60.0, **kwargs)

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def acquire(self) -> float:
        """Take one token; return the seconds slept for it."""
        self._refill()
        waited = 0.0
        if self._tokens < 1.0:
            delay = (1.0 - self._tokens) / self.rate
            self.sleep(delay)
            waited = delay
            self.waited += delay
            self._refill()
            # a fake clock that did not advance still gets its token: we slept for it
            self._tokens = max(self._tokens, 1.0)
        self._tokens -= 1.0
        return waited


def cache_key(method: str, url: str, params: Mapping[str, Any] | None = None, data: Any = None) -> str:
    """Stable hash of one request: method, url, params sorted by name, and the body."""
    norm_params = sorted((str(k), str(v)) for k, v in (params or {}).items())
    if isinstance(data, Mapping):
        body: Any = sorted((str(k), str(v)) for k, v in data.items())
    elif isinstance(data, bytes):
        body = data.decode("utf-8", "replace")
    else:
        body = data
    blob = json.dumps([method.upper(), url, norm_params, body], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _atomic_write(path: Path, payload: bytes) -> None:
    """``payload`` to ``path`` atomically, with the mode the umask gives (:func:`medfc.common.io.atomic_write`)."""
    atomic_write(path, payload)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HttpClient:
    """requests.Session with a rate limiter, retries and an on-disk cache.

    ``stats`` counts ``requests`` (network attempts), ``cache_hits``, ``retries`` and ``errors``.
    """

    def __init__(
        self,
        cache_dir: str | os.PathLike | None = None,
        rate: float = 1.0,
        burst: int = 1,
        user_agent: str = DEFAULT_USER_AGENT,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 2.0,
        max_backoff: float = 120.0,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        limiter: RateLimiter | None = None,
    ):
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.limiter = limiter or RateLimiter(rate, burst=burst, clock=clock, sleep=sleep)
        self.sleep = sleep
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = user_agent or DEFAULT_USER_AGENT
        self.stats: Counter = Counter()

    # -- cache ---------------------------------------------------------------------------------
    def cache_path(self, key: str, kind: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / key[:2] / f"{key}.{'json' if kind == 'json' else 'bin'}"

    # -- network -------------------------------------------------------------------------------
    def _send(self, method: str, url: str, params: Mapping[str, Any] | None, data: Any,
              headers: Mapping[str, str] | None = None) -> requests.Response:
        attempt = 0
        while True:
            self.limiter.acquire()
            self.stats["requests"] += 1
            delay: float | None = None
            try:
                resp = self.session.request(method, url, params=params, data=data, headers=headers, timeout=self.timeout)
            except (requests.Timeout, requests.ConnectionError) as exc:
                reason = redact(f"{type(exc).__name__}: {exc}")
                status = None
            else:
                if resp.status_code < 400:
                    return resp
                status = resp.status_code
                reason = f"HTTP {status}"
                if status not in RETRY_STATUS:
                    self.stats["errors"] += 1
                    raise HttpError(f"{method} {resp.url}: {reason}", status=status, url=url)
                if status == 429:
                    delay = _retry_after(resp.headers.get("Retry-After"))
            if attempt >= self.max_retries:
                self.stats["errors"] += 1
                raise HttpError(f"{method} {url}: {reason} after {attempt + 1} attempts", status=status, url=url)
            if delay is None:
                delay = min(self.max_backoff, self.backoff * (2**attempt))
            attempt += 1
            self.stats["retries"] += 1
            log.warning("%s %s: %s; retry %d/%d in %.1f s", method, redact_url(url), reason, attempt, self.max_retries, delay)
            self.sleep(delay)

    def fetch(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None = None,
        data: Any = None,
        kind: str = "json",
        use_cache: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Return the parsed JSON (``kind="json"``) or raw bytes (``kind="bytes"``), cached on disk.

        ``headers`` (e.g. credentials) are sent but are not part of the cache key."""
        key = cache_key(method, url, params, data)
        path = self.cache_path(key, kind) if use_cache else None
        if path is not None and path.exists():
            self.stats["cache_hits"] += 1
            raw = path.read_bytes()
            return json.loads(raw) if kind == "json" else raw
        resp = self._send(method, url, params, data, headers)
        raw = resp.content
        value = json.loads(raw) if kind == "json" else raw
        if path is not None:
            _atomic_write(path, raw)
        return value

    def get_json(self, url: str, params: Mapping[str, Any] | None = None, use_cache: bool = True) -> Any:
        return self.fetch("GET", url, params=params, kind="json", use_cache=use_cache)

    def get_bytes(self, url: str, params: Mapping[str, Any] | None = None, use_cache: bool = True) -> bytes:
        return self.fetch("GET", url, params=params, kind="bytes", use_cache=use_cache)

    def post_bytes(self, url: str, data: Any, params: Mapping[str, Any] | None = None, use_cache: bool = True) -> bytes:
        return self.fetch("POST", url, params=params, data=data, kind="bytes", use_cache=use_cache)

    def post_json(self, url: str, body: Any, headers: Mapping[str, str] | None = None) -> Any:
        """POST ``body`` as JSON and return the JSON answer; never cached (e.g. an API that bills per call)."""
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        resp = self._send("POST", url, None, json.dumps(body).encode("utf-8"), all_headers)
        return resp.json()

    def download(self, url: str, dest: str | os.PathLike, chunk_size: int = 1 << 20, progress: bool = True) -> Path:
        """Stream a large file to ``dest`` once (kept when it exists), with a progress bar."""
        dest = Path(dest)
        if dest.exists():
            self.stats["cache_hits"] += 1
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.limiter.acquire()
        self.stats["requests"] += 1
        tmp = dest.with_name(dest.name + ".part")
        with self.session.get(url, stream=True, timeout=self.timeout) as resp:
            if resp.status_code >= 400:
                raise HttpError(f"GET {url}: HTTP {resp.status_code}", status=resp.status_code, url=url)
            total = int(resp.headers.get("Content-Length") or 0) or None
            with open(tmp, "wb") as fh:
                for chunk in progress_bar(resp.iter_content(chunk_size), total=total and -(-total // chunk_size), desc=dest.name, enabled=progress):
                    fh.write(chunk)
        os.replace(tmp, dest)
        return dest


# in medfc.common.progress, so that a job that shows progress without the network does not load requests
from medfc.common.progress import progress_bar  # noqa: E402  (re-exported: pubmed, evidence and the download above use it)
