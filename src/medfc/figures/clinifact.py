"""CliniFact Fig. 3 (Zhang et al., 2025): (a) per class P/R/F1, (b) per statistical test type, (c) per
disease class, for every model on the test split, with the values the paper states drawn beside ours."""

from __future__ import annotations

import ast
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from medfc.common.io import read_jsonl
from medfc.scoring import classification
from medfc.common.labels import CLINIFACT_LABELS
from medfc.tables.common import clinifact_name, pct

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.container import BarContainer
    from matplotlib.typing import ColorType

Row = dict[str, str | int | float | None]  # one row of the Fig. 3 table


TEST_TYPE_NAMES = {
    "superiority": "Superiority",
    "superiority or other": "Superiority or Other",
    "superiority_or_other": "Superiority or Other",
    "non-inferiority": "Non-inferiority",
    "non_inferiority": "Non-inferiority",
    "noninferiority": "Non-inferiority",
    "equivalence": "Equivalence",
    "non-inferiority or equivalence": "Non-inferiority or Equivalence",
    "non_inferiority_or_equivalence": "Non-inferiority or Equivalence",
    "other": "Other",
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


def _group_rows(model: str, panel: str, groups: Mapping[str, list[tuple[str, str]]],
                paper: Mapping[tuple[str, str, str], float]) -> list[Row]:
    rows: list[Row] = []
    for group, items in groups.items():
        gold = [g for g, _ in items]
        pred = [p for _, p in items]
        s = classification.classification_scores(gold, pred, CLINIFACT_LABELS)
        for metric in ("accuracy", "macro_precision", "macro_recall", "macro_f1"):
            rows.append({"model": model, "panel": panel, "group": group, "n": len(items), "metric": metric, "value": pct(s[metric]),
                         "paper (BioBERT)": paper.get((panel, group, metric), "")})
    return rows


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
        n_cls = {lab: gold.count(lab) for lab in CLINIFACT_LABELS}
        for lab in CLINIFACT_LABELS:
            for metric in ("precision", "recall", "f1"):
                rows.append({"model": model, "panel": "class", "group": lab, "n": n_cls[lab], "metric": metric,
                             "value": pct(per[lab][metric]), "paper (BioBERT)": paper.get(("class", lab, metric), "")})
        by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
        by_class: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for r, g, p in zip(recs, gold, pred):
            by_type[types.get(str(r["id"]), "Unknown")].append((g, p))
            if classes is not None:
                for c in classes.get(ncts.get(str(r["id"]), ""), []):
                    by_class[c].append((g, p))
        rows += _group_rows(model, "test_type", dict(sorted(by_type.items(), key=lambda kv: -len(kv[1]))), paper)
        rows += _group_rows(model, "disease", dict(sorted(by_class.items(), key=lambda kv: -len(kv[1]))), paper)
    return pd.DataFrame(rows, columns=["model", "panel", "group", "n", "metric", "value", "paper (BioBERT)"]), notes


PAPER_SERIES = "paper (BioBERT)"


def _paper_value(table: pd.DataFrame, panel: str, group: str, metric: str) -> float | None:
    """The paper's value of one bar (the same on every model's rows), or None when the paper gives none."""
    sub = table[(table["panel"] == panel) & (table["group"] == group) & (table["metric"] == metric)]
    for v in sub.get("paper (BioBERT)", pd.Series(dtype=object)):
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if not math.isnan(f):
            return f
    return None


def _value_labels(ax: Axes, bars: BarContainer, values: Sequence[float]) -> None:
    """Value labels on bars; a zero (or missing) value gets none, so no stray "0" floats on the axis."""
    ax.bar_label(bars, labels=["" if not v or math.isnan(v) else f"{v:.0f}" for v in values], fontsize=6, padding=1.5)


def _series_bars(ax: Axes, series: Sequence[tuple[str, list[float | None]]], horizontal: bool,
                 colours: Mapping[str, ColorType]) -> float:
    """Grouped bars: one series per model plus the paper's values (hatched, only where the paper gives one).

    Returns the offset that centres the category ticks. A bar is at most 0.3 wide, so a panel with
    few categories or one model does not get slabs.
    """
    width = min(0.8 / max(1, len(series)), 0.3)
    for k, (name, vals) in enumerate(series):
        pos = [i + k * width for i, v in enumerate(vals) if v is not None]
        hs = [float(v) for v in vals if v is not None]
        if not pos:
            continue
        style = {"color": colours[name], "label": name}
        if name == PAPER_SERIES:
            style.update(color="white", edgecolor="#555555", hatch="////", linewidth=0.6)
        bars = (ax.barh if horizontal else ax.bar)(pos, hs, width, **style)
        _value_labels(ax, bars, hs)
    return width * (len(series) - 1) / 2


def plot_fig3(table: pd.DataFrame, png: str | os.PathLike, notes: Sequence[str] = ()) -> list[Path]:
    """CliniFact Fig. 3: (a) per-class P/R/F1, (b) macro-F1 per test type, (c) per disease class.

    Every model is a bar series; the paper's BioBERT values (stated in its text) are drawn beside
    them as a hatched series wherever the paper gives one. Bars carry their value; zero values
    carry no label.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from medfc.common.plots import save_figure

    models = list(dict.fromkeys(table["model"])) or ["(no model)"]
    palette = plt.get_cmap("tab10").colors
    colours = {m: palette[i % len(palette)] for i, m in enumerate(models)} | {PAPER_SERIES: "white"}
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.5), gridspec_kw={"width_ratios": [1.3, 1, 1.6]})
    # (a) per-class P/R/F1
    ax = axes[0]
    a = table[table["panel"] == "class"]
    keys = [(lab, m) for lab in CLINIFACT_LABELS for m in ("precision", "recall", "f1")]
    series: list[tuple[str, list[float | None]]] = [
        (model, [float(a[(a.model == model) & (a.group == lab) & (a.metric == m)]["value"].sum()) for lab, m in keys])
        for model in models]
    paper = [_paper_value(table, "class", lab, m) for lab, m in keys]
    if any(v is not None for v in paper):
        series.append((PAPER_SERIES, paper))
    offset = _series_bars(ax, series, False, colours)
    short = {"precision": "P", "recall": "R", "f1": "F1"}
    ax.set_xticks(np.arange(len(keys)) + offset, [f"{lab} {short[m]}" for lab, m in keys], fontsize=7, rotation=45, ha="right")
    ax.set_ylim(0, 110)
    ax.set_yticks(range(0, 101, 20))
    ax.set_title("(a) per class")
    # (b) per test type, (c) per disease class: macro-F1
    for ax, panel, title in ((axes[1], "test_type", "(b) per test type (macro-F1)"), (axes[2], "disease", "(c) per disease class (macro-F1)")):
        sub = table[(table["panel"] == panel) & (table["metric"] == "macro_f1")]
        groups = list(dict.fromkeys(sub["group"]))
        if not groups:
            ax.text(0.5, 0.5, "\n".join(n for n in notes if panel != "disease" or "(c)" in n) or "no data", ha="center", va="center", wrap=True, fontsize=8)
            ax.set_axis_off()
            ax.set_title(title)
            continue
        series = [(model, [float(sub[(sub.model == model) & (sub.group == g)]["value"].sum()) for g in groups]) for model in models]
        paper = [_paper_value(table, panel, g, "macro_f1") for g in groups]
        if any(v is not None for v in paper):
            series.append((PAPER_SERIES, paper))
        offset = _series_bars(ax, series, True, colours)
        ns = [int(sub[sub.group == g]["n"].iloc[0]) for g in groups]
        ax.set_yticks(np.arange(len(groups)) + offset, [f"{g} (n={n})" for g, n in zip(groups, ns)], fontsize=7)
        # first group on top; at least five slots, so one or two groups do not get slab-like bars
        ax.set_ylim(max(len(groups), 5) - 0.5 + 2 * offset, -0.5)
        ax.set_xlim(0, 110)
        ax.set_xticks(range(0, 101, 20))
        ax.set_title(title)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.suptitle("CliniFact test split: per class, per statistical test type and per disease class (%)")
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.95), ncol=max(1, len(labels)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    return save_figure(fig, png)
