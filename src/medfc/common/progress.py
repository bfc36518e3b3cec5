"""Progress bars for long loops, without loading anything until one is shown."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress_bar(iterable: Iterable[T], total: int | None = None, desc: str = "", enabled: bool = True) -> Iterator[T]:
    """tqdm around long loops (to stderr, so it lands in the rule's log); plain iteration when off."""
    if not enabled:
        yield from iterable
        return
    from tqdm import tqdm

    yield from tqdm(iterable, total=total, desc=desc, mininterval=5.0, leave=False)
