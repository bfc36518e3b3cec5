"""A polite HTTP client (:class:`HttpClient`), through which every network call of the workflow goes: rate-limited,
retried with backoff on passing failures (``Retry-After`` honoured up to ``max_retry_after``), answers cached on
disk, no secret in errors or logs and no credential sent across origins on a redirect."""

from __future__ import annotations

import datetime as _dt
import email.utils
import hashlib
import http.client
import json
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeAlias
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests
import urllib3

from medfc.common.io import MISSING, Missing, atomic_write, file_lock, read_cache_entry
from medfc.common.jsontypes import JSONValue
from medfc.common.progress import progress_bar
from medfc.common.redact import RedactingFilter, is_secret_header, is_secret_name, redact, remember_secret

log = logging.getLogger(__name__)

Params: TypeAlias = Mapping[str, object]
Body: TypeAlias = Mapping[str, object] | bytes | str | None
Answer: TypeAlias = JSONValue | bytes  # the parsed JSON (kind "json") or the raw bytes (kind "bytes")
JSONCheck: TypeAlias = Callable[[JSONValue], None]
BytesCheck: TypeAlias = Callable[[bytes], None]
Check: TypeAlias = JSONCheck | BytesCheck

DEFAULT_USER_AGENT = "medfc/0.1 (medical fact-checking research workflow)"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504, 529})  # 529: "site overloaded" (e.g. DeepL)

# urllib3 logs every request line, query string included, at DEBUG
logging.getLogger("urllib3.connectionpool").addFilter(RedactingFilter())

# what a connection that breaks mid-answer raises at each layer (requests, http.client, urllib3): retried
CUT_BODY_ERRORS = (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError,
                   http.client.IncompleteRead, urllib3.exceptions.ProtocolError)
UNRESOLVED = "unresolved"  # what a request's ``down`` is when its host name did not resolve
RETRY_ERRORS = (requests.Timeout, requests.ConnectionError) + CUT_BODY_ERRORS


class HttpError(RuntimeError):
    """A request that failed for good. ``status``: the HTTP status (or the one an error answer names);
    ``exhausted``: a passing failure given up on (retries or budget spent, or a Retry-After beyond
    ``max_retry_after``): the service may answer later; ``down``: the server could not be reached. Message and
    ``url`` are redacted."""

    def __init__(self, message: str, status: int | None = None, url: str = "", exhausted: bool = False,
                 down: bool = False):
        super().__init__(redact(message))
        self.status = status
        self.url = redact(url)
        self.exhausted = exhausted
        self.down = down


