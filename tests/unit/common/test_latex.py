"""The LaTeX writer (medfc.common.latex): escaping, the papers' cell formats, fitting a column or the text width,
long tables split, and the fragments compiled by a real pdflatex with no error and no overfull box."""

from __future__ import annotations

import pandas as pd
import pytest

from medfc.common import latex
from medfc.common.io import write_table
from tests.helpers.tex import compile_fragments, overfull_boxes


def test_escape_specials_and_symbols():
    assert latex.escape("95% CI of Δ, retrieved_web & #1 {x} ~ ^ \\") == (
        r"95\% CI of $\Delta$, retrieved\_web \& \#1 \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{}")
    assert latex.escape("mean ± std – χ² ≥ 0") == r"mean $\pm$ std -- $\chi$$^{2}$ $\geq$ 0"
    assert latex.escape("Müdigkeit") == r'M\"{u}digkeit'
    assert latex.escape("x\u4e2dy") == "x?y"  # a character no text font has


def test_cells_one_decimal_counts_integers_p_values_three_places():
    assert latex.format_cell(87.5, "dec1")[0] == "87.5"
    assert latex.format_cell(8.0, "int")[0] == "8"
    assert latex.format_cell(1970, "int")[0] == "1{,}970"
    assert latex.format_cell(0.40907, "p3")[0] == "0.409"
    assert latex.format_cell(0.0001, "p3")[0] == r"$<$0.001"
    assert latex.format_cell(0.651, "pct1")[0] == "65.1"
    assert latex.format_cell(latex.MeanSD(48.04, 1.46), "text")[0] == "$48.0_{1.5}$"
    assert latex.format_cell(latex.MeanSD(55.5, 1.0, bold=True), "text")[0] == r"$\textbf{55.5}_{1.0}$"
    assert latex.format_cell(None, "dec1")[0] == ""


def _wide(n_cols: int, n_rows: int = 3) -> latex.LatexTable:
    cols = [latex.Column("model", align="l")] + [latex.Column(f"metric {j}", fmt="dec1") for j in range(n_cols)]
    return latex.LatexTable("A caption with 95% CI.", "tab:x", cols, [latex.Block([[f"m{i}", *[50.0 + j for j in range(n_cols)]] for i in range(n_rows)], "Ours")])


def test_fits_a_column_or_goes_to_the_text_width():
    assert latex.placement(_wide(2)) == "column"
    assert latex.render(_wide(2)).startswith(r"\begin{table}[tbp]")
    assert latex.placement(_wide(9)) == "text"
    assert latex.render(_wide(9)).startswith(r"\begin{table*}[tbp]")


def test_a_long_table_is_split_into_floats_of_its_own():
    text = latex.render(_wide(2, n_rows=2 * latex.MAX_ROWS + 5))
    assert text.count(r"\begin{table}") == 3
    assert text.count("(continued)") >= 2
    assert text.count(r"\label{tab:x}") == 1


def test_write_table_escapes_caption_and_header(tmp_path):
    df = pd.DataFrame({"system_a": ["retrieved_web"], "n": [8], "F1 (%)": [61.94]})
    write_table(df, tmp_path / "t", caption="Table: 95% CI of Δ (%)", formats=("tex",))
    tex = (tmp_path / "t.tex").read_text()
    assert r"95\% CI of $\Delta$ (\%)" in tex and r"system\_a" in tex and r"retrieved\_web" in tex
    assert " 8 " in tex and "61.9" in tex and "61.94" not in tex


@pytest.mark.slow
def test_fragments_compile_without_overfull_boxes(tmp_path):
    frags = []
    for name, table in {"narrow": _wide(2), "wide": _wide(9), "long": _wide(3, n_rows=95)}.items():
        (tmp_path / f"{name}.tex").write_text(latex.render(table))
        frags.append(tmp_path / f"{name}.tex")
    wrap = latex.LatexTable("Examples: claims with 50% of words & symbols like Δ.", "tab:ex",
                            [latex.Column("Claim", align="l", wrap=1.0), latex.Column("Evidence", align="l", wrap=2.0),
                             latex.Column("Verdict", align="l")],
                            [latex.Block([["Does vitamin C prevent colds?", "A long evidence text " * 20, "Refuted"]])], width="column")
    (tmp_path / "wrap.tex").write_text(latex.render(wrap))
    frags.append(tmp_path / "wrap.tex")
    log = compile_fragments(frags, tmp_path / "doc")
    assert [b for b in overfull_boxes(log) if b > 1.0] == []
