"""CliniFact Fig. 3's numbers (per class, per test type, per disease class) and its step."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


from medfc.tables import fig3 as F
from medfc.tables import steps
from medfc.common.papers import read_paper_numbers
from tests.helpers.config import call_step
from tests.helpers.experiment_data import clinifact_test_predictions

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
PAPER = F.paper_fig3(read_paper_numbers(PAPERS))


def test_fig3_with_and_without_studies(tmp_path, clinifact_data):
    test, preds = clinifact_test_predictions(tmp_path, clinifact_data["test"])
    entries = [{"model": "bio", "system": "discriminative"}]
    df, notes = F.fig3_table([str(preds)], entries, clinifact_data["test"], None, ("All", "Rare"), PAPER)
    assert "panel (c) skipped" in notes[0] and set(df["panel"]) == {"class", "test_type"}
    assert set(df[df.panel == "test_type"]["group"]) == {"Superiority", "Non-inferiority"}  # the paper's two are ours too
    studies = tmp_path / "studies.jsonl.gz"
    with gzip.open(studies, "wt", encoding="utf-8") as fh:
        for k, (_, r) in enumerate(test.iterrows()):
            branches = [{"abbrev": "All", "name": "All Conditions"}, {"abbrev": "BC10" if k % 2 else "BC11", "name": "Eye Diseases" if k % 2 else "Heart Diseases"}]
            fh.write(json.dumps({"protocolSection": {"identificationModule": {"nctId": r["nctId"]}},
                                 "derivedSection": {"conditionBrowseModule": {"browseBranches": branches}}}) + "\n")
    df, notes = F.fig3_table([str(preds)], entries, clinifact_data["test"], studies, ("All", "Rare"), PAPER)
    assert notes == []
    disease = df[(df.panel == "disease") & (df.metric == "macro_f1")]
    ours = disease[disease["n"] > 0]
    assert set(ours["group"]) == {"Eye Diseases", "Heart Diseases"} and set(ours["n"]) == {3}
    assert disease[disease.group == "Eye Diseases"]["paper (BioBERT)"].iloc[0] == 100.0
    # a group the paper gives a value for and our test split lacks: n = 0, no value of ours, the paper's beside it
    empty = disease[disease["n"] == 0].set_index("group")
    assert empty["paper (BioBERT)"].to_dict() == {"Hemic and Lymphatic Diseases": 100.0, "Otorhinolaryngologic Diseases": 45.0}
    assert set(empty["value"]) == {""}

    out = {"png": str(tmp_path / "fig" / "f.png"), "pdf": str(tmp_path / "fig" / "f.pdf"),
           "csv": str(tmp_path / "t" / "f.csv"), "md": str(tmp_path / "t" / "f.md"), "tex": str(tmp_path / "t" / "f.tex")}
    call_step(steps.clinifact_fig3, {"predictions": [str(preds)], "test": str(clinifact_data["test"]), "studies": str(studies),
                                     "papers": str(PAPERS)}, out, {"entries": entries, "excluded_branches": ["All", "Rare"], "notes": []})
    for p in out.values():
        assert Path(p).stat().st_size > 0
    assert "Fig. 3" in Path(out["md"]).read_text() and "7.0 in wide (text width)" in Path(out["md"]).read_text()


def test_a_stand_in_is_named_for_the_run_it_stands_for():
    entries = [{"model": "tfidf", "system": "discriminative", "stands_for": {"model": "biobert", "system": "discriminative"}},
               {"model": "gbm", "system": "discriminative", "stands_for": {"model": "openbiollm-70b", "system": "fine_tuned"}},
               {"model": "biobert", "system": "discriminative"}]
    assert F.legend_names(entries, read_paper_numbers(PAPERS)) == {
        "tfidf": "tfidf (stands in for BioBERT)", "gbm": "gbm (stands in for OpenBioLLM-70B, fine-tuned)", "biobert": "biobert"}


def test_statistical_test_type_parsing():
    assert F.statistical_test_type("['Superiority or Other']") == "Superiority or Other"
    assert F.statistical_test_type("['NON_INFERIORITY', 'EQUIVALENCE']") == "Equivalence / Non-inferiority"
    assert F.statistical_test_type("") == "Unknown"
