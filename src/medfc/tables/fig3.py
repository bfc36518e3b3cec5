"""CliniFact Fig. 3 (Zhang et al., 2025): (a) per class P/R/F1, (b) per statistical test type, (c) per
disease class, for every model on the test split, with the values the paper states drawn beside ours."""

from __future__ import annotations

import ast
import math
import os
import re
import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from medfc.common.io import read_jsonl
from medfc.common.jsontypes import JSONValue
from medfc.scoring import classification
from medfc.common.labels import CLINIFACT_LABELS
from medfc.tables.common import clinifact_name, pct

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.typing import ColorType

Row = dict[str, str | int | float | None]  # one row of the Fig. 3 table


TEST_TYPE_NAMES = {
    "superiority": "Superiority", "superiority or other": "Superiority or Other", "superiority_or_other": "Superiority or Other",
    "non-inferiority": "Non-inferiority", "non_inferiority": "Non-inferiority", "noninferiority": "Non-inferiority",
    "equivalence": "Equivalence", "non-inferiority or equivalence": "Non-inferiority or Equivalence",
    "non_inferiority_or_equivalence": "Non-inferiority or Equivalence", "other": "Other",
}


def statistical_test_type(value: object) -> str:
    """The statistical test type of a pair from its ``nonInferiorityTypes`` cell (a Python list as text)."""
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value).strip()
    if not text:
        return "Unknown"
    try:
        items = ast.literal_eval(text)
        items = [items] if isinstance(items, str) else list(items)
    except (ValueError, SyntaxError):
        items = [text]
    names = sorted({TEST_TYPE_NAMES.get(str(x).strip().lower(), str(x).strip()) for x in items if str(x).strip()})
    return " / ".join(names) if names else "Unknown"


def paper_fig3(papers: Mapping[str, JSONValue]) -> dict[tuple[str, str, str], float]:
    """(panel, group, metric) → the value the CliniFact paper states for Fig. 3 (BioBERT)."""
    return {(str(p), str(g), str(m)): float(v) for p, g, m, v in papers["clinifact"]["fig3"]}


def _group_rows(model: str, panel: str, groups: Mapping[str, list[tuple[str, str]]],
                paper: Mapping[tuple[str, str, str], float]) -> list[Row]:
    """A panel's rows: each group's (gold, predicted) scores, largest group first, then the paper's values for groups
    our test split has no pair of (``n`` 0, no value of ours)."""
    rows: list[Row] = []
    for group, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        s = classification.classification_scores([x for x, _ in items], [y for _, y in items], CLINIFACT_LABELS)
        rows += [{"model": model, "panel": panel, "group": group, "n": len(items), "metric": metric,
                  "value": pct(s[metric]), "paper (BioBERT)": paper.get((panel, group, metric), "")}
                 for metric in ("accuracy", "macro_precision", "macro_recall", "macro_f1")]
    return rows + [{"model": model, "panel": panel, "group": g, "n": 0, "metric": m, "value": "", "paper (BioBERT)": v}
                   for (p, g, m), v in paper.items() if p == panel and g not in groups]


