"""The import of a dataset declared by ``datasets.<name>`` (step medfc.datasets.steps:import_dataset), each entry
validated and typed by the plan as the workflow's rule gets it: CSV, TSV, JSON, JSONL, Parquet files and
``save_to_disk`` folders; fields and labels mapped, rows skipped or dropped with their reasons, a missing field or an
unmapped label one line; the splits given (renamed) or made stratified with the seed; a URL's files downloaded once
and pinned by SHA-256, a Hugging Face repository read at a commit (a local server stands for both); the card folder
as ``datasets.load_dataset`` reads it."""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medfc.common.io import InputFileError
from medfc.common.pinning import ReleaseChanged
from medfc.datasets.options import ImportOptions
from medfc.datasets.sources import source_files
from medfc.datasets.steps import import_dataset
from medfc.datasets.tables import read_table
from medfc.config.validate import ConfigError, plan_for
from tests.helpers.config import SCHEMA, defaults
from tests.helpers.http_servers import reply, serving

SPLITS = ("train", "validation", "test")
HEALTHVER_LABELS = {"Supports": "SUPPORTED", "Refutes": "REFUTED", "Neutral": "NOT ENOUGH INFORMATION"}
FIELDS = {"id": "id", "claim": "claim", "evidence": "evidence", "label": "label"}
COMMIT = "b20ac99ceed62f5264a319fa25a854df1668d85b"


def options(tmp_path: Path, name: str = "toy", **entry) -> ImportOptions:
    """The import's options of one ``datasets.<name>`` entry, as the plan builds them (schema, defaults, checks)."""
    cfg = defaults()
    cfg["stages"] = {stage: False for stage in cfg["stages"]}
    cfg["cache_dir"] = str(tmp_path / "cache")
    cfg["datasets"] = copy.deepcopy({name: {"fields": FIELDS, "labels": HEALTHVER_LABELS, **entry}})  # the plan fills in defaults
    return plan_for(cfg, SCHEMA).job_options("dataset_import", {"dataset": name})


def outputs(folder: Path) -> dict[str, str]:
    """The rule's outputs (workflow/rules/datasets.smk) below ``folder``."""
    out = {split: str(folder / f"{split}.jsonl") for split in SPLITS}
    out |= {"report": str(folder / "report.json"), "readme": str(folder / "card" / "README.md")}
    for split in SPLITS:
        out[f"source_{split}"] = str(folder / "card" / "source" / f"{split}.parquet")
        out[f"bigbio_{split}"] = str(folder / "card" / "bigbio_te" / f"{split}.parquet")
    return out


def run(tmp_path: Path, opts: ImportOptions, folder: str = "out") -> tuple[dict[str, list[dict]], dict]:
    """Import; returns each split's records and the report."""
    out = outputs(tmp_path / folder)
    import_dataset({}, out, opts)
    splits = {s: [json.loads(line) for line in Path(out[s]).read_text(encoding="utf-8").splitlines()] for s in SPLITS}
    return splits, json.loads(Path(out["report"]).read_text(encoding="utf-8"))


def write_csv(path: Path, rows: list[dict], delimiter: str = ",") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


def rows(n: int, prefix: str = "", labels: tuple[str, ...] = ("Supports", "Refutes", "Neutral")) -> list[dict]:
    return [{"id": f"{prefix}{i}", "claim": f"Claim {prefix}{i}.", "evidence": f"Evidence {i}.", "label": labels[i % len(labels)]}
            for i in range(n)]


# ---------------------------------------------------------------------------------------------------- reading

def test_every_format_reads_the_same_rows(tmp_path):
    data = [{"id": "1", "claim": "A cures B.", "evidence": "It does not.", "label": "Refutes"},
            {"id": "2", "claim": "C helps D.", "evidence": "Trials agree.", "label": "Supports"}]
    files = {".csv": write_csv(tmp_path / "t.csv", data), ".tsv": write_csv(tmp_path / "t.tsv", data, "\t")}
    (tmp_path / "a.json").write_text(json.dumps(data))
    (tmp_path / "d.json").write_text(json.dumps({"data": data, "version": 1}))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data) + "\n")
    pq.write_table(pa.Table.from_pylist(data), tmp_path / "t.parquet")
    files |= {"array": tmp_path / "a.json", "data": tmp_path / "d.json", ".jsonl": tmp_path / "t.jsonl", ".parquet": tmp_path / "t.parquet"}
    for kind, path in files.items():
        table = read_table(path)
        assert table.rows == data and table.columns == ["id", "claim", "evidence", "label"], kind
    (tmp_path / "bad.csv").write_text("id,claim\n1,a\n2,b,c\n")
    with pytest.raises(InputFileError, match=r"bad.csv, line 3: 3 fields, the header has 2$"):
        read_table(tmp_path / "bad.csv")
    (tmp_path / "t.xlsx").write_bytes(b"")
    with pytest.raises(InputFileError, match=r"no data format for \.xlsx \(read: \.csv, \.tsv, \.json, \.jsonl, \.ndjson, \.parquet\)"):
        read_table(tmp_path / "t.xlsx")


