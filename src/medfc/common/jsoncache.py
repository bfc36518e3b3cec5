"""A result cache: one JSON file per key, ``directory/<2 hex>/<key>.json`` (MedSNIP's units, search answers); keys
hash everything that decides a result, so a change recomputes only what it touches."""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from collections.abc import Callable
from typing import TypeVar, overload

from medfc.common.io import MISSING, atomic_write, read_cache_entry
from medfc.common.jsontypes import JSONValue

_T = TypeVar("_T")


def cache_key(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class UnitCache:
    def __init__(self, directory: str | os.PathLike | None) -> None:
        self.directory = Path(directory) if directory else None
        self.stats: Counter[str] = Counter()

    def _path(self, key: str) -> Path | None:
        return self.directory / key[:2] / f"{key}.json" if self.directory else None

    @overload
    def get(self, key: str) -> JSONValue: ...
    @overload
    def get(self, key: str, parse: Callable[[JSONValue], _T]) -> _T | None: ...

    def get(self, key: str, parse: Callable[[JSONValue], object] | None = None) -> object:
        """The value under ``key`` (through ``parse``, which raises ``ValueError``/``KeyError``/``TypeError`` for a
        wrong shape), or None: not stored, or damaged (counted in ``stats["damaged"]`` besides ``misses``)."""
        path = self._path(key)
        if path is not None:
            value = read_cache_entry(path, lambda raw: (parse or (lambda v: v))(json.loads(raw.decode("utf-8"))), self.stats, "result cache")
            if value is not MISSING:
                self.stats["hits"] += 1
                return value
        self.stats["misses"] += 1
        return None

    def put(self, key: str, value: object) -> None:
        path = self._path(key)
        if path is not None:
            atomic_write(path, json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8"))
