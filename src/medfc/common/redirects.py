"""No credential across origins: a redirect to another scheme, host or port carries none of the request's
credential headers or credential query parameters (``requests`` itself strips only ``Authorization``)."""

from __future__ import annotations

import logging
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

from medfc.common.redact import is_secret_header, is_secret_name, redact

log = logging.getLogger(__name__)


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
    """Make ``session`` drop credential headers (e.g. Serper's ``X-API-KEY``; a hand-set ``Cookie`` too) and
    credential query parameters on a redirect to another origin. Returns the session."""
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