def test_json_and_jsonl_files_with_a_bom_are_read(tmp_path):
    data = [{"id": "1", "claim": "a\u2028b", "evidence": "e", "label": "Supports"}]
    (tmp_path / "d.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(data).encode())
    (tmp_path / "d.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps(data[0], ensure_ascii=False).encode() + b"\n\n")
    assert read_table(tmp_path / "d.json").rows == data and read_table(tmp_path / "d.jsonl").rows == data
    (tmp_path / "bad.jsonl").write_text('{"id": "1"}\n{"id": \n')
    with pytest.raises(InputFileError, match=r"bad.jsonl, line 2: not valid JSON at column 8"):
        read_table(tmp_path / "bad.jsonl")


def test_a_tsv_file_drops_its_bom_and_names_the_line_a_broken_record_starts_on(tmp_path):
    (tmp_path / "t.tsv").write_bytes("\ufeffid\tclaim\n1\t\"two\nlines\"\n2\tb\n".encode())
    assert read_table(tmp_path / "t.tsv").rows == [{"id": "1", "claim": "two\nlines"}, {"id": "2", "claim": "b"}]
    (tmp_path / "bad.tsv").write_text('id\tclaim\n1\ta\n2\t"b\nc\n')
    with pytest.raises(InputFileError, match=r"bad.tsv, line 3: broken CSV quoting: unexpected end of data$"):
        read_table(tmp_path / "bad.tsv")


def test_a_csv_header_naming_a_column_twice_stops_naming_it_and_the_file(tmp_path):
    (tmp_path / "d.csv").write_text("id,claim,evidence,claim,label\n1,a,e,b,Supports\n")
    with pytest.raises(InputFileError) as err:
        read_table(tmp_path / "d.csv")
    assert str(err.value) == f"{tmp_path / 'd.csv'}, line 1: the header names the column 'claim' more than once"


def test_a_csv_field_longer_than_the_csv_modules_default_limit_is_read(tmp_path):
    import csv as csv_module

    before = csv_module.field_size_limit()
    text = "word " * 40_000  # 200,000 characters: over the csv module's default 131,072
    write_csv(tmp_path / "long.csv", [{"id": "1", "claim": "c", "evidence": text, "label": "Supports"}])
    assert read_table(tmp_path / "long.csv").rows[0]["evidence"] == text
    assert csv_module.field_size_limit() == before  # the process-wide setting is as it was


def test_another_csv_error_is_reported_with_its_own_message(tmp_path, monkeypatch):
    from medfc.datasets import tables

    monkeypatch.setattr(tables, "CSV_FIELD_LIMIT", 10)
    (tmp_path / "d.csv").write_text("id,claim\n1,short\n2,a claim of many words\n")
    with pytest.raises(InputFileError) as err:
        read_table(tmp_path / "d.csv")
    assert str(err.value) == f"{tmp_path / 'd.csv'}, line 3: unreadable CSV: field larger than field limit (10)"


def test_a_csv_folder_with_its_splits_renamed(tmp_path):
    """HealthVer's layout: train, dev and test files; dev is the run's validation split, the ids are the data's."""
    for key, n, prefix in (("train", 9, "t"), ("dev", 3, "d"), ("test", 3, "s")):
        write_csv(tmp_path / "hv" / f"healthver_{key}.csv", rows(n, prefix))
    opts = options(tmp_path, source={"path": str(tmp_path / "hv"), "files": {k: f"healthver_{k}.csv" for k in ("train", "dev", "test")}},
                   splits={"names": {"dev": "validation"}})
    splits, report = run(tmp_path, opts)
    assert [r["id"] for r in splits["validation"]] == ["d0", "d1", "d2"]
    assert splits["train"][1] == {"id": "t1", "claim": "Claim t1.", "evidence": "Evidence 1.", "label": "REFUTED"}
    assert list(splits["train"][0]) == ["claim", "evidence", "id", "label"]  # no title field: no title
    assert report["splits"]["validation"] == {"rows": 3, "from": "given", "classes": {"SUPPORTED": 1, "REFUTED": 1, "NOT ENOUGH INFORMATION": 1}}
    assert report["classes"] == ["SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"]
    assert set(report["source"]["files"]) == {"train", "dev", "test"} and report["source"]["kind"] == "path"
    assert report["source"]["files"]["dev"]["location"] == str(tmp_path / "hv" / "healthver_dev.csv")


def test_fields_labels_and_skips_of_a_jsonl_table(tmp_path):
    """Evidence as a list of sentences, a title, numeric labels (1.0 is "1"), a label mapped to null dropped and
    counted, empty claims and evidence and repeated ids skipped with their reasons; no id field: <split>-<n>."""
    data = [{"text": "A cures B.", "sents": ["First  one.", " Second. ", ""], "head": "Paper A", "y": 1.0},
            {"text": "C helps D.", "sents": ["Only one."], "head": "Paper C", "y": 0},
            {"text": "", "sents": ["x"], "head": "", "y": 1},
            {"text": "E harms F.", "sents": [], "head": "", "y": 0},
            {"text": "G is H.", "sents": ["y"], "head": "", "y": 2}]
    data += [{"text": f"Claim {i}.", "sents": [f"Sentence {i}."], "head": "", "y": i % 2} for i in range(18)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    opts = options(tmp_path, source={"path": str(tmp_path / "d.jsonl")}, labels={1: "SUPPORTED", 0: "REFUTED", 2: None},
                   fields={"claim": "text", "evidence": "sents", "title": "head", "label": "y"})
    assert opts.labels == {"1": "SUPPORTED", "0": "REFUTED", "2": None}
    splits, report = run(tmp_path, opts)
    kept = {r["id"]: r for s in SPLITS for r in splits[s]}
    assert kept["data-1"] == {"id": "data-1", "claim": "A cures B.", "title": "Paper A", "evidence": "First  one. Second.", "label": "SUPPORTED"}
    assert kept["data-2"] == {"id": "data-2", "claim": "C helps D.", "title": "Paper C", "evidence": "Only one.", "label": "REFUTED"}
    assert sorted(kept) == sorted(f"data-{n}" for n in (1, 2, *range(6, 24)))
    assert report["skipped_by_reason"] == {"empty_claim": 1, "empty_evidence": 1} and report["excluded_by_reason"] == {"label_dropped": 1}
    assert report["counts"]["read_data"] == 23 and report["counts"]["kept_data"] == 20
    card = (tmp_path / "out" / "card" / "README.md").read_text()
    assert "empty_claim: 1, empty_evidence: 1, label_dropped: 1" in card


def test_duplicate_and_empty_ids_are_skipped(tmp_path):
    data = rows(30)
    data[2]["id"], data[3]["id"] = "0", ""
    write_csv(tmp_path / "d.csv", data)
    splits, report = run(tmp_path, options(tmp_path, source={"path": str(tmp_path / "d.csv")}))
    assert sorted(r["id"] for s in SPLITS for r in splits[s]) == sorted(r["id"] for i, r in enumerate(data) if i not in (2, 3))
    assert report["skipped_by_reason"] == {"duplicate_id": 1, "missing_id": 1}
    assert {s["id"] for s in report["skipped"]} == {"0", "data row 4"}


def test_the_unmapped_label_values_of_every_file_stop_once_in_one_line(tmp_path):
    train, test = rows(6, "t"), rows(3, "s")
    train[1]["label"] = train[4]["label"] = test[0]["label"] = "Partially"
    train[2]["label"] = "Mostly"
    write_csv(tmp_path / "tr.csv", train)
    write_csv(tmp_path / "te.csv", test)
    with pytest.raises(ValueError) as err:
        run(tmp_path, options(tmp_path, "hv", source={"path": str(tmp_path), "files": {"train": "tr.csv", "test": "te.csv"}}))
    assert str(err.value) == (f"config: datasets.hv.labels does not list 2 label values of the data: 'Partially' (3 rows: "
                              f"{tmp_path / 'tr.csv'}, {tmp_path / 'te.csv'}); 'Mostly' (1 row: {tmp_path / 'tr.csv'}); map each "
                              "to a class, or to null to leave its rows out (listed: 'Supports', 'Refutes', 'Neutral')")


def test_a_row_without_a_label_is_skipped_unless_labels_maps_the_empty_value(tmp_path):
    data = [{"id": f"r{i}", "claim": f"Claim {i}.", "evidence": f"Evidence {i}.", "label": ["Supports", "Refutes"][i % 2]} for i in range(20)]
    data[0]["label"], data[1]["label"], data[2]["label"] = None, float("nan"), " "
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))  # NaN as JSON's NaN
    splits, report = run(tmp_path, options(tmp_path, "hv", source={"path": str(tmp_path / "d.jsonl")}))
    assert sum(len(splits[s]) for s in SPLITS) == 17
    assert report["skipped_by_reason"] == {"missing_label": 3} and {s["id"] for s in report["skipped"]} == {"r0", "r1", "r2"}
    labels = {**HEALTHVER_LABELS, "": "NOT ENOUGH INFORMATION"}
    splits, report = run(tmp_path, options(tmp_path, "hv", source={"path": str(tmp_path / "d.jsonl")}, labels=labels), "mapped")
    assert sum(len(splits[s]) for s in SPLITS) == 20 and report["skipped_by_reason"] == {}
    assert sum(report["splits"][s]["classes"]["NOT ENOUGH INFORMATION"] for s in SPLITS) == 3


def test_number_like_label_text_and_number_keys_are_the_same_value(tmp_path):
    """A CSV's "1.0" is the YAML key 1.0 or 1; its "0" the key "0.0"; its "2.00" the key 2."""
    data = [{"id": str(i), "claim": f"Claim {i}.", "evidence": f"Evidence {i}.", "label": ["1.0", "0", "2.00"][i % 3]} for i in range(30)]
    write_csv(tmp_path / "d.csv", data)
    opts = options(tmp_path, source={"path": str(tmp_path / "d.csv")}, labels={1.0: "SUPPORTED", "0.0": "REFUTED", 2: None})
    assert opts.labels == {"1": "SUPPORTED", "0": "REFUTED", "2": None}
    splits, report = run(tmp_path, opts)
    assert Counter(r["label"] for s in SPLITS for r in splits[s]) == {"SUPPORTED": 10, "REFUTED": 10}
    assert report["excluded_by_reason"] == {"label_dropped": 10}


def test_a_csv_evidence_cell_holding_a_json_list_of_strings_is_read_as_that_list(tmp_path):
    data = rows(30)
    data[0]["evidence"] = json.dumps(["First  one.", " Second.", ""])
    data[1]["evidence"] = "[1] Smith et al. found it."  # not JSON: kept as it is
    data[2]["evidence"] = '[{"text": "an object"}]'  # a JSON list of objects: kept as it is
    for name, delimiter in (("d.csv", ","), ("d.tsv", "\t")):
        write_csv(tmp_path / name, data, delimiter)
        splits, _ = run(tmp_path, options(tmp_path, source={"path": str(tmp_path / name)}), f"out-{name}")
        evidence = {r["id"]: r["evidence"] for s in SPLITS for r in splits[s]}
        assert evidence["0"] == "First  one. Second." and evidence["1"] == "[1] Smith et al. found it."
        assert evidence["2"] == '[{"text": "an object"}]'


@pytest.mark.parametrize(("role", "value", "kind"), [
    ("evidence", [{"text": "a sentence"}], "list of dict"),
    ("evidence", {"text": "a sentence"}, "dict"),
    ("claim", ["A cures B."], "list of str"),
    ("label", {"name": "Supports"}, "dict"),
])
def test_a_value_that_is_not_text_stops_in_one_line_naming_the_field_its_type_the_file_and_the_key(tmp_path, role, value, kind):
    data = rows(6)
    data[4][role] = value
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    with pytest.raises(InputFileError) as err:
        run(tmp_path, options(tmp_path, "hv", source={"path": str(tmp_path / "d.jsonl")}))
    read = "text, a number or a list of texts" if role == "evidence" else "text or a number"
    assert str(err.value) == f"{tmp_path / 'd.jsonl'}: row 5: field {role!r} (datasets.hv.fields.{role}) holds a {kind}; read is {read}"


def test_ids_are_kept_once_across_the_splits_and_pairs_once_within_a_split(tmp_path):
    """A later split's row repeating an earlier split's id is skipped, naming both splits; a pair repeated in train, which
    the validation split is made of, is skipped (the first row kept), so a made split cannot share a pair with train; the
    given test split stays whole: its pair that train holds, and its own repeated pair, are kept and counted."""
    train, test = rows(30, "t"), rows(7, "s")
    train[5] = {**train[4], "id": "t-again"}  # the pair of t4
    test[0]["id"] = "t7"  # an id of train
    test[1] = {**train[9], "id": "s-pair"}  # a pair of train
    test[6] = {**test[5], "id": "s-twice"}  # a pair test repeats
    write_csv(tmp_path / "tr.csv", train)
    write_csv(tmp_path / "te.csv", test)
    opts = options(tmp_path, "hv", source={"path": str(tmp_path), "files": {"test": "te.csv", "train": "tr.csv"}})  # train read first
    splits, report = run(tmp_path, opts)
    assert report["skipped_by_reason"] == {"duplicate_id": 1, "duplicate_row": 1}
    details = {s["id"]: s["detail"] for s in report["skipped"]}
    assert details == {"t-again": f"{tmp_path / 'tr.csv'}, row 6 (train split): the claim and evidence of t4",
                       "t7": f"{tmp_path / 'te.csv'}, row 1 (test split): the id of a row of the train split"}
    assert report["counts"]["overlap_test_train"] == 1 and report["counts"]["repeated_pairs_test"] == 1
    assert {"s-pair", "s-twice"} <= {r["id"] for r in splits["test"]} and len(splits["test"]) == 6
    pairs = {s: [(r["claim"], r["evidence"]) for r in splits[s]] for s in SPLITS}
    assert len(pairs["train"]) == len(set(pairs["train"])) and not set(pairs["train"]) & set(pairs["validation"])
    assert sum(map(len, pairs.values())) == 35


def test_an_empty_split_stops_in_one_line_and_a_class_missing_from_train_is_counted(tmp_path, caplog):
    write_csv(tmp_path / "small.csv", rows(3))
    with pytest.raises(ValueError) as err:
        run(tmp_path, options(tmp_path, "hv", source={"path": str(tmp_path / "small.csv")}))
    assert str(err.value) == ("config: datasets.hv.splits: the validation and test splits are empty: the rows kept per class are "
                              "SUPPORTED 1, REFUTED 1, NOT ENOUGH INFORMATION 1, and a split made from train takes round(share × a "
                              "class's rows) of each class (test_size 0.2, then validation_size 0.1 of what is left); give more "
                              "rows, or larger shares")
    write_csv(tmp_path / "tr.csv", rows(20, "t", ("Supports", "Refutes")))
    write_csv(tmp_path / "te.csv", rows(3, "s"))
    with caplog.at_level("WARNING", logger="medfc.datasets.steps"):
        splits, report = run(tmp_path, options(tmp_path, "hv", source={"path": str(tmp_path), "files": {"train": "tr.csv", "test": "te.csv"}}))
    assert report["counts"]["classes_absent_from_train"] == 1 and report["splits"]["train"]["classes"]["NOT ENOUGH INFORMATION"] == 0
    assert "datasets.hv: the train split has no row of the class NOT ENOUGH INFORMATION" in caplog.text


def test_a_missing_field_stops_in_one_line_naming_it_the_file_and_its_fields(tmp_path):
    write_csv(tmp_path / "d.csv", rows(3))
    opts = options(tmp_path, "hv", source={"path": str(tmp_path / "d.csv")}, fields={**FIELDS, "claim": "statement"})
    with pytest.raises(InputFileError) as err:
        run(tmp_path, opts)
    assert str(err.value) == (f"{tmp_path / 'd.csv'}: no field 'statement' (datasets.hv.fields.claim); the file's fields: "
                              "id, claim, evidence, label")


def test_save_to_disk_folders_are_read_by_split(tmp_path):
    import datasets

    cols = lambda n, p: {k: [r[k] for r in rows(n, p)] for k in ("id", "claim", "evidence", "label")}  # noqa: E731
    datasets.DatasetDict({"train": datasets.Dataset.from_dict(cols(10, "t")), "dev": datasets.Dataset.from_dict(cols(3, "d")),
                          "test": datasets.Dataset.from_dict(cols(4, "s"))}).save_to_disk(str(tmp_path / "dd"))
    splits, report = run(tmp_path, options(tmp_path, source={"path": str(tmp_path / "dd")}, splits={"names": {"dev": "validation"}}))
    assert [len(splits[s]) for s in SPLITS] == [10, 3, 4] and splits["validation"][0]["id"] == "d0"
    assert "dataset_dict.json" in report["source"]["files"] and "train/state.json" in report["source"]["files"]
    datasets.Dataset.from_dict(cols(20, "x")).save_to_disk(str(tmp_path / "one"))
    splits, _ = run(tmp_path, options(tmp_path, source={"path": str(tmp_path / "one")}), "one")
    assert [len(splits[s]) for s in SPLITS] == [14, 3, 3]  # one table: 7, 7, 6 by class → test 1, 1, 1; validation 1, 1, 1


# ----------------------------------------------------------------------------------------------------- splits

def test_missing_splits_are_made_stratified_and_deterministic(tmp_path):
    data = rows(100, labels=("Supports",) * 3 + ("Refutes",) * 2)  # 60 SUPPORTED, 40 REFUTED
    write_csv(tmp_path / "d.csv", data)
    entry = {"source": {"path": str(tmp_path / "d.csv")}, "splits": {"seed": 7}}
    splits, report = run(tmp_path, options(tmp_path, **entry))
    classes = {s: Counter(r["label"] for r in splits[s]) for s in SPLITS}
    assert classes["test"] == {"SUPPORTED": 12, "REFUTED": 8}  # 0.2 of each class
    assert classes["validation"] == {"SUPPORTED": 5, "REFUTED": 3}  # 0.1 of what is left (48, 32)
    assert classes["train"] == {"SUPPORTED": 43, "REFUTED": 29}
    assert sorted(r["id"] for s in SPLITS for r in splits[s]) == sorted(r["id"] for r in data)
    for s in SPLITS:  # each split keeps the file's order
        assert [r["id"] for r in splits[s]] == sorted((r["id"] for r in splits[s]), key=int)
    assert report["splits"]["test"]["from"] == "made from train (0.2 of it, stratified by class, seed 7)"
    again, _ = run(tmp_path, options(tmp_path, **entry), "again")
    assert again == splits
    other, _ = run(tmp_path, options(tmp_path, **{**entry, "splits": {"seed": 8}}), "other")
    assert other["test"] != splits["test"] and Counter(r["label"] for r in other["test"]) == classes["test"]


def test_given_train_and_test_make_validation_out_of_train(tmp_path):
    write_csv(tmp_path / "tr.csv", rows(30, "t"))
    write_csv(tmp_path / "te.csv", rows(6, "s"))
    opts = options(tmp_path, source={"path": str(tmp_path), "files": {"train": "tr.csv", "test": "te.csv"}}, splits={"validation_size": 0.2})
    splits, report = run(tmp_path, opts)
    assert [len(splits[s]) for s in SPLITS] == [24, 6, 6] and {r["id"][0] for r in splits["validation"]} == {"t"}
    assert Counter(r["label"] for r in splits["validation"]) == {"SUPPORTED": 2, "REFUTED": 2, "NOT ENOUGH INFORMATION": 2}
    assert report["splits"]["test"]["from"] == "given"


# ---------------------------------------------------------------------------------------------- remote sources

class Files:
    """A local server of ``files`` (URL path → bytes) that counts the requests."""

    def __init__(self, files: dict[str, bytes]):
        self.files, self.requests = files, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                body = outer.files.get(self.path)
                reply(self, 404 if body is None else 200, {"Content-Type": "application/octet-stream"}, body or b"not found")

            def log_message(self, *args) -> None:
                pass

        self.handler = Handler


def csv_bytes(data: list[dict]) -> bytes:
    lines = [",".join(data[0])] + [",".join(str(v) for v in r.values()) for r in data]
    return ("\n".join(lines) + "\n").encode()


def test_a_url_source_is_downloaded_once_and_pinned(tmp_path):
    payload = {f"/hv/{COMMIT}/data/healthver_{k}.csv": csv_bytes(rows(n, k[:2])) for k, n in (("train", 12), ("dev", 3), ("test", 3))}
    files = {"train": "healthver_train.csv", "dev": "healthver_dev.csv", "test": "healthver_test.csv"}
    digests = {k: hashlib.sha256(payload[f"/hv/{COMMIT}/data/{f}"]).hexdigest() for k, f in files.items()}
    server = Files(payload)
    with serving(server.handler) as base:
        url = f"{base}/hv/{COMMIT}/data"  # not GitHub's: every file pinned
        entry = {"source": {"url": url, "files": files, "sha256": digests}, "splits": {"names": {"dev": "validation"}}}
        splits, report = run(tmp_path, options(tmp_path, "hv", **entry))
        assert len(server.requests) == 3 and [len(splits[s]) for s in SPLITS] == [12, 3, 3]
        assert report["source"]["files"]["dev"] == {"sha256": digests["dev"], "pinned": True, "location": f"{url}/healthver_dev.csv"}
        assert report["source"]["kind"] == "url"
        assert run(tmp_path, options(tmp_path, "hv", **entry), "again")[0] == splits and len(server.requests) == 3  # from the cache
        wrong = "0" * 64
        opts = options(tmp_path, "hv", **{**entry, "source": {**entry["source"], "sha256": {**digests, "test": wrong}}})
        with pytest.raises(ReleaseChanged) as err:
            run(tmp_path, opts, "wrong")
    message = str(err.value)
    cached = next(f.local for f in source_files(opts) if f.key == "test")
    assert "\n" not in message and "datasets.hv.source.sha256.test" in message and wrong in message and digests["test"] in message
    assert message.startswith(f"release changed: {url}/healthver_test.csv (downloaded to {cached}) has SHA-256")


def test_a_hugging_face_source_is_read_at_a_commit(tmp_path, monkeypatch):
    buffers = {}
    for split, n in (("train", 10), ("test", 5)):
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist([{**r, "label": ["Supports", "Refutes"].index(r["label"])}
                                             for r in rows(n, split[:2], ("Supports", "Refutes"))]), sink)
        buffers[f"/datasets/owner/claims/resolve/{COMMIT}/default/{split}/0000.parquet"] = sink.getvalue().to_pybytes()
    server = Files(buffers)
    source = {"hf": "owner/claims", "config": "default", "revision": COMMIT,
              "files": {"train": "train/0000.parquet", "test": "test/0000.parquet"}}
    with serving(server.handler) as base:
        monkeypatch.setenv("HF_ENDPOINT", base)
        splits, report = run(tmp_path, options(tmp_path, source=source, labels={0: "SUPPORTED", 1: "REFUTED"}))
    assert sorted(server.requests) == sorted(buffers) and [len(splits[s]) for s in SPLITS] == [8, 2, 5]
    assert report["source"]["files"]["train"]["pinned"] is False  # at a commit: a file without a pin is recorded
    assert {k: report["source"][k] for k in ("kind", "repo", "revision", "config", "commit")} == {
        "kind": "hf", "repo": "owner/claims", "revision": COMMIT, "config": "default", "commit": COMMIT}
    with pytest.raises(ConfigError, match=r"^config: datasets.toy.source.revision 'main' is not a commit: .*40-hex"):
        options(tmp_path, source={**source, "revision": "main"})


