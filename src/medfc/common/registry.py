"""The one lookup of every registry (a value by name, or a ValueError naming the registered ones), and the one
resolver of ``"package.module:name"`` entries, imported when used so the registries stay light."""

from __future__ import annotations

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
