"""Tables as a two-column paper sets them: booktabs LaTeX that compiles with pdflatex and fits its column (a
``table*`` when too wide for it), a table longer than :data:`MAX_ROWS` split into ``(continued)`` floats."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

# the page the fit is estimated for: a two-column paper with 7 in of text width (3.3 in columns)
TEXT_PT = 505.0
COLUMN_PT = 238.0
MAX_ROWS = 40  # body rows per float: a long table is split into floats of at most this many rows
CHAR_PT = 4.6  # the mean width of a character at \footnotesize (8 pt Computer Modern), a generous estimate
TABCOLSEP_PT = 4.0

Fmt = Literal["text", "pct1", "dec1", "dec3", "int", "p3"]

_SPECIALS = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": "$<$", ">": "$>$", "|": r"$|$",
}
_SYMBOLS = {
    "Δ": r"$\Delta$", "δ": r"$\delta$", "±": r"$\pm$", "–": "--", "—": "---", "−": "$-$", "≥": r"$\geq$", "≤": r"$\leq$",
    "×": r"$\times$", "χ": r"$\chi$", "²": r"$^{2}$", "³": r"$^{3}$", "→": r"$\rightarrow$", "←": r"$\leftarrow$",
    "τ": r"$\tau$", "λ": r"$\lambda$", "μ": r"$\mu$", "µ": r"$\mu$", "σ": r"$\sigma$", "α": r"$\alpha$", "β": r"$\beta$",
    "γ": r"$\gamma$", "κ": r"$\kappa$", "≈": r"$\approx$", "≠": r"$\neq$", "∞": r"$\infty$", "·": r"$\cdot$", "•": r"$\bullet$",
    "…": r"\ldots{}", "“": "``", "”": "''", "„": ",,", "‘": "`", "’": "'", "‚": ",", "«": "$\\ll$",
    "»": "$\\gg$", "°": r"\textdegree{}", "€": "EUR", "®": r"\textregistered{}", "™": r"\texttrademark{}",
    "©": r"\textcopyright{}", "§": r"\S{}", "¶": r"\P{}", "†": r"\dag{}", "‡": r"\ddag{}", "½": r"$\frac{1}{2}$",
    "¼": r"$\frac{1}{4}$", "¾": r"$\frac{3}{4}$", "\u00a0": "~", "\u2009": r"\,", "\u202f": r"\,", "\u200b": "",
    "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}", "ø": r"\o{}", "Ø": r"\O{}", "œ": r"\oe{}", "Œ": r"\OE{}", "å": r"\aa{}",
    "Å": r"\AA{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}",
}
_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0308": '"', "\u0304": "=", "\u0307": ".",
            "\u030a": "r", "\u030c": "v", "\u0327": "c", "\u0306": "u", "\u030b": "H", "\u0328": "k"}
_REPLACED = _SYMBOLS | _SPECIALS


def _char(ch: str) -> str:
    if ch in _REPLACED:
        return _REPLACED[ch]
    if ch.isascii():
        return ch if ch.isprintable() or ch == " " else " "
    base, *marks = unicodedata.normalize("NFD", ch)
    if base.isascii() and marks and all(m in _ACCENTS for m in marks):  # é → \'{e}
        out = base if base not in "ij" else "\\" + base
        for m in marks:
            out = f"\\{_ACCENTS[m]}{{{out}}}"
        return out
    if unicodedata.category(ch).startswith("Z"):
        return " "
    folded = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
    return escape(folded) if folded else "?"  # a character no LaTeX text font has: a visible stand-in


def escape(text: object) -> str:
    """``text`` as LaTeX text that compiles with pdflatex and the kernel alone: specials escaped, Unicode symbols and
    accents as commands, control characters as spaces, anything else as its ASCII form (``?`` when none)."""
    return "".join(_char(ch) for ch in str(text))


@dataclass(frozen=True)
class Tex:
    """A cell of LaTeX written by the caller (not escaped); ``chars``: about how many characters wide it prints."""

    latex: str
    chars: float


DASH = Tex("---", 1.5)  # a cell the paper leaves empty on purpose (its "—")


def marked(text: str, mark: str) -> Tex:
    """``text`` with a note's mark as a superscript (``tfidf+gbm`` with ``a``: the row a table note explains)."""
    return Tex(rf"{escape(text)}\textsuperscript{{{escape(mark)}}}", len(text) + 0.7 * len(mark))


@dataclass(frozen=True)
class MeanSD:
    """``mean`` with the SD as a subscript (the papers' ``48.0_{1.5}``), one decimal each; ``bold``: a column's best."""

    mean: float
    sd: float | None = None
    bold: bool = False


@dataclass(frozen=True)
class Column:
    """One column: header, group (a spanning header over neighbours of the same group), alignment, number
    format; ``wrap``: a wrapping text column (tabularx ``X``) with its share of the free width."""

    header: str
    group: str = ""
    align: Literal["l", "r", "c"] = "r"
    fmt: Fmt = "text"
    wrap: float = 0.0


