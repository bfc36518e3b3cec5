"""The options of the figure steps (:mod:`medfc.figures.steps`), in a light module the plan reads (no pandas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from medfc.common.options import Options


@dataclass(frozen=True)
class Fig3Options(Options):
    """The CliniFact runs compared (one entry per ``predictions`` file: ``model``, ``system`` and, for a run shown
    in place of another, ``stands_for``), ``clinifact.stats.excluded_branches`` and the plan's notes on the pair."""

    entries: tuple[dict[str, Any], ...]
    excluded_branches: tuple[str, ...]
    notes: tuple[str, ...]
