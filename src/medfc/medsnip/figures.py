"""MedSNIP Fig. 21: verifier calls against false-class F1, one point per verifier and mode, at a column's printed
width with no text under 7 pt, as PNG and PDF (matplotlib is imported only when the figure is drawn)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from medfc.medsnip.table import MODE_NAMES

WIDTH_IN, HEIGHT_IN = 3.3, 2.6  # a column of a two-column paper
FONT_PT = 7.5
MODE_COLOURS = {"atoms": "#4c72b0", "group": "#dd8452", "direct": "#55a868", "human_atoms": "#8172b3", "human_snippets": "#c44e52"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def calls_figure(points: Sequence[Mapping[str, object]], title: str, stem: str | os.PathLike) -> list[Path]:
    """Verifier calls (x) against FF1 (y) of each arm: colour by mode, marker by verifier, a verifier's modes joined
    by a line; points that coincide stay visible as rings (each later mode drawn smaller on top)."""
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from medfc.common.plots import save_figure

    with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, "font.size": FONT_PT}):  # TrueType in the PDF
        fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN))
        verifiers = list(dict.fromkeys(str(p["verifier"]) for p in points))
        for k, verifier in enumerate(verifiers):
            mine = [p for p in points if p["verifier"] == verifier]
            ax.plot([p["verify_calls"] for p in mine], [p["ff1"] for p in mine], color="0.75", linewidth=0.6, zorder=1)
            for j, p in enumerate(mine):
                ax.scatter(p["verify_calls"], p["ff1"], s=max(46 - 8 * j, 8), marker=MARKERS[k % len(MARKERS)], zorder=2 + j,
                           color=MODE_COLOURS.get(str(p["mode"]), "0.3"), edgecolors="black", linewidths=0.4)
        ax.set_xlabel("verifier calls", fontsize=FONT_PT)
        ax.set_ylabel("false-class F1 (FF1)", fontsize=FONT_PT)
        ax.set_title(f"MedSNIP on {title}", fontsize=FONT_PT + 0.5)
        ax.set_ylim(-0.03, 1.03)
        ax.tick_params(labelsize=FONT_PT)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # calls are counts
        ax.grid(True, linewidth=0.3, color="0.85")
        modes = list(dict.fromkeys(str(p["mode"]) for p in points))
        handles = [Line2D([], [], linestyle="", marker="o", markersize=4.5, markerfacecolor=MODE_COLOURS.get(m, "0.3"),
                          markeredgecolor="black", markeredgewidth=0.4, label=MODE_NAMES.get(m, m)) for m in modes]
        if len(verifiers) > 1:
            handles += [Line2D([], [], linestyle="", marker=MARKERS[k % len(MARKERS)], markersize=4.5, color="0.5", label=v)
                        for k, v in enumerate(verifiers)]
        ax.legend(handles=handles, fontsize=FONT_PT, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3,
                  handletextpad=0.3, columnspacing=0.8)  # below the axes: the figure keeps a column's width
        fig.tight_layout()
        return save_figure(fig, stem)
