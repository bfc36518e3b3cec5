"""The options of the example tables' steps (:mod:`medfc.tables.example_steps`), a light module (no pandas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from medfc.common.options import Options


@dataclass(frozen=True)
class ExampleClaimsOptions(Options):
    """HealthFC Table 1: the language of the claims and snippets, and the snippet's length in words."""

    lang: Literal["en", "de"]
    words: int


@dataclass(frozen=True)
class WrongClaimsOptions(Options):
    """HealthFC Table 4: its runs (one entry per fold), the wrong claims shown, the evidence's cut (words), scale."""

    entries: tuple[dict[str, Any], ...]
    shown: int
    words: int
    scale: Literal["smoke", "cpu", "paper"]


@dataclass(frozen=True)
class ExamplePairsOptions(Options):
    """CliniFact Tables 5 and 7: the split the example pairs come from and where an abstract is cut (words)."""

    split: Literal["train", "validation", "test"]
    words: int
