"""The HealthFC export for ``datasets`` (medfc.healthfc.views, step healthfc.steps:export): three claims in
two folds, written in the test; the card's configs and features as YAML, each fold's rows in the source view (with
its fold) and in BigBio's entailment view (premise: the gold evidence in English). The real ``datasets`` library
loads the demo's exports in tests/workflow/test_outputs_for_tools.py."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from medfc.common.options import NoOptions
from medfc.healthfc import views
from medfc.healthfc.steps import export

RECORDS = [
    {"id": "a#0", "claim_en": "Does A help?", "label": "SUPPORTED", "evidence_level": "high", "sentences_en": ["One.", " Two. ", "Three."],
     "evidence_ids": [1, 2], "small_effect": False},
    {"id": "a#1", "claim_en": "Does A harm?", "label": "NOT ENOUGH INFO", "evidence_level": None, "sentences_en": ["One."],
     "evidence_ids": [], "small_effect": True},
    {"id": "b#0", "claim_en": "Does B help?", "label": "REFUTED", "evidence_level": "conflicting", "sentences_en": ["Uno.", "Dos."],
     "evidence_ids": [0], "small_effect": False},
]
CARD = "---\npretty_name: x\n---\n\n# HealthFC (rebuilt) — dataset card\n\nBuilt in mode `crawl`.\n\nLicence: CC BY-NC-ND 4.0.\n"


def _dataset(tmp_path, records=RECORDS, folds=(("a#0", 0), ("a#1", 0), ("b#0", 1))):
    schema = pa.schema([("id", pa.large_string()), ("claim_en", pa.large_string()), ("label", pa.large_string()),
                        ("evidence_level", pa.large_string()), ("sentences_en", pa.list_(pa.string())), ("evidence_ids", pa.list_(pa.int64())),
                        ("small_effect", pa.bool_()), ("release_row", pa.float64()), ("explanation_en", pa.null())])
    rows = [{**r, "release_row": None if r["id"] == "a#1" else 3.0, "explanation_en": None} for r in records]  # as pandas writes them
    pq.write_table(pa.Table.from_pylist(rows, schema), tmp_path / "healthfc.parquet")
    (tmp_path / "folds.csv").write_text("id,fold\n" + "".join(f"{i},{f}\n" for i, f in folds))
    (tmp_path / "dataset_card.md").write_text(CARD)
    return {"parquet": str(tmp_path / "healthfc.parquet"), "folds": str(tmp_path / "folds.csv")}


def _views(tmp_path, n_folds=2):
    return {view: [str(tmp_path / f"views/{view}/fold_{k}.parquet") for k in range(n_folds)] for view in ("source", "bigbio_te")}


def _export(tmp_path, **kwargs):
    """The step: every fold's views, then the card; and each fold's counts as the export gives them."""
    inputs, files = _dataset(tmp_path, **kwargs), _views(tmp_path)
    card = export({**inputs, "card": str(tmp_path / "dataset_card.md")},
                  {"source": files["source"], "bigbio": files["bigbio_te"], "readme": str(tmp_path / "README.md")}, NoOptions())
    counts = [views.export_fold(inputs["parquet"], inputs["folds"], k, files["source"][k], files["bigbio_te"][k]) for k in range(2)]
    return counts, card


def test_the_card_declares_every_config_with_its_features_and_the_views_hold_each_fold(tmp_path):
    counts, card = _export(tmp_path)
    assert counts == [{"claims": 2, "without_gold_evidence": 1}, {"claims": 1, "without_gold_evidence": 0}]
    assert card == {"fold_0": 2, "fold_1": 1, "without_gold_evidence": 1}
    text = (tmp_path / "README.md").read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert (meta["license"], meta["language"], meta["size_categories"]) == ("cc-by-nc-nd-4.0", ["de", "en"], ["n<1K"])
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert list(configs) == ["healthfc_source", "healthfc_bigbio_te", "healthfc_fold0_source", "healthfc_fold0_bigbio_te",
                             "healthfc_fold1_source", "healthfc_fold1_bigbio_te"]
    assert configs["healthfc_source"]["default"] is True and "default" not in configs["healthfc_bigbio_te"]
    assert configs["healthfc_source"]["data_files"] == [{"split": "train", "path": ["views/source/fold_0.parquet", "views/source/fold_1.parquet"]}]
    assert configs["healthfc_fold1_bigbio_te"]["data_files"] == [{"split": "train", "path": "views/bigbio_te/fold_0.parquet"},
                                                                 {"split": "test", "path": "views/bigbio_te/fold_1.parquet"}]
    features = {i["config_name"]: i["features"] for i in meta["dataset_info"]}
    assert set(features) == set(configs)
    assert features["healthfc_source"] == [
        {"name": "id", "dtype": "string"}, {"name": "claim_en", "dtype": "string"},
        {"name": "label", "dtype": {"class_label": {"names": {"0": "SUPPORTED", "1": "NOT ENOUGH INFO", "2": "REFUTED"}}}},
        {"name": "evidence_level", "dtype": {"class_label": {"names": {"0": "high", "1": "moderate", "2": "low", "3": "insufficient",
                                                                       "4": "conflicting"}}}},
        {"name": "sentences_en", "list": "string"}, {"name": "evidence_ids", "list": "int64"}, {"name": "small_effect", "dtype": "bool"},
        {"name": "release_row", "dtype": "int64"}, {"name": "explanation_en", "dtype": "string"},  # the record's types, not pandas'
        {"name": "fold", "dtype": "int64"}]
    assert features["healthfc_fold0_bigbio_te"] == [{"name": n, "dtype": "string"} for n in ("id", "premise", "hypothesis", "label")]
    # the card's text: the build card's title, then the configs, then the rest of it (its licence kept)
    body = text.split("---\n", 2)[2]
    assert body.startswith("\n# HealthFC (rebuilt) — dataset card\n\n## Configs\n")
    assert "| `healthfc_fold0_source` | `train`, `test` | 1, 2 |" in body and body.rstrip().endswith("Licence: CC BY-NC-ND 4.0.")

    source0 = pq.read_table(tmp_path / "views/source/fold_0.parquet")
    assert source0.column("id").to_pylist() == ["a#0", "a#1"] and source0.column("fold").to_pylist() == [0, 0]
    assert source0.column("release_row").to_pylist() == [3, None]
    assert source0.schema.field("id").type == pa.string() and source0.schema.metadata is None
    assert pq.read_table(tmp_path / "views/bigbio_te/fold_0.parquet").to_pylist() == [
        {"id": "a#0", "premise": "Two. Three.", "hypothesis": "Does A help?", "label": "SUPPORTED"},
        {"id": "a#1", "premise": "", "hypothesis": "Does A harm?", "label": "NOT ENOUGH INFO"}]
    assert pq.read_table(tmp_path / "views/bigbio_te/fold_1.parquet").to_pylist() == [
        {"id": "b#0", "premise": "Uno.", "hypothesis": "Does B help?", "label": "REFUTED"}]


def test_a_label_outside_its_names_or_a_claim_without_a_fold_or_an_empty_fold_stops_the_export(tmp_path):
    def fold(k, **kwargs):
        inputs = _dataset(tmp_path, **kwargs)
        return views.export_fold(inputs["parquet"], inputs["folds"], k, str(tmp_path / "s.parquet"), str(tmp_path / "b.parquet"))

    with pytest.raises(ValueError, match=r"column 'label' holds \['MOSTLY TRUE'\], not among its class names"):
        fold(0, records=[{**RECORDS[0], "label": "MOSTLY TRUE"}], folds=(("a#0", 0),))
    with pytest.raises(ValueError, match=r"1 claim\(s\) of the dataset have no fold in folds.csv \(e.g. 'a#1'\)"):
        fold(0, folds=(("a#0", 0), ("b#0", 1)))
    with pytest.raises(ValueError, match="fold 2 holds no claim: folds.csv has 2 folds"):
        fold(2)
