"""Ensembles of runs: the members' predictions on the same items combined, by weighted ``average`` or ``stack``
(:mod:`medfc.experiments.ensembles.stack_selection`). A record keeps the first member's fields; an item some member
has no prediction for is left out and counted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from medfc.common.io import read_jsonl
from medfc.common.options import Options
from medfc.common.report import SkipReport


@dataclass(frozen=True)
class StackingOptions(Options):
    """``experiments.stacking``: the inner folds', the meta-model's and the choice's keys."""

    inner_folds: int
    seed: int
    C_grid: tuple[float, ...]
    features: Literal["log_probs", "probs"]
    candidates: tuple[Literal["stack", "average", "recalibrated"], ...]
    outer_folds: int
    alpha: float
    resamples: int


@dataclass(frozen=True)
class EnsembleOptions(Options):
    """An ensemble of ``models.ensembles``: member aliases (in the inputs' order), method, weights, stacking."""

    members: tuple[str, ...]
    method: Literal["stack", "average"]
    weights: tuple[float, ...]
    stacking: StackingOptions


def runs_by_id(files: Sequence[str | os.PathLike]) -> list[dict[str, dict[str, Any]]]:
    """Each member's prediction file (in member order) as its records by id."""
    return [{str(r["id"]): r for r in read_jsonl(f)} for f in files]


def has_probs(record: Mapping[str, Any] | None) -> bool:
    """A member's record that an ensemble can combine: present, with a probability for every label."""
    return record is not None and bool(record.get("probs")) and None not in record["probs"].values()


def aligned(runs: Sequence[Mapping[str, dict[str, Any]]], members: Sequence[str], report: SkipReport
            ) -> Iterator[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(id, first member's record, every member's record) of each item every member predicted; others counted."""
    for rid, first in runs[0].items():
        recs = [run.get(rid) for run in runs]
        missing = [m for m, r in zip(members, recs) if not has_probs(r)]
        if missing:
            report.skip(rid, "member_without_prediction", ", ".join(missing))
            continue
        yield rid, first, cast(list[dict[str, Any]], recs)  # every record is present (has_probs)
    for member, run in zip(members[1:], runs[1:]):
        for rid in set(run) - set(runs[0]):
            report.skip(rid, "not_in_first_member", member)


def weighted_mean(probs: Sequence[Mapping[str, Any]], weights: Sequence[float], labels: Sequence[str]) -> tuple[dict[str, float], str]:
    """One item's weighted mean probabilities (6 places) and its label (most probable; of equals, the first)."""
    total = float(sum(weights))
    mean = {lab: sum(w * float(p[lab]) for w, p in zip(weights, probs)) / total for lab in labels}
    return {lab: round(v, 6) for lab, v in mean.items()}, max(labels, key=mean.__getitem__)


def average_predictions(files: Sequence[str | os.PathLike], weights: Sequence[float], members: Sequence[str],
                        report: SkipReport) -> list[dict[str, Any]]:
    """The weighted average of the members' predictions (``files`` in member order)."""
    if len(files) != len(weights) or len(files) != len(members):
        raise ValueError(f"{len(files)} prediction files for {len(members)} members and {len(weights)} weights")
    out = []
    for _, first, recs in aligned(runs_by_id(files), members, report):
        probs, label = weighted_mean([r["probs"] for r in recs], weights, list(first["probs"]))
        out.append({**first, "probs": probs, "pred_label": label})
    report.count("records", len(out))
    return out


def inner_assignment(ids: Sequence[str], labels: Sequence[str], k: int, seed: int) -> dict[str, int]:
    """id → inner fold (0..k-1), stratified and seeded; independent of the ids' order."""
    import numpy as np

    rng = np.random.default_rng(seed)
    by_label: dict[str, list[str]] = {}
    for i, lab in sorted(zip(ids, labels)):
        by_label.setdefault(str(lab), []).append(i)
    # each label's ids in a seeded order, the labels in turn, dealt round the folds
    dealt = [group[int(j)] for _, group in sorted(by_label.items()) for j in rng.permutation(len(group))]
    return {i: n % k for n, i in enumerate(dealt)}
