"""A rebuilt dataset against its release (``medfc.clinifact.diff``, ``medfc.healthfc.diff``): one row per finding in
a declared category (``name → meaning``), counted (empty categories too) and written as CSV + Markdown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

import pandas as pd

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_PARTIAL_DATE = re.compile(r"^\s*(\d{4})(?:[-/ ]([A-Za-z]{3}|\d{1,2}|N/A)(?:[-/ ](\d{1,2}|N/A))?)?")


def earliest_date(text: object) -> date | None:
    """The first day a partial date can mean ("2024" → 2024-01-01, "2024-Mar-N/A" → 2024-03-01); None without a
    year. A date is *after* a cut-off only if its earliest day is."""
    if not isinstance(text, str):
        return None
    m = _PARTIAL_DATE.match(text)
    if not m:
        return None
    year, month, day = int(m.group(1)), m.group(2) or "", m.group(3) or ""
    month_n = int(month) if month.isdigit() else _MONTHS.get(month.lower())
    if month_n is None or not 1 <= month_n <= 12:
        return date(year, 1, 1)
    try:
        return date(year, month_n, int(day) if day.isdigit() else 1)
    except ValueError:  # no such day: the month
        return date(year, month_n, 1)


def after(text: object, cutoff: date) -> bool:
    """Whether a (partial) date lies certainly after ``cutoff`` (see :func:`earliest_date`)."""
    first = earliest_date(text)
    return first is not None and first > cutoff


SAME, WHITESPACE, TEXT = "same", "whitespace", "text"


def _gaps(text: str) -> list[str]:
    """The whitespace before each non-whitespace character of ``text``, and after the last one."""
    return re.split(r"\S", text)  # re's \s is str.isspace()


def text_difference(a: str, b: str) -> str:
    """:data:`SAME`, :data:`WHITESPACE` (equal once all whitespace, ASCII or not, is removed: U+00A0 for U+0020,
    "β 2" for "β2") or :data:`TEXT`."""
    if a == b:
        return SAME
    return WHITESPACE if "".join(a.split()) == "".join(b.split()) else TEXT


def _code_points(run: str) -> str:
    return "+".join(f"U+{ord(c):04X}" for c in run) if run else "none"


def whitespace_detail(a: str, b: str, sides: tuple[str, str] = ("a", "b")) -> str:
    """Where two texts differing only in whitespace differ: the first place (each side's whitespace by code
    point, and its offset in ``a``) and how many places there are."""
    places = [(i, x, y) for i, (x, y) in enumerate(zip(_gaps(a), _gaps(b))) if x != y]
    if not places:
        return ""
    i, x, y = places[0]
    nonspace = [k for k, ch in enumerate(a) if not ch.isspace()]
    at = (nonspace[i] if i < len(nonspace) else len(a)) - len(x)
    more = f"; {len(places)} places" if len(places) > 1 else ""
    return f"{_code_points(x)} ({sides[0]}) vs {_code_points(y)} ({sides[1]}) at offset {at}{more}"


def counts_table(rows: pd.DataFrame, categories: Mapping[str, str]) -> pd.DataFrame:
    """``category, rows, meaning`` for every category in its order, zero where nothing fell into it."""
    n = rows["category"].value_counts() if len(rows) else pd.Series(dtype=int)
    return pd.DataFrame([{"category": c, "rows": int(n.get(c, 0)), "meaning": m} for c, m in categories.items()])


def reasons_table(rows: pd.DataFrame, categories: Mapping[str, str]) -> pd.DataFrame:
    """``category, reason, rows`` of the rows that carry a reason, categories in their order."""
    if not len(rows) or "reason" not in rows or not rows["reason"].astype(bool).any():
        return pd.DataFrame(columns=["category", "reason", "rows"])
    with_reason = rows[rows["reason"].astype(bool)]
    table = with_reason.groupby(["category", "reason"]).size().reset_index(name="rows")
    order = {c: i for i, c in enumerate(categories)}
    return table.sort_values(["category", "rows", "reason"], key=lambda s: s.map(order) if s.name == "category" else s,
                             ascending=[True, False, True]).reset_index(drop=True)


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    text = re.sub(r"[ \t\r\n]+", " ", str(value)).strip(" ")  # line breaks would end the table row; other spaces stay
    return text.replace("|", "\\|")


def _markdown_table(df: pd.DataFrame) -> str:
    return df.map(_cell).to_markdown(index=False) if len(df) else "none"


def render_markdown(title: str, preamble: Sequence[str], rows: pd.DataFrame, categories: Mapping[str, str],
                    listed: Mapping[str, Sequence[str]], max_listed: int) -> str:
    """The report: preamble, counts per category, reasons, then the rows of each category in ``listed`` (its
    columns), at most ``max_listed`` each."""
    lines = [f"# {title}", "", *preamble, "", "## Counts", "", _markdown_table(counts_table(rows, categories)), ""]
    reasons = reasons_table(rows, categories)
    if len(reasons):
        lines += ["## Reasons", "", _markdown_table(reasons), ""]
    for category, columns in listed.items():
        part = rows[rows["category"] == category] if len(rows) else rows
        lines += [f"## {category} ({len(part)})", "", categories[category], ""]
        if len(part):
            lines.append(_markdown_table(part[list(columns)].head(max_listed)))
            if len(part) > max_listed:
                lines.append(f"\n… and {len(part) - max_listed} more (all in the CSV).")
            lines.append("")
    return "\n".join(lines) + "\n"


def write_diff(rows: pd.DataFrame, categories: Mapping[str, str], markdown: str, outputs: Mapping[str, str]) -> dict[str, int]:
    """Write ``rows`` and ``counts`` (CSV) and ``markdown``; returns the rows per category that occurs."""
    unknown = sorted(set(rows["category"]) - set(categories)) if len(rows) else []
    if unknown:
        raise ValueError(f"diff rows in categories that are not declared: {unknown}")
    for key in ("rows", "counts", "markdown"):
        Path(outputs[key]).parent.mkdir(parents=True, exist_ok=True)
    rows.to_csv(outputs["rows"], index=False)
    counts = counts_table(rows, categories)
    counts.to_csv(outputs["counts"], index=False)
    Path(outputs["markdown"]).write_text(markdown, encoding="utf-8")
    return {str(c): int(n) for c, n in zip(counts["category"], counts["rows"]) if n}
