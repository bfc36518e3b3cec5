"""Ensembles of runs: the class probabilities of several models' predictions on the same items,
averaged with weights; the label is the most probable. No training: an ensemble is made from the
prediction files its members wrote (e.g. the TF-IDF baseline and a fine-tuned encoder).

A record keeps the first member's fields (gold label, and for HealthFC's pipeline its selected evidence)
with ``probs`` replaced by the average and ``pred_label`` by its argmax. An item some member has no
prediction for (missing, or without probabilities) is left out, counted in the report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medfc.common.io import read_jsonl
from medfc.common.options import Options
from medfc.common.report import SkipReport


@dataclass(frozen=True)
class EnsembleOptions(Options):
    """An ensemble of ``models.ensembles`` (step ``ensemble``): its member aliases (the order of the
    ``predictions`` inputs) and their weights."""

    members: tuple[str, ...]
    weights: tuple[float, ...]


def average_predictions(files: Sequence[str | os.PathLike], weights: Sequence[float], members: Sequence[str],
                        report: SkipReport) -> list[dict[str, Any]]:
    """The weighted average of the members' predictions (``files`` in member order)."""
    if len(files) != len(weights) or len(files) != len(members):
        raise ValueError(f"{len(files)} prediction files for {len(members)} members and {len(weights)} weights")
    total = float(sum(weights))
    runs = [{str(r["id"]): r for r in read_jsonl(f)} for f in files]
    out = []
    for rid, first in runs[0].items():
        recs = [run.get(rid) for run in runs]
        missing = [m for m, r in zip(members, recs) if r is None or not r.get("probs") or None in r["probs"].values()]
        if missing:
            report.skip(rid, "member_without_prediction", ", ".join(missing))
            continue
        labels = list(first["probs"])
        probs = {lab: sum(w * float(r["probs"][lab]) for w, r in zip(weights, recs)) / total for lab in labels}
        out.append({**first, "probs": {k: round(v, 6) for k, v in probs.items()}, "pred_label": max(labels, key=probs.get)})
    for member, run in zip(members[1:], runs[1:]):
        for rid in set(run) - set(runs[0]):
            report.skip(rid, "not_in_first_member", member)
    report.count("records", len(out))
    return out
