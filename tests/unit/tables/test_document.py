"""main.tex (medfc.tables.document): every table input, each figure in a column or across the page by its width."""

from __future__ import annotations

from medfc.tables.document import main_document, pdf_width_pt


def _pdf(path, width_in: float) -> str:
    w = 72 * width_in
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Page /MediaBox [ 0 0 " + f"{w:.2f}".encode() + b" 200 ] >> endobj\n%%EOF\n")
    return str(path)


def test_figures_go_into_a_column_or_across_the_page_by_their_width(tmp_path):
    (tmp_path / "figs").mkdir()
    narrow = _pdf(tmp_path / "figs" / "narrow.pdf", 3.2)
    wide = _pdf(tmp_path / "figs" / "wide.pdf", 7.0)
    huge = _pdf(tmp_path / "figs" / "huge.pdf", 16.0)
    (tmp_path / "figs" / "wide.md").write_text("Fig. 3: 95% of pairs.\n\n| a |\n")
    assert round(pdf_width_pt(wide)) == 504
    doc = main_document([str(tmp_path / "tables" / "t3.tex")], [narrow, wide, huge], tmp_path, "run_1 (smoke)")
    assert r"\input{tables/t3}" in doc
    assert "\\begin{figure}[tbp]\n\\centering\n\\includegraphics{figs/narrow.pdf}" in doc
    assert "\\begin{figure*}[tbp]\n\\centering\n\\includegraphics{figs/wide.pdf}" in doc
    assert r"\includegraphics[width=\linewidth]{figs/huge.pdf}" in doc
    assert r"Fig. 3: 95\% of pairs." in doc and r"run\_1" in doc
