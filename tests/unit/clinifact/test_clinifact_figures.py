"""CliniFact Fig. 2 as a reader sees it: what the bars add up to."""

import pandas as pd

from medfc.clinifact import stats
from tests.helpers.figures import capture, drawn_texts


def test_fig2_says_a_pair_counts_in_each_of_its_disease_classes(monkeypatch):
    figs = capture(monkeypatch, stats)
    df = pd.DataFrame({"nctId": ["N1", "N2", "N3"]})
    classes = {"N1": ["Neoplasms", "Eye Diseases"], "N2": ["Neoplasms"], "N3": []}
    table = stats.disease_class_table(df, classes)
    assert table.to_dict("records") == [{"disease_class": "Neoplasms", "claims": 2},
                                        {"disease_class": "(no class)", "claims": 1},
                                        {"disease_class": "Eye Diseases", "claims": 1}]
    stats.plot_disease_classes(table, "unused", n_pairs=len(df))
    texts = [t for t, _ in drawn_texts(figs[0].axes[0])]
    assert "A pair counts once in each of its trial's disease classes: the bars add up to 4 for 3 pairs." in texts
    assert sorted(t for t in texts if t.isdigit()) == ["1", "1", "2"]
