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
    """An exclusive ``flock`` on ``path`` (created) while the block runs; the kernel drops it when the holder
    dies. Without ``flock`` support (some cluster mounts) it yields False, locking nothing, logged once per path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        yield lock(fh.fileno(), path)  # closing the file releases the lock


def lock(fd: int, path: str | os.PathLike) -> bool:
    """An exclusive ``flock`` on the open file ``fd`` of ``path``; False where the filesystem has none (logged once
    per path), locking nothing."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:
        if os.fspath(path) not in _UNLOCKABLE:
            _UNLOCKABLE.add(os.fspath(path))
            log.warning("%s: no file lock on this filesystem (%s); going on without one", path, exc)
        return False
    return True
