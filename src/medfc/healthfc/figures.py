"""The HealthFC paper's Figs. 1–3 from the data frames of :mod:`medfc.healthfc.stats`.

Each figure is written as ``<stem>.png`` and ``<stem>.pdf`` (matplotlib, Agg backend, no
timestamps in the PDF so reruns give the same bytes).
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
from medfc.common.labels import NOT_ENOUGH_INFO, REFUTED, SUPPORTED  # noqa: E402
from medfc.common.plots import save_figure

__all__ = ["plot_claims_per_year", "plot_level_by_verdict", "plot_top_topics"]

LEVEL_COLOURS = {
    "high": "#1b7837", "moderate": "#7fbf7b", "low": "#d9f0d3",
    "insufficient": "#bababa", "conflicting": "#8c510a",
}
LABEL_NAMES = {SUPPORTED: "Supported", REFUTED: "Refuted", NOT_ENOUGH_INFO: "NEI"}  # the figures' legend


def _labels(values) -> list[str]:
    """Bar labels: the value, none for zero (no stray "0" on the axis)."""
    return [str(int(v)) if v else "" for v in values]


def plot_claims_per_year(df: pd.DataFrame, stem: str | os.PathLike) -> list[Path]:
    """Fig. 1: claims and articles per year, side by side, each bar labelled; integer count axis."""
    fig, ax = plt.subplots(figsize=(max(7.0, 0.6 * len(df) + 1.5), 3.6))
    x = np.arange(len(df))
    has_articles = "articles" in df
    width = 0.4 if has_articles else 0.8
    bars = ax.bar(x - width / 2 if has_articles else x, df["claims"], width, color="#3b75af", label="claims")
    ax.bar_label(bars, labels=_labels(df["claims"]), fontsize=6.5, padding=1.5)
    top = float(df["claims"].max()) if len(df) else 1.0
    if has_articles:
        abars = ax.bar(x + width / 2, df["articles"], width, color="#e07b39", label="articles")
        ax.bar_label(abars, labels=_labels(df["articles"]), fontsize=6.5, padding=1.5)
        top = max(top, float(df["articles"].max()) if len(df) else 1.0)
    ax.set_ylim(0, max(top, 1.0) * 1.15)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xticks(x, df["year"].astype(str).tolist(), rotation=45)
    ax.set_xlabel("year of the article date")
    ax.set_ylabel("count")
    ax.set_title("HealthFC: claims and articles per year")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save_figure(fig, stem)


def plot_top_topics(df: pd.DataFrame, stem: str | os.PathLike) -> list[Path]:
    """Fig. 2: the top topics by share of claims (horizontal bars, largest on top)."""
    fig, ax = plt.subplots(figsize=(6, 0.4 * max(3, len(df)) + 1))
    d = df.iloc[::-1]
    bars = ax.barh(d["topic"], 100 * d["share"], color="#3b75af")
    ax.bar_label(bars, labels=[f"{100 * s:.0f} %" for s in d["share"]], fontsize=7, padding=2)
    ax.set_xlim(0, max(100 * float(df["share"].max()) if len(df) else 0.0, 1.0) * 1.18)  # room for the labels
    ax.set_xlabel("share of claims (%)")
    ax.set_title(f"HealthFC: top {len(df)} topics")
    return save_figure(fig, stem)


def plot_level_by_verdict(df: pd.DataFrame, stem: str | os.PathLike) -> list[Path]:
    """Fig. 3: claims per verdict, stacked by level of evidence, with each bar's total above it."""
    wide = df.pivot_table(index="label", columns="evidence_level", values="claims", aggfunc="sum", fill_value=0, sort=False)
    order = [lab for lab in LABEL_NAMES if lab in wide.index]
    wide = wide.loc[order]
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    bottom = [0] * len(wide)
    x = [LABEL_NAMES[lab] for lab in wide.index]
    for level in wide.columns:
        vals = wide[level].tolist()
        if not any(vals):
            continue
        ax.bar(x, vals, bottom=bottom, label=level, color=LEVEL_COLOURS.get(level, "#999999"), edgecolor="white")
        bottom = [b + v for b, v in zip(bottom, vals)]
    for xi, total in zip(x, bottom):
        ax.annotate(str(total), (xi, total), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, max(bottom + [1]) * 1.12)  # headroom: the totals stay inside the frame
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("claims")
    ax.set_title("HealthFC: level of evidence by verdict")
    ax.legend(title="level of evidence", frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save_figure(fig, stem)
