"""Inspect a matplotlib figure the way a reader sees it: texts, where they are drawn, bars."""

from __future__ import annotations

from typing import Any


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
