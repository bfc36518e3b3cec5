"""``medfc predict`` reads the files the workflow writes as they are: CliniFact's pairs (release CSV, typed Parquet,
the BigBio view) and HealthFC's dataset; a model kept by the workflow's own step predicts its own test pairs as its
predictions file says; what it cannot use ends with status 1 and says why, in one line where the model is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medfc.cli import main
from medfc.clinifact import export
from medfc.clinifact.pairs import read_release_csv
from medfc.clinifact.views import bigbio_te_rows
from medfc.common.io import read_jsonl
from medfc.common.report import SkipReport
from medfc.experiments.healthfc import runs as H
from medfc.experiments.final.kept import CARD
from medfc.experiments.final.predict_inputs import input_spec, read_rows
from medfc.experiments.steps import pairs_experiment
from medfc.plan import Plan
from tests.helpers.config import call_step
from tests.helpers.experiment_data import healthfc_options
from tests.unit.experiments.test_predict import check_as_run, tfidf_config
from tests.unit.plan.test_plan import config


def predict(model_dir, input_path, output, *extra: str) -> int:
    return main(["predict", "--model-dir", str(model_dir), "--input", str(input_path), "--output", str(output), "--device", "cpu", *extra])


@pytest.fixture()
def kept_clinifact(clinifact_data, tmp_path) -> tuple[Path, Path]:
    """A CliniFact TF-IDF run of the plan's own options, by the workflow's step, its model kept: (the kept folder, its
    predictions.jsonl)."""
    cfg = config(stages__experiments=True, models__clinifact={"discriminative": ["tfidf"], "zero_shot": [], "fine_tuned": []},
                 models__healthfc={"en": ["tfidf"], "de": []})
    options = Plan(cfg).experiments.pairs_experiment("clinifact", "tfidf").replace(checkpoint_dir=str(tmp_path / "ckpt" / "clinifact" / "tfidf"))
    out = {"predictions": str(tmp_path / "run" / "predictions.jsonl"), "info": str(tmp_path / "run" / "info.json")}
    call_step(pairs_experiment, {s: str(p) for s, p in clinifact_data.items()}, out, options)
    return tmp_path / "ckpt" / "clinifact" / "tfidf", Path(out["predictions"])


def test_a_kept_clinifact_run_predicts_its_own_test_pairs_as_its_predictions_file(kept_clinifact, clinifact_data, tmp_path, capsys):
    kept, run_predictions = kept_clinifact
    expected = list(read_jsonl(run_predictions))
    assert len(expected) == 6
    parquet = tmp_path / "test_set.parquet"  # the pairs as the workflow's export writes them (typed columns, index an integer)
    export.write_parquet(read_release_csv(clinifact_data["test"]), parquet)
    for name, path in (("csv", clinifact_data["test"]), ("parquet", parquet)):
        out = tmp_path / f"pred_{name}.jsonl"
        assert predict(tmp_path / "ckpt", path, out) == 0, name
        got = list(read_jsonl(out))
        assert [g["id"] for g in got] == [e["id"] for e in expected]  # the pairs' index
        for g, e in zip(got, expected):
            assert g["label"] == e["pred_label"] and g["probabilities"] == pytest.approx(e["probs"], abs=1e-6)
        assert "6 of 6 rows predicted" in capsys.readouterr().err


def test_the_workflows_clinifact_files_are_read_under_their_own_names(clinifact_data, tmp_path):
    """The release CSV and its Parquet give the same rows under claim / title / abstract, the id the pair's index;
    the BigBio view gives claim and abstract (hypothesis, premise)."""
    spec = input_spec("clinifact", ("claim", "evidence"))
    csv_rows = read_rows(clinifact_data["test"], SkipReport("t"), ("id", "index"))
    parquet = tmp_path / "test_set.parquet"
    export.write_parquet(read_release_csv(clinifact_data["test"]), parquet)
    parquet_rows = read_rows(parquet, SkipReport("t"), ("id", "index"))
    views = [spec.view(row) for _, row in csv_rows]
    assert [rid for rid, _ in csv_rows] == [rid for rid, _ in parquet_rows] == [str(1018 + k) for k in range(6)]
    assert views == [spec.view(row) for _, row in parquet_rows]
    assert set(views[0]) == {"claim", "title", "evidence"} and views[0]["evidence"].startswith("BACKGROUND:")
    assert all(spec.missing(v) == [] for v in views)

    bigbio = tmp_path / "bigbio.jsonl"
    bigbio.write_text("".join(json.dumps(r) + "\n" for r in bigbio_te_rows(read_release_csv(clinifact_data["test"]).to_dict("records"))))
    rows = read_rows(bigbio, SkipReport("t"), ("id", "index"))
    assert [rid for rid, _ in rows] == [rid for rid, _ in csv_rows]
    assert [spec.view(r) for _, r in rows] == [{k: v[k] for k in ("claim", "evidence")} for v in views]


def test_healthfc_records_given_to_a_clinifact_model_predict_nothing_and_name_the_fields(kept_clinifact, healthfc_data, tmp_path, capsys):
    """A file of another kind: one line naming the fields the model needs and those the file has, no output, and each
    row's reason in the report."""
    kept, _ = kept_clinifact
    ds, _ = healthfc_data
    out = tmp_path / "pred.jsonl"
    n = len(ds.read_text().splitlines())
    assert predict(kept, ds, out, "--report", str(tmp_path / "report.json")) == 1
    assert not out.exists()
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and f"{ds} is not a file this clinifact model reads: it needs claim, evidence" in err[0]
    assert "evidence: evidence, abstract, article_abstract or premise" in err[0]
    assert f"each row's reason is in {tmp_path / 'report.json'}" in err[0]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["predicted"] == 0 and report["input_fields"] == ["claim", "evidence"] and report["skipped"] == n
    assert report["field_names"]["evidence"] == ["evidence", "abstract", "article_abstract", "premise"]


