"""How long each row of the experiments' tables took: the wall and CPU seconds (columns ``s`` and ``cpu_time``) of
Snakemake's benchmark files of its jobs, summed over folds; an ensemble's row also counts its members' jobs."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Mapping, Sequence
import pandas as pd

from medfc.tables.common import Entry

TIME_COLUMNS = ["jobs", "wall s", "CPU s", "own wall s", "own CPU s", "members"]


def read_benchmark(path: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a job's benchmark file; NaN for a value Snakemake could not measure."""
    with open(path, encoding="utf-8", newline="") as fh:
        row = next(csv.DictReader(fh, delimiter="\t"), None) or {}

    def num(key: str) -> float:
        try:
            return float(row.get(key, "NA"))
        except ValueError:
            return math.nan

    return num("s"), num("cpu_time")


def _seconds(x: float) -> float | str:
    return "" if math.isnan(x) else round(x, 1)


def times(benchmarks: Sequence[str], entries: Sequence[Entry], ensembles: Mapping[str, Sequence[str]],
          keys: Sequence[str], name: Callable[[Entry], object] = lambda e: e["model"]) -> pd.DataFrame:
    """One row per ``keys`` of the entries: its jobs, their wall and CPU seconds with an ensemble's members' and
    alone (``own``)."""
    if len(entries) != len(benchmarks):
        raise ValueError(f"options.entries has {len(entries)} entries for {len(benchmarks)} benchmark files")
    own: dict[tuple[object, ...], tuple[int, float, float]] = {}
    first: dict[tuple[object, ...], Entry] = {}
    for e, f in zip(entries, benchmarks):
        k = tuple(e[key] for key in keys)
        wall, cpu = read_benchmark(f)
        jobs, walls, cpus = own.get(k, (0, 0.0, 0.0))
        own[k] = (jobs + 1, walls + wall, cpus + cpu)
        first.setdefault(k, e)
    model = list(keys).index("model")
    rows = []
    for k, (jobs, wall, cpu) in own.items():
        members = list(ensembles.get(k[model], []))
        parts = [own.get(k[:model] + (m,) + k[model + 1:], (0, math.nan, math.nan)) for m in members]
        row = {key: v for key, v in zip(keys, k)}
        row["model"] = name(first[k])
        row.update({"jobs": jobs, "wall s": _seconds(wall + sum(p[1] for p in parts)), "CPU s": _seconds(cpu + sum(p[2] for p in parts)),
                    "own wall s": _seconds(wall), "own CPU s": _seconds(cpu), "members": ", ".join(members)})
        rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, *TIME_COLUMNS]).astype(object)
