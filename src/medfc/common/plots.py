"""Saving figures reproducibly: PNG and PDF side by side, without timestamps in their metadata."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def save_figure(fig: plt.Figure, stem: str | os.PathLike) -> list[Path]:
    """Write ``stem.png`` (150 dpi) and ``stem.pdf`` with byte-stable metadata; close the figure.

    ``stem`` may carry a suffix (``fig.png``); it is replaced.
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    fig.savefig(out[0], dpi=150, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(out[1], bbox_inches="tight", metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
    plt.close(fig)
    return out
