"""Redaction: no secret in any message, log, cache key or result file.

:func:`redact` replaces every credential a text shows (credential query parameters and fields, the user
information of URLs, credential headers) by ``***``; :class:`RedactingFilter` applies it to log records.
HTTP errors and their log lines (:mod:`medfc.common.http`), the rule's log (:mod:`medfc.common.logs`)
and every skip detail of a report (:mod:`medfc.common.report`) go through it.

Patterns miss a key that a server echoes in its own words ("invalid key sk-…"), so :func:`redact` also
removes the literal values of the credentials the project knows: every value :func:`remember_secret` was
given (the HTTP client gives it each credential header and credential query parameter it sends) and the
current value of every environment variable :func:`remember_secret_env` was given (an LLM client's
``api_key_env``). Values shorter than :data:`MIN_SECRET_LENGTH` characters are not remembered (they cannot
be told from ordinary words).
"""

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


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-auth-token",
                             "x-goog-api-key"})


def is_secret_header(name: str) -> bool:
    """Whether a request header of this name carries a credential: ``Authorization``, ``Proxy-Authorization``,
    ``Cookie``, ``X-API-KEY``, ``api-key`` and every name :func:`is_secret_name` calls a credential
    (``X-Auth-Token``, ``Ocp-Apim-Subscription-Key`` …)."""
    return name.lower() in _SECRET_HEADERS or is_secret_name(name)


MIN_SECRET_LENGTH = 6
_SECRET_VALUES: set[str] = set()
_SECRET_ENVS: set[str] = set()
_LOCK = threading.Lock()


def remember_secret(value: object) -> None:
    """Redact ``value`` literally wherever :func:`redact` meets it from now on (for this process). An
    ``Authorization``-style value ``"Bearer sk-…"`` is remembered whole and without its scheme."""
    value = str(value or "").strip()
    parts = {value}
    if " " in value:
        parts.add(value.split(None, 1)[1].strip())
    parts |= {quote(p, safe="") for p in parts}  # as a query string carries it
    with _LOCK:
        _SECRET_VALUES.update(p for p in parts if len(p) >= MIN_SECRET_LENGTH)


def remember_secret_env(name: str | None) -> None:
    """Redact the value of environment variable ``name`` (read when redacting: a changed value too)."""
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
    """``text`` with only the literal values of the known credentials replaced (:func:`remember_secret`,
    :func:`remember_secret_env`), nothing matched by pattern: for a model's own answer, whose words may look
    like ``key=value`` without being credentials."""
    text = str(text)
    for value in _known_secrets() if text else ():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact(text: object) -> str:
    """``text`` with every credential it shows replaced by ``***``: the values of credential query
    parameters and fields (``api_key``, ``key``, ``token``, ``access_token``, ``apikey``, ``password``,
    ``secret``, ``*_token``, ``*-key``…), the user information of URLs (``https://***@host/``) and the
    values of credential headers (``Authorization: Bearer ***``, ``X-API-KEY: ***``), and the literal values
    of the credentials the project knows (:func:`remember_secret`, :func:`remember_secret_env`). Everything
    else is kept as it is. The one redaction of the project: errors, logs and stored error texts use it."""
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


def redact_url(url: object) -> str:
    """A URL fit for a message or a log: credential query parameters and user information as ``***``."""
    return redact(url)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message (:func:`redact`), its arguments merged in; on a
    logger it covers what that logger emits, on a handler everything the handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True
