"""Helpers shared by the table builders: percentages, mean ± std over folds, grouping input files, and what the
LaTeX layouts share (title rows, notes)."""

from __future__ import annotations

import math
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from medfc.common.io import read_json, read_jsonl
from medfc.common.latex import Block, Column, LatexTable, MeanSD
from medfc.common.jsontypes import JSONObject
from medfc.experiments.clinifact.systems import row_suffixes
from medfc.scoring.classification import MeanStd

Entry = Mapping[str, object]  # a run behind a table: its lang / model / system / fold (options.entries)


def pct(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(100.0 * float(x), 1)


def pm(agg: Mapping[str, MeanStd], key: str) -> str:
    """``mean ± std`` in percent (std omitted for a single fold), or '' when absent."""
    m = mean_sd(agg, key)
    if m is None:
        return ""
    return f"{m.mean:.1f} ± {m.sd:.1f}" if m.sd is not None else f"{m.mean:.1f}"


def grouped(entries: Sequence[Entry], files: Sequence[str], keys: Sequence[str]) -> dict[tuple[object, ...], list[tuple[Entry, str]]]:
    if len(entries) != len(files):
        raise ValueError(f"options.entries has {len(entries)} entries for {len(files)} input files")
    groups: dict[tuple[object, ...], list[tuple[Entry, str]]] = defaultdict(list)
    for e, f in zip(entries, files):
        groups[tuple(e.get(k) for k in keys)].append((e, f))
    return groups


def pooled(files: Sequence[str]) -> dict[str, JSONObject]:
    return {str(r["id"]): r for f in files for r in read_jsonl(f)}


def clinifact_name(e: Entry) -> str:
    """A CliniFact run's name in tables and figures: the model alias, then its system's suffix."""
    return f"{e['model']}{row_suffixes().get(str(e.get('system')), '')}"


# ------------------------------------------------------------------------------------------ the LaTeX layouts

SCALE_TITLES = {"smoke": "Ours (smoke scale)", "cpu": "Ours (CPU recipe)", "paper": "Ours (paper scale)"}
SMOKE_NOTE = ("Our rows are smoke-sized (training capped by experiments.smoke, on a few test items): they show that the "
              "pipeline runs, nothing about the models.")


def ours_only(caption: str, label: str, columns: Sequence[Column], rows: list[list[object]], scale: str) -> LatexTable:
    """A LaTeX table of our rows alone, with the smoke note at smoke scale."""
    return LatexTable(caption, label, list(columns), [Block(rows, SCALE_TITLES[scale])],
                      notes=[SMOKE_NOTE] if scale == "smoke" else [], merge_first=True)


def mean_sd(agg: Mapping[str, MeanStd], key: str) -> MeanSD | None:
    """The mean over folds in percent with its std as the subscript (none for a single fold); None when absent."""
    m = agg.get(key)
    if not m or m.get("mean") is None:
        return None
    return MeanSD(100.0 * m["mean"], 100.0 * m["std"] if m.get("std") is not None else None)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", re.sub(r"\(.*?\)", "", name.lower()))


def not_run(paper_models: Sequence[str], our_models: Sequence[str]) -> list[str]:
    """The paper's models (row names) that none of our aliases names: an alias counts when it starts with the
    model's name, case, punctuation and a parenthesis left out (``deberta-v3-large`` is DeBERTa)."""
    ours = [_squash(m) for m in our_models]
    return [p for p in dict.fromkeys(paper_models) if not any(o.startswith(_squash(p)) for o in ours if _squash(p))]


def not_run_note(paper_models: Sequence[str], our_models: Sequence[str]) -> str:
    """A table note naming the paper's rows whose model this run did not train ('' when it trained them all)."""
    missing = not_run(paper_models, our_models)
    if not missing:
        return ""
    return (f"The reported rows of {', '.join(missing)} are the paper's own numbers for models this run did not train: "
            "a reference, not a reproduction of a row of ours.")


def stack_kept(infos: Sequence[str], files: Sequence[str],
               entries: Sequence[Entry]) -> tuple[dict[str, str], dict[str, str]]:
    """model → the member a stacked ensemble kept in every fold or split (by its ``info.json`` in ``infos``,
    beside the run's file), and model → a mark (a, b, …) for each of those stacks."""
    by_dir = {os.path.dirname(i): i for i in infos}
    members: dict[str, set[str | None]] = defaultdict(set)
    for e, f in zip(entries, files):
        info = by_dir.get(os.path.dirname(f))
        if info is not None:
            members[str(e["model"])].add(kept_member(read_json(info)))
    kept = {m: next(iter(v)) for m, v in members.items() if len(v) == 1 and None not in v}
    return kept, {m: "abcdefghij"[i % 10] for i, m in enumerate(sorted(kept))}


def kept_member(info: Mapping[str, object]) -> str | None:
    """The member a stacked ensemble's ``info.json`` says it kept unchanged ("<member> alone", no meta-model);
    None for a stack that combines or re-weights, or an average."""
    if info.get("method") != "stack" or info.get("meta_model") is not None:
        return None
    selected = list(info.get("selected") or [])  # type: ignore[call-overload]
    chosen = (info.get("inner_cv") or {}).get("chosen")  # type: ignore[union-attr]
    return str(selected[0]) if len(selected) == 1 and chosen == f"{selected[0]} alone" else None


def stack_note(model: str, member: str) -> str:
    return (f"{model}: the stack kept its best member, {member} (its inner cross-validation found no combination that beat "
            f"{member} alone by the required margin), so the row repeats {member}'s.")
