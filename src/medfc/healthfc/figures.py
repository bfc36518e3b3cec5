"""The HealthFC paper's Figs. 1–3 from the tables of :mod:`medfc.healthfc.stats`, each at column width with no text
under 7 pt and the paper's numbers beside ours, written as ``<stem>.png`` and ``<stem>.pdf``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from medfc.common.labels import VERDICT_NAMES
from medfc.common.plots import MIN_FONT_PT, new_figure, save_figure

#: The printed width of each figure ("column": 3.3 in).
FIGURE_WIDTHS = {"fig1": "column", "fig2": "column", "fig3": "column"}

LEVEL_COLOURS = {"high": "#1b7837", "moderate": "#7fbf7b", "low": "#d9f0d3", "insufficient": "#bababa", "conflicting": "#8c510a"}
OURS, ARTICLES, PAPER_EDGE = "#3b75af", "#e07b39", "#444444"
PAPER_STYLE = {"facecolor": "white", "edgecolor": PAPER_EDGE, "hatch": "////", "linewidth": 0.6}


def _paper(value: object) -> float | None:
    """A paper cell as a number (None where the paper gives none: None, NA, NaN)."""
    return None if pd.isna(value) else float(value)  # type: ignore[arg-type]


def _fits(fig, labels, bars) -> bool:
    """Whether every value label is no wider than its bar (vertical bars) and no two labels overlap."""
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in labels if t.get_text()]
    widths = [b.get_window_extent(renderer).width for b in bars]
    if any(box.width > w + 1 for box, w in zip(boxes, widths)):
        return False
    return not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def plot_claims_per_year(df: pd.DataFrame, stem: str | os.PathLike) -> list[Path]:
    """Fig. 1: claims and articles per year, side by side, each bar with its count where the counts fit at 7 pt; the
    paper's articles of a year (``paper_articles``) are named in the legend."""
    fig, ax = new_figure("column", 2.3)
    x = np.arange(len(df))
    width = 0.4
    claims = ax.bar(x - width / 2, df["claims"], width, color=OURS, label="claims")
    articles = ax.bar(x + width / 2, df["articles"], width, color=ARTICLES, label="articles")
    top = max([float(df["claims"].max()), float(df["articles"].max())] if len(df) else [1.0])
    labels = [*ax.bar_label(claims, labels=[str(int(v)) if v else "" for v in df["claims"]], fontsize=MIN_FONT_PT, padding=1),
              *ax.bar_label(articles, labels=[str(int(v)) if v else "" for v in df["articles"]], fontsize=MIN_FONT_PT, padding=1)]
    ax.set_ylim(0, max(top, 1.0) * 1.18)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    years = df["year"].astype(int).astype(str).tolist()
    ax.set_xticks(x, years, rotation=90 if len(df) > 6 else 0)
    ax.set_xlim(-0.6, max(len(df), 1) - 0.4)
    ax.set_xlabel("year of the article date")
    ax.set_ylabel("count")
    handles, names = ax.get_legend_handles_labels()
    stated = [(y, _paper(v)) for y, v in zip(years, df.get("paper_articles", pd.Series([None] * len(df))))]
    stated = [(y, int(v)) for y, v in stated if v is not None]
    if stated:
        from matplotlib.patches import Patch

        handles.append(Patch(**PAPER_STYLE))
        names.append("paper: " + ", ".join(f"{v} articles in {y}" for y, v in stated))
    ax.set_title("HealthFC: claims and articles per year")
    fig.legend(handles, names, frameon=False, loc="outside lower center", ncols=3, handlelength=1.2, columnspacing=1.0)
    fig.canvas.draw()
    if not _fits(fig, labels, [*claims, *articles]):
        for t in labels:
            t.remove()
    return save_figure(fig, stem)