class AnswerError(Exception):
    """Raised by a ``check``: an error answer with a success status. ``retryable``: retried like a 503
    (after ``retry_after``, else Retry-After or the backoff), else fails at once; ``status``: the HTTP status the
    answer names. Never cached."""

    def __init__(self, message: str, retryable: bool = True, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class _Retry(Exception):
    """A success-status answer to retry (cut short, or a retryable AnswerError)."""

    def __init__(self, reason: str, delay: float | None = None, status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.delay = delay
        self.status = status


def cache_key(method: str, url: str, params: Params | None = None, data: Body = None) -> str:
    """Stable hash of one request: method, url, params sorted by name, and the body."""
    norm_params = sorted((str(k), str(v)) for k, v in (params or {}).items())
    body = (sorted((str(k), str(v)) for k, v in data.items()) if isinstance(data, Mapping)
            else data.decode("utf-8", "replace") if isinstance(data, bytes) else data)
    blob = json.dumps([method.upper(), url, norm_params, body], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def answer_says(doc: object, *fields: str) -> str:
    """What an error answer says of itself, redacted, on one line, at most 200 characters: the first of ``fields``
    the object ``doc`` fills (an object there: its ``info``, ``message`` or ``code``), or ``doc`` itself."""
    values = ([doc.get(f) for f in fields] if isinstance(doc, dict) else []) if fields else [doc]
    for value in values:
        if isinstance(value, dict):
            value = value.get("info") or value.get("message") or value.get("code")
        if value:
            return " ".join(redact(value).split())[:200]
    return ""


def _error_detail(resp: requests.Response) -> str:
    """An error answer's own message (Serper's ``message``, NCBI's ``error``, MediaWiki's ``error.info``)."""
    try:
        return answer_says(json.loads(resp.content or b""), "message", "error", "detail")
    except (ValueError, UnicodeDecodeError):
        return ""


def _origin_url(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, no credentials: what "server down at" names."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}"


def _caused_by(exc: BaseException, types: tuple[type[BaseException], ...], levels: int = 8) -> bool:
    """Whether ``exc`` or an exception it wraps (args, ``reason``, cause, context; 8 levels) is one of ``types``."""
    if isinstance(exc, types):
        return True
    wrapped = [*getattr(exc, "args", ()), getattr(exc, "reason", None), exc.__cause__, exc.__context__]
    return levels > 1 and any(_caused_by(e, types, levels - 1) for e in wrapped if isinstance(e, BaseException))


def _down(exc: BaseException) -> bool | str:
    """:data:`UNRESOLVED` for a host name that did not resolve; True for a server not reached at all (refused, no
    route), False for one that broke or timed out mid-answer."""
    text = str(exc)
    if _caused_by(exc, (socket.gaierror, urllib3.exceptions.NameResolutionError)) or any(t in text for t in (
            "Name or service not known", "Temporary failure in name resolution", "nodename nor servname",
            "Failed to resolve")):
        return UNRESOLVED
    if isinstance(exc, requests.Timeout) or not isinstance(exc, requests.ConnectionError):
        return False
    return _caused_by(exc, (urllib3.exceptions.NewConnectionError, ConnectionRefusedError)) or \
        any(t in text for t in ("Connection refused", "Failed to establish a new connection"))


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


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


def _same_origin(old: str, new: str) -> bool:
    """Same host and port, or http upgraded to https on the default ports (as requests allows)."""
    (s1, h1, p1), (s2, h2, p2) = _origin(old), _origin(new)
    return h1 == h2 and ((s1, p1) == (s2, p2) or (s1, p1, s2, p2) == ("http", 80, "https", 443))


def _without_secret_params(url: str) -> str:
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not is_secret_name(k)]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def guard_redirects(session: requests.Session) -> requests.Session:
    """Make ``session`` drop credential headers (e.g. Serper's ``X-API-KEY``; a hand-set ``Cookie`` too) and credential
    query parameters on a redirect to another origin (``requests`` itself strips only ``Authorization``)."""
    rebuild_auth = getattr(session, "rebuild_auth", None)
    if rebuild_auth is None or getattr(session, "_medfc_guarded", False):  # a stand-in that follows no redirects
        return session

    def guarded(prepared: requests.PreparedRequest, response: requests.Response) -> None:
        rebuild_auth(prepared, response)
        old = response.request.url or ""
        if not _same_origin(old, prepared.url or ""):
            for name in [h for h in prepared.headers if is_secret_header(h)]:
                del prepared.headers[name]
            prepared.url = _without_secret_params(prepared.url or "")
            log.warning("redirect from %s to another origin (%s): credential headers and key parameters not forwarded",
                        redact(old), redact(prepared.url))

    session.rebuild_auth = guarded  # type: ignore[method-assign]
    session._medfc_guarded = True  # type: ignore[attr-defined]
    return session


class RateLimiter:
    """Token bucket: ``rate`` tokens per second, at most ``burst`` stored; ``acquire()`` sleeps until one is free
    (clock and sleep injectable: tests never really sleep)."""

    def __init__(self, rate: float, burst: int = 1, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self.clock = clock
        self.sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now

    def acquire(self) -> None:
        """Take one token, sleeping until one is free."""
        self._refill()
        if self._tokens < 1.0:
            self.sleep((1.0 - self._tokens) / self.rate)
            self._refill()
            # a fake clock that did not advance still gets its token: we slept for it
            self._tokens = max(self._tokens, 1.0)
        self._tokens -= 1.0


class HttpClient:
    """requests.Session with a rate limiter, retries and an on-disk cache.

    ``stats`` counts ``requests``, ``cache_hits``, ``cache_damaged``, ``retries`` and ``errors``. ``retry_budget``:
    most seconds slept between retries in all (None: no limit); ``max_retry_after``: the longest Retry-After slept;
    ``down_budget``: most seconds slept retrying an unreachable server (reset by any answer)."""

    def __init__(self, cache_dir: str | os.PathLike | None = None, rate: float = 1.0, burst: int = 1,
                 user_agent: str = DEFAULT_USER_AGENT, timeout: float = 60.0, max_retries: int = 5, backoff: float = 2.0,
                 max_backoff: float = 120.0, retry_budget: float | None = 1800.0, max_retry_after: float = 120.0,
                 down_budget: float = 30.0, session: requests.Session | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.limiter = RateLimiter(rate, burst=burst, clock=clock, sleep=sleep)
        self.sleep = sleep
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.retry_budget = retry_budget
        self.retry_slept = 0.0
        self.max_retry_after = max_retry_after
        self.down_budget = down_budget
        self.down_slept = 0.0
        self.clock = clock
        # origin -> (clock time before which nothing is sent, the UTC time the server named, its status)
        self._wait_until: dict[str, tuple[float, str, int | None]] = {}
        self.session = guard_redirects(session or requests.Session())
        self.session.headers["User-Agent"] = user_agent or DEFAULT_USER_AGENT
        self.stats: Counter = Counter()

    def _error(self, message: str, **kwargs: object) -> HttpError:
        """A request's final failure, counted in ``stats["errors"]``."""
        self.stats["errors"] += 1
        return HttpError(message, **kwargs)  # type: ignore[arg-type]

    def _read_cached(self, path: Path, kind: str, check: Check | None) -> Answer | Missing:
        """The cached answer in ``path``, or MISSING (absent, or damaged: counted, logged)."""

        def parse(raw: bytes) -> Answer:
            value: Answer = json.loads(raw) if kind == "json" else raw
            if check is not None:
                try:
                    check(value)
                except AnswerError as exc:
                    raise ValueError(f"holds an error answer ({exc})") from None
            return value

        damaged: Counter[str] = Counter()
        value = read_cache_entry(path, parse, damaged, "HTTP cache")
        self.stats["cache_damaged"] += damaged["damaged"]
        return value

    def _decode(self, resp: requests.Response, kind: str, check: Check | None, what: str) -> tuple[bytes, Answer]:
        """(raw bytes, value) of a success answer; :class:`_Retry` for one cut short, one that should be JSON
        and is not (a proxy's HTML page), or a retryable :class:`AnswerError`; :class:`HttpError` when ``check`` refuses it."""
        raw = resp.content
        stated = (resp.headers.get("Content-Length") or "").strip()
        compressed = (resp.headers.get("Content-Encoding") or "identity").lower() != "identity"
        if stated.isdigit() and not compressed and len(raw) < int(stated):
            raise _Retry(f"body cut short ({len(raw)} of {int(stated)} bytes)")
        if kind == "json":
            try:
                value = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                ctype = (resp.headers.get("Content-Type") or "no Content-Type").split(";")[0].strip()
                excerpt = raw[:60].decode("utf-8", "replace")
                raise _Retry(f"the answer is not JSON ({ctype}, {len(raw)} bytes: {excerpt!r})") from None
        else:
            value = raw
        if check is not None:
            try:
                check(value)
            except AnswerError as exc:
                if not exc.retryable:
                    raise self._error(f"{what}: {exc}", status=exc.status or resp.status_code, url=resp.url) from None
                delay = exc.retry_after if exc.retry_after is not None else _retry_after(resp.headers.get("Retry-After"))
                raise _Retry(str(exc), delay=delay, status=exc.status) from None
        return raw, value

    def _send(self, method: str, url: str, params: Params | None, data: Body,
              headers: Mapping[str, str] | None = None, kind: str = "json",
              check: Check | None = None,
              sink: Callable[[requests.Response], None] | None = None) -> tuple[bytes, Answer]:
        """Send with retries; (raw body, decoded value) of the first success. With ``sink`` (a download), the first
        success is streamed to it instead (a body that breaks off is not retried; errors name ``url`` as given)
        and no origin's Retry-After is waited out first."""
        for name, value in [*(headers or {}).items(), *self.session.headers.items()]:  # redacted wherever they show
            if value and is_secret_header(str(name)):
                remember_secret(value)
        for name, value in (params or {}).items():
            if value and is_secret_name(str(name)):
                remember_secret(value)
        origin = _origin_url(url)
        waiting = self._wait_until.get(origin) if sink is None else None
        if waiting is not None:
            until, retry_at, wait_status = waiting
            left = until - self.clock()
            if left > 0:
                raise self._error(f"{method} {url}: not sent: {origin} asked to retry after {left:.0f} s, at "
                                  f"{retry_at}; rerun after that", status=wait_status, url=url, exhausted=True)
            del self._wait_until[origin]
        attempt = 0
        while True:
            self.limiter.acquire()
            self.stats["requests"] += 1
            delay: float | None = None
            status: int | None = None
            down = False
            said = ""  # what an error answer says of itself, after the status
            try:
                resp = self.session.request(method, url, params=params, data=data, headers=headers,
                                            timeout=self.timeout, stream=sink is not None)
                what = f"{method} {url if sink else resp.url or url}"
                self.down_slept = 0.0  # an answer, whatever it is: the server is up
                if resp.status_code < 400 and sink is not None:
                    break
                if resp.status_code < 400:
                    return self._decode(resp, kind, check, what)
            except RETRY_ERRORS as exc:
                reason = redact(f"{type(exc).__name__}: {exc}")
                what = f"{method} {url}"
                down = _down(exc)
                if isinstance(exc, CUT_BODY_ERRORS):
                    self.stats["cut_bodies"] += 1
            except _Retry as retry:
                reason, delay, status = retry.reason, retry.delay, retry.status  # a delay: the check's or Retry-After
                if reason.startswith("body cut short"):
                    self.stats["cut_bodies"] += 1
            else:
                status = resp.status_code
                reason = f"HTTP {status}"
                detail = _error_detail(resp)
                said = f": {detail}" if detail else ""
                if status not in RETRY_STATUS:
                    raise self._error(f"{what}: {reason}{said}", status=status, url=url)
                delay = _retry_after(resp.headers.get("Retry-After"))
            self._retry_or_raise(attempt, origin, what, reason, said, status, url, delay, down)
            attempt += 1
        with resp:
            sink(resp)
        return b"", b""

    def backoff_delay(self, attempt: int) -> float:
        """The wait before retry ``attempt + 1`` when the server names none (capped at ``max_backoff``)."""
        return min(self.max_backoff, self.backoff * (2**attempt))

    def _retry_or_raise(self, attempt: int, origin: str, what: str, reason: str, said: str, status: int | None, url: str,
                        delay: float | None, down: bool | str) -> None:
        """After failed attempt ``attempt`` (0-based) of a passing kind: sleep before the next, or raise
        :class:`HttpError` when retries or a budget are spent or ``delay`` (the server's) exceeds ``max_retry_after``."""
        if delay is not None and delay > self.max_retry_after:
            when = _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=delay + 0.5)
            retry_at = when.strftime("%Y-%m-%dT%H:%M:%SZ")  # to the second
            self._wait_until[origin] = (self.clock() + delay, retry_at, status)
            raise self._error(f"{what}: {reason}{said}; the server asks to retry after {delay:.0f} s, at {retry_at}, "
                              f"longer than this client waits ({self.max_retry_after:g} s): rerun after that",
                              status=status, url=url, exhausted=True)
        if down == UNRESOLVED:  # no server was asked: the name did not resolve, and retrying it changes nothing
            raise self._error(f"{what}: {urlsplit(origin).hostname} does not resolve (no network, or a wrong host?)",
                              url=url, exhausted=True, down=True)
        where = f"server down at {redact(origin)} ({reason})" if down else reason
        down = bool(down)
        if attempt >= self.max_retries:
            raise self._error(f"{what}: {where} after {attempt + 1} attempts{said}", status=status, url=url,
                              exhausted=True, down=down)
        if delay is None:
            delay = self.backoff_delay(attempt)
        if down and self.down_slept + delay > self.down_budget:
            raise self._error(f"{what}: {where} after {attempt + 1} attempts; not retried further: {self.down_slept:g} "
                              "s of retries spent on a server that cannot be reached (the client's limit is "
                              f"{self.down_budget:g} s)",
                              status=status, url=url, exhausted=True, down=True)
        if self.retry_budget is not None and self.retry_slept + delay > self.retry_budget:
            raise self._error(f"{what}: {where}; not retried: the client's retry budget of {self.retry_budget:g} s "
                              f"spent ({self.retry_slept:g} s slept in {self.stats['retries']} retries){said}",
                              status=status, url=url, exhausted=True, down=down)
        self.stats["retries"] += 1
        log.warning("%s", redact(f"{what}: {where}{said}; retry {attempt + 1}/{self.max_retries} in {delay:.1f} s"))
        self.sleep(delay)
        self.retry_slept += delay
        if down:
            self.down_slept += delay

    def fetch(self, method: str, url: str, params: Params | None = None, data: Body = None, kind: str = "json",
              use_cache: bool = True, headers: Mapping[str, str] | None = None, check: Check | None = None) -> Answer:
        """The parsed JSON (``kind="json"``) or raw bytes (``kind="bytes"``), cached on disk.

        ``headers`` are sent but not in the cache key. ``check(value)`` raises :class:`AnswerError` for an error answer;
        only a passing answer is cached, and a cached one that fails it is fetched again."""
        key = cache_key(method, url, params, data)
        cached_as = f"{key[:2]}/{key}.{'json' if kind == 'json' else 'bin'}"
        path = self.cache_dir / cached_as if use_cache and self.cache_dir else None
        if path is None:
            return self._send(method, url, params, data, headers, kind=kind, check=check)[1]
        assert self.cache_dir is not None
        existed = path.exists()
        cached = self._read_cached(path, kind, check)
        if cached is MISSING:
            # one asker per request at a time: another job sending the same request meanwhile waits for its
            # answer and reads it from the cache instead of paying for it again
            with file_lock(self.cache_dir / "locks" / key[:3]):
                if not existed and path.exists():
                    cached = self._read_cached(path, kind, check)
                if cached is MISSING:
                    raw, value = self._send(method, url, params, data, headers, kind=kind, check=check)
                    atomic_write(path, raw)
                    return value
        self.stats["cache_hits"] += 1
        return cached

    def get_json(self, url: str, params: Params | None = None, use_cache: bool = True, check: JSONCheck | None = None) -> JSONValue:
        return self.fetch("GET", url, params=params, kind="json", use_cache=use_cache, check=check)

    def post_json(self, url: str, body: object, headers: Mapping[str, str] | None = None, check: JSONCheck | None = None) -> JSONValue:
        """POST ``body`` as JSON, return the JSON answer; never cached (e.g. an API billed per call)."""
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        return self._send("POST", url, None, json.dumps(body).encode("utf-8"), all_headers, kind="json", check=check)[1]

    def download(self, url: str, dest: Path, seen: list[requests.Response], progress: bool = True) -> None:
        """Stream ``url``'s body into ``dest`` with a progress bar, its response appended to ``seen`` first. 429/5xx
        and connection failures are retried as in :meth:`fetch`; a body that breaks off is the caller's to judge
        (:func:`medfc.common.sources.download_once`)."""
        chunk_size = 1 << 20

        def sink(resp: requests.Response) -> None:
            seen.append(resp)
            total = int(resp.headers.get("Content-Length") or 0) or None
            with open(dest, "wb") as fh:
                chunks = progress_bar(resp.iter_content(chunk_size), total=total and -(-total // chunk_size),
                                      desc=dest.name, enabled=progress)
                for chunk in chunks:
                    fh.write(chunk)

        self._send("GET", url, None, None, sink=sink)
