"""The one lookup of every registry (a value by name, or a ValueError naming the registered ones), the hint for a
misspelt name, and the one resolver of ``"package.module:name"`` entries, imported when used so the registries stay light."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

V = TypeVar("V")


def lookup(registry: Mapping[str, V], name: str, what: str) -> V:
    """``registry[name]``; an unknown name is ``ValueError("unknown <what> 'x' (a | b)")``."""
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r} ({' | '.join(registry)})") from None


def did_you_mean(name: str, choices: Any) -> str:
    """``"; did you mean <the closest of choices>?"``, or ``""`` when none is close: a config message's hint."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def load(spec: str) -> Any:
    """The object ``"package.module:name"`` names, its module imported now."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"{spec!r} must look like 'package.module:name'")
    return getattr(importlib.import_module(module), name)


def lazy(spec: str) -> Callable[..., Any]:
    """The function ``spec`` names (:func:`load`), its module imported at the first call, not now."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return load(spec)(*args, **kwargs)

    call.__qualname__ = call.__name__ = spec
    return call
