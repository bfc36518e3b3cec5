"""A lock file shared by processes: :func:`file_lock`."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)
_UNLOCKABLE: set[str] = set()


@contextlib.contextmanager
def file_lock(path: str | os.PathLike) -> Iterator[bool]:
    """An exclusive ``flock`` on ``path`` (created, with its folder) while the block runs: processes, and
    threads that each enter it, take turns; the kernel drops the lock when its holder dies, so a kill -9
    leaves none behind. On a filesystem without ``flock`` (some cluster mounts) it yields False, locking
    nothing, and logs that once per path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)
        except OSError as exc:
            if os.fspath(path) not in _UNLOCKABLE:
                _UNLOCKABLE.add(os.fspath(path))
                log.warning("%s: no file lock on this filesystem (%s); going on without one", path, exc)
            yield False
            return
        yield True  # closing the file releases the lock