def fig3_table(predictions: Sequence[str], entries: Sequence[Mapping[str, object]], test_csv: str | os.PathLike,
               studies: str | os.PathLike | None, excluded_branches: Sequence[str],
               paper: Mapping[tuple[str, str, str], float]) -> tuple[pd.DataFrame, list[str]]:
    """Long table (model, panel, group, n, metric, value) for Fig. 3 (a) per class, (b) per test type,
    (c) per disease class; and notes (e.g. why panel (c) is empty)."""
    pairs = pd.read_csv(test_csv, dtype=str, keep_default_na=False)
    types = {str(r["index"]): statistical_test_type(r.get("nonInferiorityTypes")) for _, r in pairs.iterrows()}
    ncts = {str(r["index"]): str(r.get("nctId", "")) for _, r in pairs.iterrows()}
    notes: list[str] = []
    classes: dict[str, list[str]] | None = None
    if studies and Path(studies).exists():
        from medfc.clinifact.stats import study_classes

        classes = study_classes(read_jsonl(studies), excluded_branches)
        covered = sum(1 for n in ncts.values() if classes.get(n))
        if not covered:
            notes.append("panel (c) skipped: no test pair's trial is in the studies file")
            classes = None
        elif covered < len(ncts):
            notes.append(f"panel (c): {len(ncts) - covered} of {len(ncts)} test pairs have no disease class in the studies file")
    else:
        notes.append("panel (c) skipped: no studies file (results/clinifact/studies/studies.jsonl.gz) to read disease classes from")
    rows: list[Row] = []
    for e, f in zip(entries, predictions):
        model = clinifact_name(e)
        recs = [r for r in read_jsonl(f) if r.get("split", "test") == "test"]
        gold = [str(r["label"]) for r in recs]
        pred = [str(r["pred_label"]) if r.get("pred_label") is not None else "<none>" for r in recs]
        per = classification.per_class_scores(gold, pred, CLINIFACT_LABELS)
        rows += [{"model": model, "panel": "class", "group": lab, "n": gold.count(lab), "metric": metric,
                  "value": pct(per[lab][metric]), "paper (BioBERT)": paper.get(("class", lab, metric), "")}
                 for lab in CLINIFACT_LABELS for metric in ("precision", "recall", "f1")]
        by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
        by_class: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for r, g, p in zip(recs, gold, pred):
            by_type[types.get(str(r["id"]), "Unknown")].append((g, p))
            if classes is not None:
                for c in classes.get(ncts.get(str(r["id"]), ""), []):
                    by_class[c].append((g, p))
        rows += _group_rows(model, "test_type", by_type, paper)
        if classes is not None:
            rows += _group_rows(model, "disease", by_class, paper)
    return pd.DataFrame(rows, columns=["model", "panel", "group", "n", "metric", "value", "paper (BioBERT)"]), notes


def legend_names(entries: Sequence[Mapping[str, object]], papers: Mapping[str, JSONValue]) -> dict[str, str]:
    """Each shown run's legend name: its row name, "(stands in for <Table 8 row>)" added for a ``stands_for`` run."""
    rows = {str(k).casefold(): str(k) for k in papers["clinifact"]["table8"]}  # type: ignore[index,union-attr]
    names: dict[str, str] = {}
    for e in entries:
        name, other = clinifact_name(e), e.get("stands_for")
        names[name] = name
        if isinstance(other, Mapping):
            wanted = clinifact_name(other)
            paper_name = re.sub(r"^(.*) \((.*)\)$", r"\1, \2", rows.get(wanted.casefold(), wanted))  # "X (fine-tuned)" → "X, fine-tuned"
            names[name] = f"{name} (stands in for {paper_name})"
    return names


PAPER_SERIES = "paper (BioBERT)"
#: Fig. 3 is drawn at text width (:data:`medfc.common.plots.TEXT_WIDTH`).
FIGURE_WIDTH = "text"
BAR_IN = 0.11  # a horizontal bar at least this thick (inches) has room for a 7 pt value label beside it
PANEL_A_IN = 2.3  # the height of panel (a), its tick labels included
FRAME_IN = 0.8  # what a row of horizontal panels needs besides its bars: title, axis, tick labels
LEGEND_IN = 0.35
GROUP_GAP = 0.7  # between two groups of bars, in bars
LINE_IN = 0.125  # a line of a 7 pt tick label, in inches
SHORT = {"precision": "P", "recall": "R", "f1": "F1"}
EMPTY = "no test pairs"


def _number(value: object) -> float | None:
    """A cell as a number; None for an empty cell ("", NaN, None)."""
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _value(table: pd.DataFrame, model: str, panel: str, group: str, metric: str) -> float | None:
    """One bar's value: a model's, or for :data:`PAPER_SERIES` the paper's (the same on every model's rows)."""
    sub = table[(table["panel"] == panel) & (table["group"] == group) & (table["metric"] == metric)]
    if model != PAPER_SERIES:
        sub = sub[sub["model"] == model]
    column = PAPER_SERIES if model == PAPER_SERIES else "value"
    return next((v for v in map(_number, sub.get(column, ())) if v is not None), None)


def _n(table: pd.DataFrame, panel: str, group: str) -> int:
    sub = table[(table["panel"] == panel) & (table["group"] == group)]
    return int(sub["n"].iloc[0]) if len(sub) else 0