def plot_top_topics(df: pd.DataFrame, stem: str | os.PathLike) -> list[Path]:
    """Fig. 2: the top topics by share of claims (largest on top), named in English where translated, the paper's
    shares (``paper_share``) as hatched bars beside ours."""
    n = len(df)
    paper = [_paper(v) for v in df.get("paper_share", pd.Series([None] * n))]
    has_paper = any(v is not None for v in paper)
    fig, ax = new_figure("column", 0.24 * max(3, n) + (1.3 if has_paper else 1.0))
    names = [str(en) if isinstance(en, str) and en.strip() else str(de)
             for de, en in zip(df["topic"], df.get("topic_en", df["topic"]))]
    y = np.arange(n, dtype=float)
    h = 0.38
    ours_y = [yi - h / 2 if v is not None else yi for yi, v in zip(y, paper)]  # beside the paper's bar, else centred
    ours = ax.barh(ours_y, 100 * df["share"], h if has_paper else 0.6, color=OURS, label="ours")
    ax.bar_label(ours, labels=[f"{100 * s:.0f} %" for s in df["share"]], fontsize=MIN_FONT_PT, padding=2)
    top = max([100 * float(df["share"].max())] if n else [1.0])
    if has_paper:
        pv = [100 * v for v in paper if v is not None]
        bars = ax.barh([yi + h / 2 for yi, v in zip(y, paper) if v is not None], pv, h, label="paper", **PAPER_STYLE)
        ax.bar_label(bars, labels=[f"{v:.0f} %" for v in pv], fontsize=MIN_FONT_PT, padding=2)
        top = max(top, max(pv))
        ax.legend(frameon=False, loc="best", handlelength=1.2)
    ax.set_yticks(y, names)
    ax.set_ylim(max(n, 1) - 0.5, -0.5)  # largest on top
    ax.set_xlim(0, max(top, 1.0) * 1.25)  # room for the labels
    ax.set_xlabel("share of claims (%)")
    note = f"A claim has several topics: these {n} shares\nadd up to {100 * float(df['share'].sum()):.0f} %, not 100 %."
    fig.supxlabel(note, fontsize=MIN_FONT_PT, color="#444444")
    ax.set_title(f"HealthFC: top {n} topics")
    return save_figure(fig, stem)


def plot_level_by_verdict(df: pd.DataFrame, stem: str | os.PathLike) -> list[Path]:
    """Fig. 3: claims per verdict, stacked by level of evidence, each bar's total (and the paper's) above it."""
    grid = df[df["evidence_level"] != "all"]
    wide = grid.pivot_table(index="label", columns="evidence_level", values="claims", aggfunc="sum", fill_value=0, sort=False)
    order = [lab for lab in VERDICT_NAMES if lab in wide.index]
    wide = wide.loc[order]
    stated = {lab: _paper(v) for lab, v in zip(df.loc[df["evidence_level"] == "all", "label"],
                                                df.loc[df["evidence_level"] == "all", "paper_claims"])} if "paper_claims" in df else {}
    fig, ax = new_figure("column", 2.8)
    bottom = [0] * len(wide)
    x = [VERDICT_NAMES[lab] for lab in wide.index]
    for level in wide.columns:
        vals = wide[level].tolist()
        if not any(vals):
            continue
        ax.bar(x, vals, 0.6, bottom=bottom, label=level, color=LEVEL_COLOURS.get(level, "#999999"), edgecolor="white")
        bottom = [b + v for b, v in zip(bottom, vals)]
    for xi, lab, total in zip(x, wide.index, bottom):
        paper = stated.get(lab)
        text = str(total) if paper is None else f"{total}\npaper: {paper:.0f}"
        ax.annotate(text, (xi, total), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                    fontsize=MIN_FONT_PT, linespacing=1.1)
    ax.set_ylim(0, max(bottom + [1]) * (1.35 if stated else 1.15))  # headroom: the totals stay inside the frame
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("claims")
    ax.set_title("HealthFC: level of evidence by verdict")
    fig.legend(title="level of evidence", frameon=False, loc="outside lower center", ncols=3, handlelength=1.2, columnspacing=1.0)
    return save_figure(fig, stem)
