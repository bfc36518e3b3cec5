"""Python's cyclic garbage collector paused around work that builds many long-lived objects and no cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(collect: bool = False) -> Iterator[None]:
    """No cyclic garbage collection inside the block (``collect``: collect the garbage made so far first); the
    collector runs after it as it did before (left off when it was off)."""
    enabled = gc.isenabled()
    if collect:
        gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
