"""Helpers shared by the table builders: percentages, mean ± std over folds, grouping input files."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from medfc.common.io import read_jsonl
from medfc.common.jsontypes import JSONObject
from medfc.experiments.clinifact_systems import row_suffixes
from medfc.scoring.classification import MeanStd

Entry = Mapping[str, object]  # a run behind a table: its lang / model / system / fold (options.entries)


def pct(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(100.0 * float(x), 1)


def pm(agg: Mapping[str, MeanStd], key: str) -> str:
    """``mean ± std`` in percent (std omitted for a single fold), or '' when absent."""
    m = agg.get(key)
    if not m or m.get("mean") is None:
        return ""
    mean = 100.0 * m["mean"]
    return f"{mean:.1f} ± {100.0 * m['std']:.1f}" if m.get("std") is not None else f"{mean:.1f}"


def grouped(entries: Sequence[Entry], files: Sequence[str], keys: Sequence[str]) -> dict[tuple[object, ...], list[tuple[Entry, str]]]:
    if len(entries) != len(files):
        raise ValueError(f"options.entries has {len(entries)} entries for {len(files)} input files")
    groups: dict[tuple[object, ...], list[tuple[Entry, str]]] = defaultdict(list)
    for e, f in zip(entries, files):
        groups[tuple(e.get(k) for k in keys)].append((e, f))
    return groups


def pooled(files: Sequence[str]) -> dict[str, JSONObject]:
    out: dict[str, JSONObject] = {}
    for f in files:
        for r in read_jsonl(f):
            out[str(r["id"])] = r
    return out


def clinifact_name(e: Entry) -> str:
    """A CliniFact run's name in tables and figures: the model alias, then its system's suffix (the paper's
    row names; :mod:`medfc.experiments.clinifact_systems`)."""
    return f"{e['model']}{row_suffixes().get(str(e.get('system')), '')}"
