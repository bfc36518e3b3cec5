"""Redaction: no secret in any message, log, cache key or result file.

:func:`redact` replaces credential parameters, URL user information and credential headers by ``***``, and the
literal values given to :func:`remember_secret` / :func:`remember_secret_env` (a server may echo a key);
:class:`RedactingFilter` applies it to log records."""

from __future__ import annotations

import logging
import os
import re
import threading
from urllib.parse import quote

REDACTED = "***"
# a parameter or field whose value is a credential: exact names, and names ending in one after - or _
_SECRET_NAME = re.compile(
    r"(?i)^(?:key|apikey|api[-_]key|token|access[-_]?token|refresh[-_]?token|id[-_]?token|auth|auth[-_]?token|"
    r"password|passwd|pwd|pass|passphrase|secret|client[-_]?secret|signature|sig|credentials?|session[-_]?id|sessionid|"
    r".+[-_](?:key|apikey|token|secret|password|passwd|signature|credentials?))$")
# name=value in a query string, a form body or a message (value up to &, #, white space, quotes, <>)
_PAIR = re.compile(r"(?P<pre>^|[?&;\s(\[{,])(?P<name>[A-Za-z0-9_.\-]+)=(?P<val>[^&#\s\"'<>]+)")
# "name": "value" / 'name': 'value' (JSON, a dict's repr)
_QUOTED = re.compile(r"(?P<q>[\"'])(?P<name>[A-Za-z0-9_.\-]+)(?P=q)(?P<sep>\s*:\s*)(?P<q2>[\"'])(?P<val>[^\"']*)(?P=q2)")
# scheme://user:password@host → scheme://***@host
_USERINFO = re.compile(r"(?i)\b(?P<scheme>[a-z][a-z0-9+.\-]*://)(?P<userinfo>[^/?#\s@\"'<>]+)@")
# a credential header, as a header line, a JSON field or a dict's repr; Authorization's value may start
# with its scheme (Bearer, Basic, DeepL-Auth-Key, ...), kept
_SEP = r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)"
_AUTH_HEADER = re.compile(r"(?i)(?P<name>\b(?:proxy-)?authorization)" + _SEP +
                          r"(?P<scheme>(?:bearer|basic|digest|token|negotiate|aws4-hmac-sha256|[a-z0-9_]+(?:-[a-z0-9_]+)*-key)\s+)?"
                          r"(?P<val>[^\s\"',;}&#]+)")
_KEY_HEADER = re.compile(r"(?i)(?P<name>\bx-api-key|\bapi-key|\bx-auth-token|\bx-goog-api-key|\b(?:set-)?cookie)" + _SEP +
                         r"(?P<scheme>)(?P<val>[^\s\"',;}&#]+)")
_BEARER = re.compile(r"(?i)\b(?P<scheme>bearer|basic|deepl-auth-key)\s+(?P<val>[A-Za-z0-9._~+/=:\-]{8,})")


def is_secret_name(name: str) -> bool:
    """Whether a query parameter, form field or JSON key of this name holds a credential."""
    return bool(_SECRET_NAME.match(name))


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token", "x-goog-api-key"})


def is_secret_header(name: str) -> bool:
    """Whether a request header carries a credential (``Authorization``, ``Cookie``, ``X-API-KEY`` … and
    every name :func:`is_secret_name` accepts)."""
    return name.lower() in _SECRET_HEADERS or is_secret_name(name)


MIN_SECRET_LENGTH = 6
_SECRET_VALUES: set[str] = set()
_SECRET_ENVS: set[str] = set()
_LOCK = threading.Lock()


def remember_secret(value: object) -> None:
    """Redact ``value`` literally from now on (for this process); ``"Bearer sk-…"`` also without its scheme."""
    value = str(value or "").strip()
    parts = {value}
    if " " in value:
        parts.add(value.split(None, 1)[1].strip())
    parts |= {quote(p, safe="") for p in parts}  # as a query string carries it
    with _LOCK:
        _SECRET_VALUES.update(p for p in parts if len(p) >= MIN_SECRET_LENGTH)


def remember_secret_env(name: str | None) -> None:
    """Redact the value of environment variable ``name`` (read at each redaction)."""
    if name:
        with _LOCK:
            _SECRET_ENVS.add(name)


def _known_secrets() -> list[str]:
    with _LOCK:
        values = set(_SECRET_VALUES)
        envs = list(_SECRET_ENVS)
    for name in envs:
        value = (os.environ.get(name) or "").strip()
        if len(value) >= MIN_SECRET_LENGTH:
            values |= {value, quote(value, safe="")}
    return sorted(values, key=len, reverse=True)  # the longest first: a key that holds another is removed whole


def redact_values(text: object) -> str:
    """``text`` with only the known credentials' literal values replaced, no patterns: for a model's answer,
    whose words may look like ``key=value``."""
    text = str(text)
    for value in _known_secrets() if text else ():
        text = text.replace(value, REDACTED)
    return text


def redact(text: object) -> str:
    """``text`` with every credential replaced by ``***``: credential query parameters and fields (``api_key``,
    ``token``, ``password``, ``*_token``, ``*-key`` …), URL user information, credential header values
    (``Authorization: Bearer ***``) and the known literal values (:func:`redact_values`). The project's one redaction."""
    text = redact_values(text)
    if not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    for header in (_AUTH_HEADER, _KEY_HEADER):
        text = header.sub(lambda m: f"{m['name']}{m['sep']}{m['scheme'] or ''}{REDACTED}", text)
    text = _BEARER.sub(lambda m: f"{m['scheme']} {REDACTED}", text)
    text = _PAIR.sub(lambda m: f"{m['pre']}{m['name']}={REDACTED}" if is_secret_name(m["name"]) else m[0], text)
    return _QUOTED.sub(lambda m: (f"{m['q']}{m['name']}{m['q']}{m['sep']}{m['q2']}{REDACTED}{m['q2']}"
                                  if is_secret_name(m["name"]) and m["val"] else m[0]), text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message (its arguments merged in)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True