@dataclass(frozen=True)
class Block:
    """Rows under a title row (``title``: e.g. "Reported: Vladika et al. 2024"; empty: none)."""

    rows: Sequence[Sequence[object]]
    title: str = ""


@dataclass
class LatexTable:
    caption: str
    label: str
    columns: Sequence[Column]
    blocks: Sequence[Block]
    notes: Sequence[str] = field(default_factory=tuple)
    width: Literal["auto", "column", "text"] = "auto"
    merge_first: bool = False  # the first column's value shown once for a run of equal rows (a group name)


def format_cell(value: object, fmt: Fmt) -> tuple[str, float]:
    """A cell's LaTeX and its width in characters."""
    if isinstance(value, Tex):
        return value.latex, value.chars
    if isinstance(value, MeanSD):
        if value.mean is None or (isinstance(value.mean, float) and math.isnan(value.mean)):
            return "", 0.0
        mean = f"{value.mean:.1f}"
        body = rf"\textbf{{{mean}}}" if value.bold else mean
        if value.sd is None or (isinstance(value.sd, float) and math.isnan(value.sd)):
            return f"${body}$" if not value.bold else body, len(mean)
        sd = f"{value.sd:.1f}"
        return f"${body}_{{{sd}}}$", len(mean) + 0.7 * len(sd)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return "", 0.0
    if isinstance(value, bool):
        text = "yes" if value else "no"
        return text, len(text)
    if isinstance(value, (int, float)) and fmt != "text":
        x = float(value)
        if fmt == "int":
            text = f"{int(round(x)):,}".replace(",", "{,}")
            return text, len(f"{int(round(x)):,}")
        if fmt == "p3":
            text = "<0.001" if x < 0.0005 else f"{x:.3f}"
            return escape(text), len(text)
        if fmt == "pct1":
            x *= 100.0
        text = f"{x:.3f}" if fmt == "dec3" else f"{x:.1f}"
        return ("$-$" + text[1:] if text.startswith("-") else text), len(text)
    if isinstance(value, float):
        text = f"{value:.1f}"
        return text, len(text)
    text = str(value)
    return escape(text), len(text)


def estimated_width(table: LatexTable) -> float:
    """The tabular's width in points from its widest cell per column (wrapping columns: their header)."""
    total = 0.0
    for j, col in enumerate(table.columns):
        cells = [] if col.wrap else [format_cell(row[j], col.fmt)[1] for block in table.blocks for row in block.rows]
        total += max([float(len(col.header)), *cells]) * CHAR_PT + 2 * TABCOLSEP_PT
    # group headers wider than their columns widen them
    for group, span in _groups(table.columns):
        if group:
            need = len(group) * CHAR_PT + 2 * TABCOLSEP_PT
            have = sum(len(c.header) * CHAR_PT + 2 * TABCOLSEP_PT for c in table.columns[span[0]:span[1]])
            total += max(0.0, need - have)
    return total


def _groups(columns: Sequence[Column]) -> list[tuple[str, tuple[int, int]]]:
    out: list[tuple[str, tuple[int, int]]] = []
    for j, col in enumerate(columns):
        if out and out[-1][0] == col.group and col.group:
            out[-1] = (col.group, (out[-1][1][0], j + 1))
        else:
            out.append((col.group, (j, j + 1)))
    return out


def placement(table: LatexTable) -> Literal["column", "text"]:
    """Where the table goes: ``column`` when its estimated width fits a column, else ``text``."""
    if table.width == "auto":
        return "column" if estimated_width(table) <= COLUMN_PT else "text"
    return table.width


def _tabular_head(table: LatexTable) -> tuple[str, str]:
    wrap_total = sum(c.wrap for c in table.columns) or 1.0
    n_wrap = sum(1 for c in table.columns if c.wrap)
    # X columns share the free width in proportion to ``wrap`` (tabularx's \hsize trick, sum = n_wrap)
    specs = [rf">{{\raggedright\arraybackslash\hsize={c.wrap * n_wrap / wrap_total:.3f}\hsize}}X" if c.wrap else c.align
             for c in table.columns]
    spec = "@{}" + "".join(specs) + "@{}"
    if n_wrap:
        return rf"\begin{{tabularx}}{{\linewidth}}{{{spec}}}", r"\end{tabularx}"
    return rf"\begin{{tabular}}{{{spec}}}", r"\end{tabular}"


def _header_lines(table: LatexTable) -> list[str]:
    lines = []
    groups = _groups(table.columns)
    if any(g for g, _ in groups):
        cells, rules = [], []
        for group, (a, b) in groups:
            span = b - a
            cells.append(rf"\multicolumn{{{span}}}{{c}}{{{escape(group)}}}" if group and span > 1 else escape(group))
            if group:
                rules.append(rf"\cmidrule(lr){{{a + 1}-{b}}}")
        lines.append(" & ".join(cells) + r" \\")
        lines.append(" ".join(rules))
    lines.append(" & ".join(escape(c.header) for c in table.columns) + r" \\")
    return lines


