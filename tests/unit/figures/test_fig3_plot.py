"""CliniFact Fig. 3 as a reader sees it: labels, the paper's values beside ours, bar sizes."""

from pathlib import Path

import pandas as pd

import medfc.common.plots as plots
from medfc.figures import clinifact as F
from medfc.tables.papers import clinifact_fig3, paper_numbers
from tests.helpers.figures import capture, drawn_texts

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
PAPER = clinifact_fig3(paper_numbers(PAPERS))


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


def test_fig3_draws_the_paper_beside_ours_labels_no_zero_and_keeps_bars_thin(monkeypatch):
    figs = capture(monkeypatch, plots)
    F.plot_fig3(_fig3_table(), "unused")
    a, b, c = figs[0].axes[:3]
    texts = {ax: [t for t, _ in drawn_texts(ax)] for ax in (a, b, c)}
    assert all(t != "0" for ts in texts.values() for t in ts)  # zero values carry no label
    # (a): our five non-zero values, and the paper's four per-class values (NEI P/R, evidence P/R), hatched
    assert sorted(texts[a]) == sorted(["70", "90", "79", "85", "93", "81", "73", "88"])
    hatched = [p for p in a.patches if p.get_hatch()]
    assert sorted(round(p.get_height(), 1) for p in hatched) == [72.8, 81.1, 87.6, 92.9]
    # (b): the paper's Superiority macro-F1 (75.6) beside ours (62); Non-inferiority 0: a bar without a label
    assert sorted(texts[b]) == ["62", "76"]
    assert [round(p.get_width(), 1) for p in b.patches if p.get_hatch()] == [75.6]
    # (c): Eye Diseases 100 in the paper; Neoplasms has no paper value, so no hatched bar
    assert [round(p.get_width(), 1) for p in c.patches if p.get_hatch()] == [100.0]
    # sane bar sizes: at most 0.3 of a category, and panels with two groups still span five slots
    for ax in (b, c):
        assert max(p.get_height() for p in ax.patches) <= 0.3
        lo, hi = sorted(ax.get_ylim())
        assert hi - lo >= 5
    assert max(p.get_width() for p in a.patches) <= 0.3
    legend = [t.get_text() for t in figs[0].legends[0].get_texts()]
    assert legend == ["minilm", "paper (BioBERT)"]
