"""Figures a paper can print as they are: drawn at their printed size, no text under 7 pt, fonts embedded
as TrueType (never Type 3), saved as PDF and PNG side by side with byte-stable metadata.

A figure is one of two widths: :data:`COLUMN_WIDTH` (one column of a two-column page) or
:data:`TEXT_WIDTH` (the width of the text block). :func:`new_figure` makes one with constrained layout
under :data:`STYLE` (font sizes, embedded fonts), and :func:`save_figure` writes it at exactly that size
(no cropping), so a PDF placed at 100 % in a paper shows every font at the size it was drawn with.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

#: A column figure (one column of a two-column page) is drawn this wide, in inches.
COLUMN_WIDTH = 3.3
#: A text-width figure (the width of the text block) is drawn this wide, in inches.
TEXT_WIDTH = 7.0
#: No text of a figure is smaller than this (points, at the printed size).
MIN_FONT_PT = 7.0
#: The tallest a figure may be (a page's text block less its caption), in inches.
MAX_HEIGHT = 8.5

#: The rcParams every figure is drawn with: 7–8 pt text and TrueType fonts in PDF and PostScript.
STYLE: dict[str, Any] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "figure.titlesize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,  # TrueType, embedded (a Type 3 font is a bitmap-like font many publishers reject)
    "ps.fonttype": 42,
    "svg.fonttype": "none",
}
matplotlib.rcParams.update(STYLE)

WIDTHS = {"column": COLUMN_WIDTH, "text": TEXT_WIDTH}


def new_figure(width: str, height: float, **subplots: Any) -> tuple[plt.Figure, Any]:
    """``plt.subplots`` at a printed width (``"column"`` or ``"text"``) and ``height`` inches, with
    constrained layout (every label inside the page, the page exactly this size)."""
    return plt.subplots(figsize=(WIDTHS[width], min(height, MAX_HEIGHT)), layout="constrained", **subplots)


def save_figure(fig: plt.Figure, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem.png`` (300 dpi) and ``stem.pdf`` at the figure's size, with byte-stable metadata and
    TrueType fonts; close the figure. ``stem`` may carry a suffix (``fig.png``); it is replaced."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
        fig.savefig(out[0], dpi=300, metadata={"Software": None})
        fig.savefig(out[1], metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
    plt.close(fig)
    return out
