"""Figures a paper can print as they are: drawn at their printed width (:data:`COLUMN_WIDTH` or
:data:`TEXT_WIDTH`), no text under 7 pt, TrueType fonts (never Type 3), saved as PDF and PNG with
byte-stable metadata and no cropping."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMN_WIDTH = 3.3  # inches: one column of a two-column page
TEXT_WIDTH = 7.0  # inches: the text block
MIN_FONT_PT = 7.0  # no text of a figure is smaller (points, at the printed size)
MAX_HEIGHT = 8.5  # inches: a page's text block less its caption

#: The rcParams every figure is drawn with: 7–8 pt text and TrueType fonts in PDF and PostScript.
STYLE: dict[str, Any] = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7, "legend.fontsize": 7,
    "legend.title_fontsize": 7, "figure.titlesize": 8, "axes.spines.top": False, "axes.spines.right": False,
    "pdf.fonttype": 42,  # TrueType, embedded (a Type 3 font is a bitmap-like font many publishers reject)
    "ps.fonttype": 42, "svg.fonttype": "none",
}
matplotlib.rcParams.update(STYLE)

WIDTHS = {"column": COLUMN_WIDTH, "text": TEXT_WIDTH}


def new_figure(width: str, height: float, **subplots: Any) -> tuple[plt.Figure, Any]:
    """``plt.subplots`` at a printed width (``"column"`` or ``"text"``) and ``height`` inches, constrained layout."""
    return plt.subplots(figsize=(WIDTHS[width], min(height, MAX_HEIGHT)), layout="constrained", **subplots)


def save_figure(fig: plt.Figure, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem.png`` (300 dpi) and ``stem.pdf`` at the figure's size (any suffix of ``stem`` replaced); close it."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    fig.savefig(out[0], dpi=300, metadata={"Software": None})
    fig.savefig(out[1], metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
    plt.close(fig)
    return out
