"""The lines of code that choose by comparing an axis's field with a registered name (a registry's names are
looked up, never compared): ``x.source == "name"``, ``"name" != cfg["source"]``, ``cfg["backend"] in ("name",
...)``, and any ``case "name":``. A name compared with something else (a config key spelt like a source,
``k != "bulk_zip"``) is no choice of a value."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path


def name_comparisons(field: str, names: Sequence[str]) -> re.Pattern[str]:
    """The pattern of a comparison of ``field`` (an attribute, key or variable of that name) with one of ``names``."""
    n = "|".join(map(re.escape, names))
    f = re.escape(field)
    return re.compile(rf"""\b{f}["'\])]*\s*(?:[!=]=|(?:not\s+)?in\b)\s*[(\[{{]?[^)\]}}#]*["']({n})["']"""
                      rf"""|["']({n})["']\s*[!=]=\s*[\w.\[\]"']*\b{f}\b|\bcase\s+["']({n})["']""")


def comparisons_in(files: Sequence[Path], field: str, names: Sequence[str], root: Path) -> list[str]:
    """``<file relative to root>:<line>`` of every comparison of ``field`` with one of ``names`` in ``files``."""
    pattern = name_comparisons(field, names)
    return [f"{f.relative_to(root)}:{n}" for f in files for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line)]
