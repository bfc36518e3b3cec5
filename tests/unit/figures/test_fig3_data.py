"""CliniFact Fig. 3's numbers (per class, per test type, per disease class) and its step."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


from medfc.figures import clinifact as F
from medfc.figures import steps
from medfc.tables.papers import clinifact_fig3, paper_numbers
from tests.helpers.config import call_step
from tests.helpers.experiment_data import clinifact_test_predictions

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
PAPER = clinifact_fig3(paper_numbers(PAPERS))


def test_fig3_with_and_without_studies(tmp_path, clinifact_data):
    test, preds = clinifact_test_predictions(tmp_path, clinifact_data["test"])
    entries = [{"model": "bio", "system": "discriminative"}]
    df, notes = F.fig3_table([str(preds)], entries, clinifact_data["test"], None, ("All", "Rare"), PAPER)
    assert "panel (c) skipped" in notes[0] and set(df["panel"]) == {"class", "test_type"}
    assert set(df[df.panel == "test_type"]["group"]) == {"Superiority", "Non-inferiority"}
    studies = tmp_path / "studies.jsonl.gz"
    with gzip.open(studies, "wt", encoding="utf-8") as fh:
        for k, (_, r) in enumerate(test.iterrows()):
            branches = [{"abbrev": "All", "name": "All Conditions"}, {"abbrev": "BC10" if k % 2 else "BC11", "name": "Eye Diseases" if k % 2 else "Heart Diseases"}]
            fh.write(json.dumps({"protocolSection": {"identificationModule": {"nctId": r["nctId"]}},
                                 "derivedSection": {"conditionBrowseModule": {"browseBranches": branches}}}) + "\n")
    df, notes = F.fig3_table([str(preds)], entries, clinifact_data["test"], studies, ("All", "Rare"), PAPER)
    assert notes == []
    disease = df[(df.panel == "disease") & (df.metric == "macro_f1")]
    assert set(disease["group"]) == {"Eye Diseases", "Heart Diseases"} and set(disease["n"]) == {3}
    assert disease[disease.group == "Eye Diseases"]["paper (BioBERT)"].iloc[0] == 100.0

    out = {"png": str(tmp_path / "fig" / "f.png"), "pdf": str(tmp_path / "fig" / "f.pdf"),
           "csv": str(tmp_path / "t" / "f.csv"), "md": str(tmp_path / "t" / "f.md"), "tex": str(tmp_path / "t" / "f.tex")}
    call_step(steps.clinifact_fig3, {"predictions": [str(preds)], "test": str(clinifact_data["test"]), "studies": str(studies),
                                     "papers": str(PAPERS)}, out, {"entries": entries, "excluded_branches": ["All", "Rare"], "notes": []})
    for p in out.values():
        assert Path(p).stat().st_size > 0
    assert "Fig. 3" in Path(out["md"]).read_text()


def test_statistical_test_type_parsing():
    assert F.statistical_test_type("['Superiority or Other']") == "Superiority or Other"
    assert F.statistical_test_type("['NON_INFERIORITY', 'EQUIVALENCE']") == "Equivalence / Non-inferiority"
    assert F.statistical_test_type("") == "Unknown"