@pytest.mark.parametrize("what", ["missing", "empty", "foreign", "foreign card", "a file"])
def test_a_wrong_model_dir_is_one_line_and_status_1(what, clinifact_data, tmp_path, capsys):
    model_dir = tmp_path / "model"
    if what != "missing":
        model_dir.mkdir()
    if what == "foreign":  # another program's model: weights and a config, no card
        (model_dir / "config.json").write_text('{"model_type": "bert"}')
        (model_dir / "pytorch_model.bin").write_bytes(b"\0" * 16)
    elif what == "foreign card":
        (model_dir / CARD).write_text('{"name": "someone else\'s model"}')
    elif what == "a file":
        model_dir = clinifact_data["test"]
    assert predict(model_dir, clinifact_data["test"], tmp_path / "out.jsonl") == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("medfc predict: ") and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err and str(model_dir if what != "foreign card" else model_dir / CARD) in captured.err


def test_a_missing_input_is_one_line_and_status_1(kept_clinifact, tmp_path, capsys):
    kept, _ = kept_clinifact
    assert predict(kept, tmp_path / "nowhere.csv", tmp_path / "out.jsonl") == 1
    assert capsys.readouterr().err == f"medfc predict: {tmp_path / 'nowhere.csv'}: No such file or directory\n"


@pytest.mark.parametrize("system", ["oracle", "pipeline"])
def test_the_healthfc_dataset_is_read_as_it_is_by_a_kept_healthfc_model(system, healthfc_data, tmp_path):
    """The dataset's records: the claim from claim_en, the oracle's evidence the sentences at evidence_ids, the
    pipeline's sentences sentences_en; the run's test claims predicted as the run predicted them."""
    ds, folds = healthfc_data
    ckpt = tmp_path / "ckpt"
    records, _ = H.run_fold(ds, folds, healthfc_options(system, tfidf_config(), fold=1, checkpoint_dir=ckpt, threshold=0.0, max_evidence=3)
                            if system == "pipeline" else healthfc_options(system, tfidf_config(), fold=1, checkpoint_dir=ckpt))
    test_ids = {r["id"] for r in records}
    dataset = [json.loads(line) for line in ds.read_text().splitlines()]
    with_evidence = {r["id"] for r in dataset if r["evidence_ids"]}
    test_rows = tmp_path / "test.jsonl"
    test_rows.write_text("".join(json.dumps(r) + "\n" for r in dataset if r["id"] in test_ids))
    out = tmp_path / "pred.jsonl"
    assert predict(ckpt, test_rows, out) == 0
    got = list(read_jsonl(out))
    if system == "pipeline":
        check_as_run(got, records, [*records[0]["probs"]], 1e-6)
        return
    by_id = {r["id"]: r for r in records}
    assert [g["id"] for g in got] == [r["id"] for r in dataset if r["id"] in test_ids & with_evidence] and got
    for g in got:
        assert g["label"] == by_id[g["id"]]["pred_label"] and g["probabilities"] == pytest.approx(by_id[g["id"]]["probs"], abs=1e-6)

    # the export's views of the test fold (Parquet): the source view's records, the BigBio view's hypothesis and premise
    import pyarrow as pa
    import pyarrow.parquet as pq

    from medfc.healthfc.views import export_fold

    pq.write_table(pa.Table.from_pylist(dataset), tmp_path / "healthfc.parquet")
    export_fold(tmp_path / "healthfc.parquet", folds, 1, tmp_path / "source.parquet", tmp_path / "bigbio.parquet")
    for view in ("source", "bigbio"):
        assert predict(ckpt, tmp_path / f"{view}.parquet", tmp_path / f"{view}.jsonl") == 0
        assert sorted(read_jsonl(tmp_path / f"{view}.jsonl"), key=lambda r: r["id"]) == sorted(got, key=lambda r: r["id"]), view
