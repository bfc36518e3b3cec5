"""CliniFact Figs. 2 and S1 as a reader sees them: what the bars add up to, the paper's count of classes, whole
years, and their printed size (Fig. 2 text width, Fig. S1 column width) with no text under 7 pt."""

import pandas as pd

import medfc.common.plots as plots
from medfc.clinifact import stats
from medfc.common.papers import read_paper_numbers
from tests.helpers.figures import PAPERS, capture, drawn_texts, off_page, pdf_font_types, pdf_page_inches, smallest_font

PAPER = read_paper_numbers(PAPERS)["clinifact"]["fig2"]


def test_fig2_says_a_pair_counts_in_each_of_its_disease_classes_and_how_many_classes_the_paper_has(monkeypatch):
    figs = capture(monkeypatch, stats)
    df = pd.DataFrame({"nctId": ["N1", "N2", "N3"]})
    classes = {"N1": ["Neoplasms", "Eye Diseases"], "N2": ["Neoplasms"], "N3": []}
    table = stats.disease_class_table(df, classes)
    assert table.to_dict("records") == [{"disease_class": "Neoplasms", "claims": 2},
                                        {"disease_class": "(no class)", "claims": 1},
                                        {"disease_class": "Eye Diseases", "claims": 1}]
    stats.plot_disease_classes(table, "unused", n_pairs=len(df), paper=PAPER)
    fig = figs[0]
    assert fig._supxlabel.get_text().replace("\n", " ") == ("A pair counts once in each of its trial's disease classes: the bars add up to 4 for 3 pairs. "
                                         "2 disease classes here; the paper's dataset has 20 (of MeSH's 27).")
    assert sorted(t for t, _ in drawn_texts(fig.axes[0]) if t.isdigit()) == ["1", "1", "2"]
    assert fig.get_size_inches()[0] == 7.0 and smallest_font(fig) >= 7
    assert off_page(fig) == []  # the note is wrapped to stay on the page


def test_figS1_has_whole_years_at_column_width(monkeypatch):
    figs = capture(monkeypatch, stats)
    stats.plot_years(pd.DataFrame({"year": [2008, 2009, 2010, 2012, 2013, 2016, 2017], "publications": [1, 2, 2, 1, 3, 3, 2]}), "unused")
    fig = figs[0]
    ax = fig.axes[0]
    fig.canvas.draw()
    shown = [t.get_text() for t in ax.get_xticklabels() if ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]]
    assert shown and all(t.lstrip("−-").isdigit() for t in shown)  # 2008, 2010, …: no 2007.5
    assert all(float(t).is_integer() for t in ax.get_yticks())
    assert fig.get_size_inches()[0] == 3.3 and smallest_font(fig) >= 7 and off_page(fig) == []


def test_figures_saved_at_their_printed_size_with_truetype_fonts(tmp_path):
    table = pd.DataFrame({"disease_class": ["Neoplasms", "Eye Diseases"], "claims": [3, 1]})
    paths = stats.plot_disease_classes(table, tmp_path / "fig2.png", n_pairs=3, paper=PAPER)
    paths += stats.plot_years(pd.DataFrame({"year": [2010, 2011], "publications": [1, 2]}), tmp_path / "figS1.png")
    pdfs = [p for p in paths if p.suffix == ".pdf"]
    assert [pdf_page_inches(p)[0] for p in pdfs] == [7.0, 3.3]
    assert all(not {"Type 3", "Type3"} & pdf_font_types(p) for p in pdfs)
    assert plots.COLUMN_WIDTH == 3.3 and plots.TEXT_WIDTH == 7.0
