"""The papers' own numbers (resources/papers/numbers.yaml, a data file the figure and table rules take as an
input), read where a dataset's statistics put them beside ours."""

from __future__ import annotations

import os

import yaml

from medfc.common.jsontypes import JSONObject


def read_paper_numbers(path: str | os.PathLike) -> JSONObject:
    """The parsed numbers file (see its header for the layout)."""
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def reported_title(cite: str) -> str:
    """The title row over a paper's rows in a table: "Reported: Vladika et al. 2024"."""
    return f"Reported: {cite}"