def _panel_a(ax: Axes, table: pd.DataFrame, models: Sequence[str], colours: Mapping[str, ColorType]) -> list:
    """(a) per class P/R/F1: grouped vertical bars, one series per model and the paper's (hatched). Returns the
    value labels."""
    from medfc.common.plots import MIN_FONT_PT

    a = table[table["panel"] == "class"]
    keys = [(lab, m) for lab in CLINIFACT_LABELS for m in ("precision", "recall", "f1")]
    n = {lab: _n(a, "class", lab) for lab in CLINIFACT_LABELS}
    paper = [_value(table, PAPER_SERIES, "class", lab, m) for lab, m in keys]
    series: list[tuple[str, list[float | None]]] = [
        (model, [_value(a, model, "class", lab, m) if n[lab] else None for lab, m in keys]) for model in models]
    if any(v is not None for v in paper):
        series.append((PAPER_SERIES, paper))
    width = 0.8 / max(1, len(series))
    labels = []
    for k, (name, vals) in enumerate(series):
        pos = [i + (k - (len(series) - 1) / 2) * width for i, v in enumerate(vals) if v is not None]
        hs = [float(v) for v in vals if v is not None]
        bars = ax.bar(pos, hs, width, **_style(name, colours))
        if pos:
            labels += ax.bar_label(bars, labels=["" if not v else f"{v:.0f}" for v in hs], fontsize=MIN_FONT_PT, padding=1)
    ax.set_xticks(np.arange(len(keys)), [SHORT[m] for _, m in keys])
    ax.tick_params(axis="x", length=0)
    classes = ax.secondary_xaxis("bottom")
    classes.set_xticks([3 * i + 1 for i in range(len(CLINIFACT_LABELS))],
                       [f"{lab} (n = {n[lab]})" for lab in CLINIFACT_LABELS])
    classes.tick_params(axis="x", length=0, pad=11)
    classes.spines["bottom"].set_visible(False)
    for i, lab in enumerate(CLINIFACT_LABELS):
        if not n[lab]:
            ax.text(3 * i + 1, 55, f"{EMPTY}\n(n = 0)", ha="center", va="center", fontsize=MIN_FONT_PT, color="#555555")
    for i in range(1, len(CLINIFACT_LABELS)):
        ax.axvline(3 * i - 0.5, color="#dddddd", linewidth=0.6)
    ax.set_xlim(-0.5, len(keys) - 0.5)
    ax.set_ylim(0, 112)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("%")
    ax.set_title("(a) per class: precision (P), recall (R), F1")
    return labels


def _style(name: str, colours: Mapping[str, ColorType]) -> dict[str, object]:
    if name == PAPER_SERIES:
        return {"facecolor": "white", "edgecolor": "#555555", "hatch": "////", "linewidth": 0.6, "label": name}
    return {"color": colours[name], "label": name}


def _group_label(group: str, n: int) -> str:
    """A group's tick label: its name and n, wrapped to 30 characters ("(n = k)" kept whole)."""
    return textwrap.fill(f"{group} (n\u00a0=\u00a0{n})", 30, break_long_words=False, break_on_hyphens=False)


def _hbar_slots(table: pd.DataFrame, panel: str, models: Sequence[str]) -> list[tuple[str, int, list[str]]]:
    """(group, n, the series drawn) per group of a horizontal panel: the models (or "no test pairs"), the paper's."""
    sub = table[(table["panel"] == panel) & (table["metric"] == "macro_f1")]
    out = []
    for g in dict.fromkeys(sub["group"]):
        n = _n(sub, panel, g)
        drawn = list(models) if n else [EMPTY]
        if _value(table, PAPER_SERIES, panel, g, "macro_f1") is not None:
            drawn.append(PAPER_SERIES)
        out.append((g, n, drawn))
    return out


def _span(group: str, n: int, drawn: Sequence[str], pitch: float) -> float:
    """A group's height in bars: its bars, or its tick label's lines where those are taller."""
    return max(float(len(drawn)), _group_label(group, n).count("\n") * LINE_IN / pitch + LINE_IN / pitch)


def _units(slots: Sequence[tuple[str, int, list[str]]], pitch: float) -> float:
    return sum(_span(g, n, d, pitch) for g, n, d in slots) + GROUP_GAP * max(0, len(slots) - 1)


