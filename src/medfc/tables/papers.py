"""The papers' numbers (a data file, resources/papers/numbers.yaml) and which paper row a model of ours
is compared with."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import yaml


@cache
def _load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def paper_numbers(path: str | os.PathLike) -> dict[str, Any]:
    """The parsed numbers file (see its header for the layout)."""
    return _load(os.fspath(path))


def match_row(name: str, entries: Sequence[Mapping[str, Any]]) -> str | None:
    """The ``row`` of the first entry whose ``match`` words (any alternative, all its words) occur in
    the lower-cased model ``name`` and none of whose ``exclude`` words do; None when none matches."""
    n = (name or "").lower()
    for entry in entries:
        if any(w in n for w in entry.get("exclude", [])):
            continue
        if any(all(w in n for w in alternative) for alternative in entry["match"]):
            return str(entry["row"])
    return None


def healthfc_row(papers: Mapping[str, Any], model_name: str, lang: str) -> tuple[str | None, str]:
    """(the HealthFC paper's row of this model or None, the row shown: that one or the default)."""
    hfc = papers["healthfc"]
    row = match_row(model_name, hfc["models"])
    if row == "XLM-R":
        row = "XLM-R (German)" if lang == "de" else "XLM-R (English)"
    return row, row or hfc["default"][lang]


def clinifact_row(papers: Mapping[str, Any], model_name: str, zero_shot: bool) -> tuple[str | None, str]:
    """(the CliniFact paper's row of this model or None, the row shown: that one or the default)."""
    cf = papers["clinifact"]
    row = match_row(model_name, cf["zero_shot_models" if zero_shot else "models"])
    return row, row or cf["default"]["zero_shot" if zero_shot else "discriminative"]


def clinifact_fig3(papers: Mapping[str, Any]) -> dict[tuple[str, str, str], float]:
    """(panel, group, metric) → the value the CliniFact paper states for Fig. 3 (BioBERT)."""
    return {(str(p), str(g), str(m)): float(v) for p, g, m, v in papers["clinifact"]["fig3"]}
