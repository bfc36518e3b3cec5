"""The CliniFact export for ``datasets`` (medfc.clinifact.views, step clinifact.steps:export_views): three tiny
splits written in the test; the card's configs (the typed Parquet as the source view, ``label`` a ClassLabel whose
index is the release's code) and BigBio's entailment view of each split. The real ``datasets`` library loads the
demo's exports in tests/workflow/test_outputs_for_tools.py."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from medfc.clinifact.steps import export_views
from medfc.common.options import NoOptions

CARD = ("---\nlicense: mit\n---\n\n# CliniFact (rebuilt)\n\n- pairs: 3\n\n## Files and configs\n\n- `default`: the CSVs.\n\n"
        "## Dropped pairs by reason\n\nnone\n")


def test_the_card_declares_the_source_and_bigbio_views_with_the_three_splits(tmp_path):
    inputs = {"card": str(tmp_path / "dataset_card.md")}
    (tmp_path / "dataset_card.md").write_text(CARD)
    rows = {"train": [(7, "A beats B", "Abstract one.", 1), (9, "C beats D", "Abstract two.", 2)], "validation": [(3, "E beats F", "Three.", 0)],
            "test": [(4, "G beats H", "Four.", 2)]}
    for split, items in rows.items():
        table = pa.table({"index": [i for i, *_ in items], "claim": [c for _, c, _, _ in items], "article_abstract": [a for *_, a, _ in items],
                          "label": [lab for *_, lab in items], "pValues": [["0.01"] for _ in items]})
        pq.write_table(table, tmp_path / f"{split}_set.parquet")
        inputs[f"{split}_parquet"] = str(tmp_path / f"{split}_set.parquet")
    outputs = {"readme": str(tmp_path / "README.md"), **{f"bigbio_{s}": str(tmp_path / f"bigbio_te/{s}_set.parquet") for s in rows}}
    assert export_views(inputs, outputs, NoOptions()) == {"train": 2, "validation": 1, "test": 1}

    text = (tmp_path / "README.md").read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["clinifact_source", "clinifact_bigbio_te"]
    assert meta["configs"][0]["default"] is True and meta["configs"][0]["data_files"] == [
        {"split": "train", "path": "train_set.parquet"}, {"split": "validation", "path": "validation_set.parquet"},
        {"split": "test", "path": "test_set.parquet"}]
    assert meta["configs"][1]["data_files"][2] == {"split": "test", "path": "bigbio_te/test_set.parquet"}
    source = meta["dataset_info"][0]["features"]
    assert source == [{"name": "index", "dtype": "int64"}, {"name": "claim", "dtype": "string"}, {"name": "article_abstract", "dtype": "string"},
                      {"name": "label", "dtype": {"class_label": {"names": {"0": "inconclusive", "1": "evidence", "2": "not enough information"}}}},
                      {"name": "pValues", "list": "string"}]
    # the build card's own section on files and configs gives way to the configs; the rest and the licence stay
    body = text.split("---\n", 2)[2]
    assert "## Files and configs" not in body and "## Dropped pairs by reason\n\nnone\n" in body and "## Licence\n" in body
    assert body.startswith("\n# CliniFact (rebuilt)\n\n## Configs\n")
    assert pq.read_table(tmp_path / "bigbio_te/train_set.parquet").to_pylist() == [
        {"id": "7", "premise": "Abstract one.", "hypothesis": "A beats B", "label": "evidence"},
        {"id": "9", "premise": "Abstract two.", "hypothesis": "C beats D", "label": "not enough information"}]
    assert pq.read_table(tmp_path / "bigbio_te/validation_set.parquet").column("label").to_pylist() == ["inconclusive"]
