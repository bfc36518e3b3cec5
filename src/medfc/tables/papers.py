"""The papers' numbers (a data file, resources/papers/numbers.yaml, read by :func:`medfc.common.papers.read_paper_numbers`)
as the tables and Fig. 3 use them."""

from __future__ import annotations

from collections.abc import Mapping

from medfc.common.jsontypes import JSONValue
from medfc.common.papers import read_paper_numbers as paper_numbers

__all__ = ["clinifact_fig3", "paper_numbers"]


def clinifact_fig3(papers: Mapping[str, JSONValue]) -> dict[tuple[str, str, str], float]:
    """(panel, group, metric) → the value the CliniFact paper states for Fig. 3 (BioBERT)."""
    return {(str(p), str(g), str(m)): float(v) for p, g, m, v in papers["clinifact"]["fig3"]}
