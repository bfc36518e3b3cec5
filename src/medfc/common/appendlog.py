"""Append-only JSONL stores that survive a kill -9 at any moment (the translation memory, the crawl's pages): a
kill loses at most the batch being written, and a line it cut short is skipped when read."""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from medfc.common.io import lock
from medfc.common.jsontypes import JSONObject

log = logging.getLogger(__name__)


def read_appended(path: str | os.PathLike, valid: Callable[[JSONObject], bool] | None = None,
                  what: str = "record") -> tuple[list[JSONObject], list[int]]:
    """The records of an append-only JSONL file, and the 1-based numbers of the lines skipped (not UTF-8, not
    JSON, not an object, or rejected by ``valid``), each logged. A missing file has no records."""
    path = Path(path)
    if not path.exists():
        return [], []
    records: list[JSONObject] = []
    skipped: list[int] = []
    for lineno, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            ok = isinstance(rec, dict) and (valid is None or valid(rec))
        except (UnicodeDecodeError, ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            skipped.append(lineno)
            log.warning("%s, line %d: not a whole %s (a write cut short by a kill?); skipped", path, lineno, what)
            continue
        records.append(rec)
    return records, skipped


class JsonlAppender:
    """Appends batches of records to one JSONL file (mode from the umask), each one ``write`` under an exclusive
    ``flock``; the file stays open until :meth:`close` (also a context manager)."""

    def __init__(self, path: str | os.PathLike, *, fsync: bool = False, sort_keys: bool = True):
        self.path = Path(path)
        self.fsync = fsync
        self.sort_keys = sort_keys
        self._fd: int | None = None

    def append(self, records: Iterable[Mapping[str, object]]) -> int:
        """Append ``records`` (one line each) as one batch; return how many."""
        lines = [json.dumps(rec, ensure_ascii=False, sort_keys=self.sort_keys) + "\n" for rec in records]
        if not lines:
            return 0
        payload = "".join(lines).encode("utf-8")
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        fd = self._fd
        locked = lock(fd, self.path)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload  # end the torn line: the new records are lines of their own
                log.warning("%s: its last line was cut short (a kill?); ended before appending", self.path)
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            if self.fsync:
                os.fsync(fd)
        finally:
            if locked:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return len(lines)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append_jsonl(path: str | os.PathLike, records: Iterable[Mapping[str, object]], *, fsync: bool = True) -> int:
    """Append one batch of records to ``path`` (:class:`JsonlAppender`) and close it; return how many."""
    with JsonlAppender(path, fsync=fsync) as out:
        return out.append(records)
