"""The one lookup of every axis's registry (search sources, LLM and translation backends, CliniFact systems, studies
and answer sources, MedSNIP's verifier kinds): a value by its name, or one ValueError naming the registered ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

V = TypeVar("V")


def lookup(registry: Mapping[str, V], name: str, what: str) -> V:
    """``registry[name]``; an unknown name is ``ValueError("unknown <what> 'x' (a | b)")``."""
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r} ({' | '.join(registry)})") from None
