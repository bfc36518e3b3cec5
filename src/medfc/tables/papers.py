"""The papers' numbers (a data file, resources/papers/numbers.yaml)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
import yaml

from medfc.common.jsontypes import JSONObject, JSONValue


@cache
def _load(path: str) -> JSONObject:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def paper_numbers(path: str | os.PathLike) -> JSONObject:
    """The parsed numbers file (see its header for the layout)."""
    return _load(os.fspath(path))


def clinifact_fig3(papers: Mapping[str, JSONValue]) -> dict[tuple[str, str, str], float]:
    """(panel, group, metric) → the value the CliniFact paper states for Fig. 3 (BioBERT)."""
    return {(str(p), str(g), str(m)): float(v) for p, g, m, v in papers["clinifact"]["fig3"]}
