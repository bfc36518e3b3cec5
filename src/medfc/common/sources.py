"""Where an input comes from: a local path, or a URL downloaded once into a cache.

A light module (``requests`` is imported only when something is downloaded), so that the planning code
and the release readers can tell a URL from a path without the HTTP stack.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse


def is_url(source: str | os.PathLike) -> bool:
    """Whether ``source`` is an http(s) URL (anything else is a local path)."""
    return urlparse(str(source)).scheme in ("http", "https")


def local_or_cached(source: str | os.PathLike, dest: str | os.PathLike, client: Any = None) -> tuple[Path, bool]:
    """A local ``source`` as it is (its existence is the caller's to check), or the URL ``source``
    downloaded once to ``dest`` (the caller's cache layout). Returns ``(path, from_cache)``: a
    non-empty ``dest`` is reused without any request. ``client``: a :class:`medfc.common.http.HttpClient`
    (default: one at 1 request/s with 3 retries)."""
    if not is_url(source):
        return Path(source), False
    dest = Path(dest)
    if dest.exists() and dest.stat().st_size > 0:
        return dest, True
    if client is None:
        from medfc.common.http import HttpClient

        client = HttpClient(rate=1.0, max_retries=3)
    return client.download(str(source), dest, progress=False), False
