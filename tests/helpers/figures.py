"""Inspect a matplotlib figure the way a reader sees it: texts, where they are drawn, bars."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from matplotlib.text import Text


def capture(monkeypatch: Any, module: Any) -> list[Any]:
    """Replace ``module.save_figure`` so plotting functions hand their figure over instead of writing it."""
    figures: list[Any] = []

    def keep(fig: Any, stem: Any) -> list[Any]:
        figures.append(fig)
        return []

    monkeypatch.setattr(module, "save_figure", keep)
    return figures


def drawn_texts(ax: Any) -> list[tuple[str, Any]]:
    """(text, window extent) of every non-empty text drawn in ``ax`` (bar labels, annotations)."""
    renderer = ax.figure.canvas.get_renderer()
    ax.figure.canvas.draw()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts if t.get_visible() and t.get_text()]


def inside(box: Any, frame: Any, tol: float = 0.5) -> bool:
    return box.x0 >= frame.x0 - tol and box.x1 <= frame.x1 + tol and box.y0 >= frame.y0 - tol and box.y1 <= frame.y1 + tol


def overlap(a: Any, b: Any) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


# --------------------------------------------------------------------------- what a paper prints

PAPERS = Path(__file__).resolve().parents[2] / "resources" / "papers" / "numbers.yaml"


def shown_texts(fig: Any) -> list[Any]:
    """Every text of ``fig`` a reader sees once drawn: visible, non-empty, and no tick label of a tick outside
    its axis' view (matplotlib keeps those, undrawn)."""
    fig.canvas.draw()
    hidden = set()
    for ax in fig.findobj(lambda a: hasattr(a, "xaxis") and hasattr(a, "yaxis")):
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:
                    hidden |= {id(tick.label1), id(tick.label2)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def smallest_font(fig: Any) -> float:
    """The smallest font size (points) of any text a reader sees in ``fig``: titles, tick labels, legends, bar labels."""
    return min(float(t.get_fontsize()) for t in shown_texts(fig))


def pdf_page_inches(pdf: Path) -> tuple[float, float]:
    """Width and height of the PDF's (first) page in inches, from its MediaBox."""
    box = re.search(rb"/MediaBox\s*\[\s*([\d.\s-]+)\]", pdf.read_bytes())
    assert box, f"{pdf}: no MediaBox"
    x0, y0, x1, y1 = (float(v) for v in box.group(1).split())
    return round((x1 - x0) / 72, 2), round((y1 - y0) / 72, 2)


def pdf_font_types(pdf: Path) -> set[str]:
    """The font types a PDF embeds: pdffonts' "type" column where poppler is installed, else the ``/Subtype``
    of every font object (matplotlib writes the font dictionaries uncompressed)."""
    if shutil.which("pdffonts"):
        out = subprocess.run(["pdffonts", str(pdf)], check=True, capture_output=True, text=True).stdout.splitlines()[2:]
        # name, then the type (one or more words) up to the encoding column
        return {re.split(r"\s{2,}", line.strip())[1] for line in out if line.strip()}
    data = pdf.read_bytes()
    fonts = re.findall(rb"/Type\s*/Font\s*/Subtype\s*/(\w+)|/Subtype\s*/(\w+)\s*/Type\s*/Font", data)
    return {(a or b).decode() for a, b in fonts}


def off_page(fig: Any) -> list[str]:
    """The texts a reader sees in ``fig`` that reach past its page (cut off when printed)."""
    renderer, page = fig.canvas.get_renderer(), fig.bbox
    return [t.get_text() for t in shown_texts(fig) if not inside(t.get_window_extent(renderer), page, tol=1.0)]
