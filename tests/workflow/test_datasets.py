"""A claim-verification dataset declared by one config entry (``datasets.<name>``), end to end in its own small
run: imported with its skipped rows counted, carded, trained and scored with TF-IDF, gradient boosting and their
stack on the one pairs path, tabled, kept and predicted with ``medfc predict``; listed in the index, the error
browser and ``main.tex``; a rerun runs nothing."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
import yaml

from medfc.common.io import read_jsonl
from medfc.tables.errors import read_embedded
from tests.helpers.workflow import WorkflowCopy, planned_jobs

pytestmark = pytest.mark.workflow

LABELS = {"Supports": "SUPPORTED", "Refutes": "REFUTED", "Neutral": "NOT ENOUGH INFORMATION", "Unverifiable": None}
WORDS = {"Supports": ["lowers", "reduces", "improves"], "Refutes": ["raises", "worsens", "increases"], "Neutral": ["mixed", "unclear", "varied"]}


def write_claims(path) -> None:
    """60 made-up claims with their evidence (20 per verdict), one row whose label maps to null and one with an
    empty claim."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["statement", "passages", "verdict", "uid"])
        for i in range(60):
            verdict = list(WORDS)[i % 3]
            passages = json.dumps([f"A trial gave drug {i} to 40 adults.", f"Drug {i} {WORDS[verdict][i % 3]} blood pressure."])
            writer.writerow([f"Drug {i} lowers blood pressure.", passages, verdict, f"c{i}"])
        writer.writerow(["Drug 99 helps.", json.dumps(["No trial."]), "Unverifiable", "c99"])
        writer.writerow(["", json.dumps(["Empty claim."]), "Supports", "c100"])


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> WorkflowCopy:
    wf = WorkflowCopy(tmp_path_factory.mktemp("datasets"))
    write_claims(wf.path("claims.csv"))
    config = {
        "stages": {"healthfc": False, "clinifact": False, "experiments": True},
        "models": {"ensembles": {"tfidf+gbm": {"members": ["tfidf", "gbm"]}}, "clinifact": {"discriminative": []}},
        "experiments": {"healthfc": {"langs": []}, "stacking": {"inner_folds": 2}, "final": [{"dataset": "toyver", "model": "tfidf+gbm"}]},
        "datasets": {"toyver": {
            "source": {"path": "claims.csv"},
            "fields": {"id": "uid", "claim": "statement", "evidence": "passages", "label": "verdict"},
            "labels": LABELS, "splits": {"test_size": 0.25, "validation_size": 0.2, "seed": 1},
            "models": ["tfidf", "gbm", "tfidf+gbm"]}},
    }
    wf.path("config/toyver.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    wf.args = ["--cores", "2", "--configfile", "config/toyver.yaml"]
    wf.run(*wf.args)
    return wf


def test_the_import_keeps_the_mapped_rows_and_counts_the_others(run):
    splits = {s: list(read_jsonl(run.path(f"results/datasets/toyver/{s}.jsonl"))) for s in ("train", "validation", "test")}
    assert {s: len(rows) for s, rows in splits.items()} == {"train": 36, "validation": 9, "test": 15}
    first = splits["train"][0]
    assert sorted(first) == ["claim", "evidence", "id", "label"] and first["evidence"].count(".") == 2  # the sentences joined
    assert not [r["id"] for rows in splits.values() for r in rows if r["evidence"].startswith("[")]  # a JSON list cell read as its sentences
    assert {r["label"] for rows in splits.values() for r in rows} == {"SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"}
    report = json.loads(run.path("results/datasets/toyver/report.json").read_text())
    assert report["excluded_by_reason"] == {"label_dropped": 1} and report["skipped_by_reason"] == {"empty_claim": 1}
    card = run.path("results/datasets/toyver/card")
    import datasets

    loaded = datasets.load_dataset(str(card))
    assert loaded["test"].features["label"].names == ["SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"]
    assert sorted(datasets.load_dataset(str(card), "toyver_bigbio_te")["train"].column_names) == ["hypothesis", "id", "label", "premise"]


def test_each_model_is_scored_tabled_and_the_stack_kept_and_predicted(run, tmp_path):
    for model in ("tfidf", "gbm", "tfidf+gbm"):
        scores = json.loads(run.path(f"results/experiments/toyver/{model}/scores.json").read_text())
        assert scores["kind"] == "toyver" and scores["n"] == 15 and set(scores["ci"]) >= {"macro_f1"}
    table = run.path("results/tables/toyver_table.csv").read_text()
    assert [line.split(",")[1] for line in table.splitlines()[1:]] == ["tfidf", "gbm", "tfidf+gbm"]
    assert r"\label{tab:toyver}" in run.path("results/tables/toyver_table.tex").read_text()
    assert r"\input{tables/toyver_table}" in run.path("results/main.tex").read_text()
    kept = run.path("results/final/toyver/tfidf+gbm")
    card = json.loads((kept / "medfc_model.json").read_text())
    assert card["dataset"] == "toyver" and card["labels"] == ["SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"]
    out = tmp_path / "pred.jsonl"
    proc = subprocess.run([sys.executable, "-m", "medfc", "predict", "--model-dir", str(kept), "--input",
                           str(run.path("results/datasets/toyver/test.jsonl")), "--output", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows = list(read_jsonl(out))
    assert len(rows) == 15 and set(rows[0]["probabilities"]) == {"SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"}
    page = read_embedded(run.path("results/errors.html").read_text())
    assert [(d["key"], len(d["items"]), len(d["rows"])) for d in page["datasets"]] == [("toyver", 15, 3)]
    assert "tables/toyver_table.md" in run.path("results/index.md").read_text()


def test_a_rerun_runs_nothing_and_a_label_map_change_reruns_the_dataset(run, tmp_path):
    assert planned_jobs(run.run(*run.args, "-n").stdout) == []
    wf = run.clone(tmp_path / "clone")
    config = yaml.safe_load(wf.path("config/toyver.yaml").read_text())
    config["datasets"]["toyver"]["labels"]["Unverifiable"] = "NOT ENOUGH INFORMATION"
    wf.path("config/toyver.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    jobs = planned_jobs(wf.run(*wf.args, "-n").stdout)
    assert "dataset_import[dataset=toyver]" in jobs and "pairs_experiment[dataset=toyver,model=tfidf]" in jobs


def test_its_table_and_the_runs_document_compile(run, tmp_path):
    from tests.helpers.tex import compile_document, overfull_boxes, tex_problems

    assert tex_problems(run.path("results/tables"), tmp_path / "fragments") == []
    log = compile_document(run.path("results/main.tex"))
    assert [b for b in overfull_boxes(log) if b > 1.0] == []