def _body_lines(table: LatexTable, blocks: Sequence[Block]) -> list[str]:
    n = len(table.columns)
    lines: list[str] = []
    for i, block in enumerate(blocks):
        if i:
            lines.append(r"\midrule")
        if block.title:
            lines.append(rf"\multicolumn{{{n}}}{{@{{}}l}}{{\textit{{{escape(block.title)}}}}} \\")
        previous: object = object()
        for row in block.rows:
            cells = [format_cell(v, c.fmt)[0] for v, c in zip(row, table.columns)]
            if table.merge_first and row[0] == previous:
                cells[0] = ""
            previous = row[0]
            lines.append(" & ".join(cells) + r" \\")
    return lines


def _chunks(blocks: Sequence[Block], size: int) -> list[list[Block]]:
    """The blocks cut into pages of at most ``size`` body rows (a block's title repeats on its next page)."""
    pages: list[list[Block]] = [[]]
    used = 0
    for block in blocks:
        rows = list(block.rows)
        title = block.title
        while rows or (title and not block.rows):
            room = size - used
            if room <= 1 and pages[-1]:
                pages.append([])
                used = 0
                room = size
            take = rows[: max(room - (1 if title else 0), 1)]
            pages[-1].append(Block(take, title))
            used += len(take) + (1 if title else 0)
            rows = rows[len(take):]
            title = f"{block.title} (continued)" if block.title else ""
            if not block.rows:
                break
    return [p for p in pages if p] or [[]]


def render(table: LatexTable) -> str:
    """The table as booktabs floats of at most :data:`MAX_ROWS` body rows, all text escaped, cells formatted by their
    column's ``fmt``, a ``table`` or a ``table*`` by :func:`placement`."""
    env = "table" if placement(table) == "column" else "table*"
    begin, end = _tabular_head(table)
    too_wide = not any(c.wrap for c in table.columns) and estimated_width(table) > TEXT_PT
    pages = _chunks(table.blocks, MAX_ROWS)
    out = []
    for k, blocks in enumerate(pages):
        caption = escape(table.caption) if k == 0 else f"{escape(table.caption.split('. ')[0])} (continued)."
        lines = [rf"\begin{{{env}}}[tbp]", r"\centering", r"\footnotesize", rf"\setlength{{\tabcolsep}}{{{TABCOLSEP_PT:g}pt}}",
                 rf"\caption{{{caption}}}"]
        if k == 0 and table.label:
            lines.append(rf"\label{{{table.label}}}")
        body = [begin, r"\toprule", *_header_lines(table), r"\midrule", *_body_lines(table, blocks), r"\bottomrule", end]
        if too_wide:  # a last resort for a generic table wider than the page: scaled down to the text width
            body = [r"\resizebox{\linewidth}{!}{%", *body, "}"]
        lines += body
        if table.notes and k == len(pages) - 1:
            lines.append(r"\par\smallskip\parbox{\linewidth}{\scriptsize " + " ".join(escape(n) for n in table.notes) + "}")
        lines.append(rf"\end{{{env}}}")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def label_of(stem: str) -> str:
    """A LaTeX label from a file stem (``healthfc_table3`` → ``tab:healthfc-table3``)."""
    return "tab:" + re.sub(r"[^A-Za-z0-9]+", "-", stem).strip("-").lower()


def from_rows(caption: str, label: str, headers: Sequence[str], rows: Iterable[Sequence[object]]) -> LatexTable:
    """A plain table: text columns left-aligned, numeric ones (every non-empty cell a number) right-aligned,
    integers with thousands separators, floats with one decimal (numpy scalars read as Python's)."""
    rows = [[v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v for v in r] for r in rows]
    columns = []
    for j, h in enumerate(headers):
        values = [r[j] for r in rows if r[j] is not None and r[j] != "" and not (isinstance(r[j], float) and math.isnan(r[j]))]
        numeric = bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
        integral = numeric and all(float(v).is_integer() and not isinstance(v, float) for v in values)
        fmt = "int" if integral else "dec1" if numeric else "text"
        columns.append(Column(str(h), align="r" if numeric else "l", fmt=fmt))
    return LatexTable(caption, label, columns, [Block(rows)])


def preamble() -> str:
    """The preamble every fragment compiles under: two columns, 7 in text width, booktabs, tabularx, graphicx."""
    return r"""\documentclass[10pt,twocolumn]{article}
\usepackage[letterpaper,textwidth=7in,columnsep=0.4in,textheight=9in,centering]{geometry}
\usepackage{booktabs}
\usepackage{tabularx}
\usepackage{graphicx}
\usepackage{caption}
\captionsetup{font=footnotesize}
\hbadness=10000
\hfuzz=1pt
"""
