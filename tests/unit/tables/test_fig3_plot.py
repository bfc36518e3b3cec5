"""CliniFact Fig. 3 as a reader sees it: labels, the paper's values beside ours, bar sizes."""

from pathlib import Path

import pandas as pd

import medfc.common.plots as plots
from medfc.tables import fig3 as F
from medfc.common.papers import read_paper_numbers
from tests.helpers.figures import capture, drawn_texts, off_page, pdf_font_types, pdf_page_inches, smallest_font

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
PAPER = F.paper_fig3(read_paper_numbers(PAPERS))


def _fig3_table():
    rows = []
    values = {("class", "evidence"): {"precision": 70.0, "recall": 90.0, "f1": 78.8},
              ("class", "inconclusive"): {"precision": 0.0, "recall": 0.0, "f1": 0.0},
              ("class", "NEI"): {"precision": 85.0, "recall": 0.0, "f1": 0.0}}
    for (panel, group), metrics in values.items():
        for metric, v in metrics.items():
            rows.append({"model": "minilm", "panel": panel, "group": group, "n": 10, "metric": metric, "value": v,
                         "paper (BioBERT)": PAPER.get((panel, group, metric), "")})
    for panel, groups in (("test_type", {"Superiority": 62.0, "Non-inferiority": 0.0}),
                          ("disease", {"Eye Diseases": 100.0, "Neoplasms": 55.0})):
        for group, v in groups.items():
            for metric in ("accuracy", "macro_f1"):
                rows.append({"model": "minilm", "panel": panel, "group": group, "n": 7, "metric": metric, "value": v,
                             "paper (BioBERT)": PAPER.get((panel, group, metric), "")})
    return pd.DataFrame(rows)


def test_fig3_draws_the_paper_beside_ours_labels_no_zero_and_marks_empty_groups(monkeypatch):
    figs = capture(monkeypatch, plots)
    table = _fig3_table()
    table.loc[(table.panel == "class") & (table.group == "inconclusive"), "n"] = 0  # no test pair of that class
    F.plot_fig3(table, "unused", names={"minilm": "minilm (stands in for BioBERT)"})
    fig = figs[0]
    b, c, a = fig.axes[:3]
    texts = {ax: [t for t, _ in drawn_texts(ax)] for ax in (a, b, c)}
    assert all(t != "0" for ts in texts.values() for t in ts)  # zero values carry no label
    # (a): our four non-zero values (evidence P/R/F1, NEI P), the paper's four (NEI P/R, evidence P/R), hatched;
    # the class without test pairs has no bar of ours and says so
    assert sorted(t for t in texts[a] if t.isdigit()) == sorted(["70", "90", "79", "85", "93", "81", "73", "88"])
    assert "no test pairs\n(n = 0)" in texts[a]
    assert [t.get_text() for t in a.child_axes[0].get_xticklabels()] == ["evidence (n = 10)", "inconclusive (n = 0)", "NEI (n = 10)"]
    hatched = [p for p in a.patches if p.get_hatch()]
    assert sorted(round(p.get_height(), 1) for p in hatched) == [72.8, 81.1, 87.6, 92.9]
    # (b): the paper's Superiority macro-F1 (75.6) beside ours (62); Non-inferiority 0: a bar without a label
    assert sorted(texts[b]) == ["62", "76"]
    assert [round(p.get_width(), 1) for p in b.patches if p.get_hatch()] == [75.6]
    # (c): Eye Diseases 100 in the paper; Neoplasms has no paper value, so no hatched bar
    assert [round(p.get_width(), 1) for p in c.patches if p.get_hatch()] == [100.0]
    # the stand-in is named in the legend
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["minilm (stands in for BioBERT)", "paper (BioBERT)"]


def test_fig3_is_text_width_with_no_text_under_7pt_and_truetype_fonts(tmp_path):
    paths = F.plot_fig3(_fig3_table(), tmp_path / "fig3")
    pdf = next(p for p in paths if p.suffix == ".pdf")
    assert pdf_page_inches(pdf)[0] == 7.0 and pdf_page_inches(pdf)[1] <= 8.5
    assert "Type 3" not in pdf_font_types(pdf) and "Type3" not in pdf_font_types(pdf)


def test_fig3_smallest_font_and_many_groups_fit_a_page(monkeypatch):
    figs = capture(monkeypatch, plots)
    rows = [{"model": m, "panel": "disease", "group": f"Disease class number {i} with a long name", "n": 5, "metric": "macro_f1",
             "value": 50.0, "paper (BioBERT)": ""} for m in ("a", "b") for i in range(24)]
    F.plot_fig3(pd.concat([_fig3_table(), pd.DataFrame(rows)], ignore_index=True), "unused")
    fig = figs[0]
    assert fig.get_size_inches()[0] == 7.0 and fig.get_size_inches()[1] <= 8.5
    assert smallest_font(fig) >= 7 and off_page(fig) == []
    c = fig.axes[1]
    assert not [t for t, _ in drawn_texts(c) if t.isdigit()]  # too many groups for legible labels: left to the table
    assert "data table" in c.get_xlabel()