# ------------------------------------------------------------------------------------------------------- card

def test_the_card_loads_with_datasets_by_config(tmp_path):
    import datasets

    write_csv(tmp_path / "d.csv", [{**r, "title": f"T{r['id']}"} for r in rows(20)])
    opts = options(tmp_path, "hv", source={"path": str(tmp_path / "d.csv")}, fields={**FIELDS, "title": "title"}, title="HealthVer",
                   card_notes="Licence: as its source states.")
    splits, _ = run(tmp_path, opts)
    folder = str(tmp_path / "out" / "card")
    loaded = datasets.load_dataset(folder, cache_dir=str(tmp_path / "hf"))
    assert {s: loaded[s].num_rows for s in SPLITS} == {s: len(splits[s]) for s in SPLITS}
    label = loaded["train"].features["label"]
    assert label.names == ["SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"]
    assert loaded["test"].column_names == ["id", "claim", "title", "evidence", "label"]
    assert [label.int2str(v) for v in loaded["test"]["label"]] == [r["label"] for r in splits["test"]]
    bigbio = datasets.load_dataset(folder, "hv_bigbio_te", cache_dir=str(tmp_path / "hf"))
    assert bigbio["validation"][0] == {"id": splits["validation"][0]["id"], "premise": splits["validation"][0]["evidence"],
                                       "hypothesis": splits["validation"][0]["claim"], "label": splits["validation"][0]["label"]}
    text = Path(folder, "README.md").read_text()
    assert "pretty_name: HealthVer" in text and "## Notes\n\nLicence: as its source states.\n" in text