def _panel_h(ax: Axes, table: pd.DataFrame, panel: str, title: str, models: Sequence[str], colours: Mapping[str, ColorType],
             units: float, pitch: float) -> list:
    """(b) or (c): macro-F1 per group, horizontal bars ``pitch`` inches thick, ``units`` bars tall. Returns the
    value labels."""
    from medfc.common.plots import MIN_FONT_PT

    y = 0.0
    ticks, names, labels = [], [], []
    for g, n, drawn in _hbar_slots(table, panel, models):
        span = _span(g, n, drawn, pitch)
        ys = [y + (span - len(drawn)) / 2 + k for k in range(len(drawn))]
        for yi, name in zip(ys, drawn):
            if name == EMPTY:
                ax.text(1, yi, f"{EMPTY} (n = 0)", va="center", ha="left", fontsize=MIN_FONT_PT, color="#555555")
                continue
            v = _value(table, name, panel, g, "macro_f1")
            bars = ax.barh([yi], [v or 0.0], 0.85, **_style(name, colours))
            labels += ax.bar_label(bars, labels=["" if not v else f"{v:.0f}"], fontsize=MIN_FONT_PT, padding=1.5)
        ticks.append(sum(ys) / len(ys))
        names.append(_group_label(g, n))
        y += span + GROUP_GAP
    ax.set_yticks(ticks, names)
    ax.tick_params(axis="y", length=0)
    ax.set_ylim(max(units, 1) - 0.5, -0.5)
    ax.set_xlim(0, 112)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("macro-F1 (%)")
    ax.set_title(title)
    return labels


def _dedupe_legend(fig, axes: Sequence[Axes], names: Mapping[str, str]) -> None:
    handles: dict[str, object] = {}  # each label's first handle
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), [names.get(lab, lab) for lab in handles], loc="outside upper center",
               ncols=max(1, len(handles)), frameon=False, handlelength=1.5, columnspacing=1.5)


def plot_fig3(table: pd.DataFrame, png: str | os.PathLike, notes: Sequence[str] = (),
              names: Mapping[str, str] | None = None) -> list[Path]:
    """CliniFact Fig. 3 at text width: (a) per-class P/R/F1, (b) macro-F1 per test type, (c) per disease class; one
    series per model, the paper's BioBERT values hatched; value labels where they fit."""
    from medfc.common.plots import MAX_HEIGHT, new_figure, save_figure

    names = dict(names or {})
    models = list(dict.fromkeys(table["model"])) or ["(no model)"]
    palette = ("#3b75af", "#e07b39", "#55a868", "#c44e52")
    colours = {m: palette[i % len(palette)] for i, m in enumerate(models)}
    fixed = PANEL_A_IN + LEGEND_IN + FRAME_IN
    slots = [_hbar_slots(table, panel, models) for panel in ("test_type", "disease")]
    pitch = BAR_IN
    for _ in range(4):  # the bars' thickness and the labels' share of the height depend on each other
        units = max(*(_units(sl, pitch) for sl in slots), 5.0)
        pitch = min(BAR_IN, (MAX_HEIGHT - fixed) / units)
    units = max(*(_units(sl, pitch) for sl in slots), 5.0)
    fig, axes = new_figure("text", fixed + units * pitch, nrows=2, ncols=2,
                           gridspec_kw={"height_ratios": [PANEL_A_IN, FRAME_IN + units * pitch], "width_ratios": [1, 1.25]})
    gs = axes[0, 0].get_gridspec()
    for ax in axes[0]:
        ax.remove()
    a = fig.add_subplot(gs[0, :])
    b, c = axes[1]
    labels = {a: _panel_a(a, table, models, colours)}
    legible = pitch >= BAR_IN - 1e-9
    for ax, panel, title in ((b, "test_type", "(b) per statistical test type"), (c, "disease", "(c) per disease class")):
        if not len(table[table["panel"] == panel]):
            ax.text(0.5, 0.5, textwrap.fill(" ".join(n for n in notes if panel != "disease" or "(c)" in n) or "no data", 50),
                    ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            ax.set_title(title)
            continue
        labels[ax] = _panel_h(ax, table, panel, title, models, colours, units, pitch)
        if not legible:  # bars too thin for a 7 pt label: the values are the data table's
            ax.set_xlabel("macro-F1 (%)\n(values: see the data table)")
            for t in labels.pop(ax):
                t.remove()
    fig.canvas.draw()
    for ax, texts in labels.items():  # value labels that collide are left to the data table
        boxes = [t.get_window_extent() for t in texts if t.get_text()]
        if any(p.overlaps(q) for i, p in enumerate(boxes) for q in boxes[i + 1:]):
            for t in texts:
                t.remove()
    _dedupe_legend(fig, [a, b, c], names)
    return save_figure(fig, png)
