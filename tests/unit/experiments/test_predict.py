"""``medfc predict``: models kept by the real training code (tiny ones, built in the test) applied to new claims
from JSONL and CSV, through the command line (:func:`medfc.cli.main`)."""

from __future__ import annotations

import contextlib
import csv
import json
from pathlib import Path

import pytest

from medfc.cli import main
from medfc.common.labels import CLINIFACT_LABELS, EVIDENCE_LABELS, VERACITY_LABELS
from medfc.experiments import pairs as CF
from medfc.experiments import pairs as CD
from medfc.experiments.healthfc import runs as H
from medfc.experiments.final.kept import CARD, find_model_dir, read_card
from medfc.experiments.models.options import CLINIFACT_PAIRS, PairsTrainOptions, TfidfOptions
from medfc.experiments.healthfc.systems import input_fields, system
from tests.helpers.config import section
from tests.helpers.experiment_data import healthfc_options, tiny_train_config


def tfidf_config(**kw) -> TfidfOptions:
    return TfidfOptions.from_mapping(section("experiments.tfidf", model="sklearn:tfidf", **{"C_grid": [1.0], "spaces": ["joint"],
                                                                                            "analyzers": ["word"], **kw}))


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict], fields: list[str]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return path


def read_output(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def predict(model_dir, input_path, output, *extra: str) -> int:
    return main(["predict", "--model-dir", str(model_dir), "--input", str(input_path), "--output", str(output), "--device", "cpu", *extra])


@contextlib.contextmanager
def models_away(model_dir):
    """The base model's weights moved aside: a kept folder must hold every weight it needs."""
    moved = [f for f in Path(model_dir).iterdir() if f.name.endswith((".safetensors", ".bin"))]
    for f in moved:
        f.rename(f.with_name(f.name + ".away"))
    try:
        yield
    finally:
        for f in moved:
            f.with_name(f.name + ".away").rename(f)


def check_records(records: list[dict], ids: list[str], labels: list[str]) -> None:
    assert [r["id"] for r in records] == ids  # input order, the bad rows left out
    for r in records:
        assert set(r) == {"id", "label", "probabilities"}
        assert set(r["probabilities"]) == set(labels) and r["label"] in labels
        assert sum(r["probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
        assert r["probabilities"][r["label"]] == max(r["probabilities"].values())  # ties: the first of the model's labels


def test_input_fields_come_from_each_systems_reads():
    hx = section("experiments.healthfc")

    def fields(name: str, **kw) -> tuple[str, ...]:
        spec = system(name)
        from dataclasses import fields as dc_fields

        own = {f.name: hx[f.name] for f in dc_fields(spec.options) if f.name in hx}
        if "evidence_train" in own:
            return ()
        return input_fields(spec, spec.options.from_mapping({**own, **kw}))

    assert fields("claims_only") == ("claim",)
    assert fields("oracle") == ("claim", "evidence")
    assert fields("gold_explanations") == ("claim", "explanation")
    assert fields("retrieved_web") == fields("open_domain_pubmed") == ("claim", "evidence")
    assert fields("level_of_evidence", loe_input="claim+document") == ("claim", "document")
    assert fields("level_of_evidence", loe_input="claim+explanation") == ("claim", "explanation")
    assert fields("level_of_evidence", loe_input="claim") == ("claim",)
    # the systems that select their evidence read the article's sentence list
    assert input_fields(system("pipeline"), None) == input_fields(system("joint"), None) == ("claim", "sentences")


def test_kept_tfidf_healthfc_oracle_predicts_jsonl_and_csv_and_skips_bad_rows(healthfc_data, tmp_path, capsys):
    ds, folds = healthfc_data
    ckpt = tmp_path / "ckpt"
    records, _ = H.run_fold(ds, folds, healthfc_options("oracle", tfidf_config(), fold=1, checkpoint_dir=ckpt))
    kept = ckpt / "oracle"
    card = json.loads((kept / CARD).read_text())
    assert card["kind"] == "tfidf" and card["labels"] == list(VERACITY_LABELS) and card["input_fields"] == ["claim", "evidence"]
    assert find_model_dir(ckpt) == kept  # the run's checkpoint folder finds its one kept model

    # the kept model predicts the training run's test claims as the run did
    test = [json.loads(line) for line in ds.read_text().splitlines()]
    test = [r for r in test if r["id"] in {rec["id"] for rec in records}]
    rows = [{"id": r["id"], "claim": r["claim_en"], "evidence": [r["sentences_en"][i] for i in r["evidence_ids"]]} for r in test]
    rows = [r for r in rows if r["evidence"]]
    bad = {"id": "no-evidence", "claim": "does zinc shorten colds?"}
    inp = write_jsonl(tmp_path / "claims.jsonl", [rows[0], bad, "not json {", *rows[1:]])
    out = tmp_path / "pred.jsonl"
    assert predict(ckpt, inp, out, "--report", str(tmp_path / "report.json")) == 0
    got = read_output(out)
    check_records(got, [r["id"] for r in rows], list(VERACITY_LABELS))
    by_id = {rec["id"]: rec for rec in records}
    for g in got:
        assert g["label"] == by_id[g["id"]]["pred_label"]
        assert g["probabilities"] == pytest.approx(by_id[g["id"]]["probs"], abs=1e-5)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["skipped_by_reason"] == {"missing_evidence": 1, "not_json": 1} and report["predicted"] == len(rows)
    err = capsys.readouterr().err
    assert f"{len(rows)} of {len(rows) + 2} rows predicted" in err and "missing_evidence: 1" in err and "no-evidence" in err

    # the same claims as CSV (evidence as one text, or a JSON list), a row without an id named by its number
    csv_rows = [{"id": rows[0]["id"], "claim": rows[0]["claim"], "evidence": json.dumps(rows[0]["evidence"])},
                {"id": "", "claim": rows[1]["claim"], "evidence": " ".join(rows[1]["evidence"])},
                {"id": "empty", "claim": "", "evidence": "something"}]
    out_csv = tmp_path / "pred_csv.jsonl"
    assert predict(kept, write_csv(tmp_path / "claims.csv", csv_rows, ["id", "claim", "evidence"]), out_csv) == 0
    got = read_output(out_csv)
    check_records(got, [rows[0]["id"], "row-2"], list(VERACITY_LABELS))
    assert got[0]["probabilities"] == pytest.approx(by_id[rows[0]["id"]]["probs"], abs=1e-5)
    assert "missing_claim: 1" in capsys.readouterr().err


def test_kept_encoder_clinifact_discriminative_predicts_without_its_base_model(clinifact_data, tiny_bert, tmp_path):
    train = tiny_train_config(tiny_bert, max_steps=2, epochs=1)
    ck = tmp_path / "ck"
    options = PairsTrainOptions(CLINIFACT_PAIRS, train, include_title=True, predict_splits=("test",), checkpoint_dir=str(ck))
    records, _ = CF.run_discriminative(clinifact_data, options)
    card = read_card(ck)
    assert card["kind"] == "encoder" and card["labels"] == list(CLINIFACT_LABELS) and (ck / card["checkpoint"]).is_file()
    assert card["model"] == str(tiny_bert)

    test = CD.load_pairs(clinifact_data["test"])
    rows = [{"id": p.id, "claim": p.claim, "title": p.title, "abstract": p.abstract} for p in test[:3]]
    rows.insert(1, {"id": "no-abstract", "claim": test[0].claim, "title": "t"})
    # the base model's files are not needed: the kept folder holds the config, tokenizer and weights
    for f in Path(tiny_bert).iterdir():
        if f.name.endswith((".safetensors", ".bin")):
            f.rename(f.with_name(f.name + ".away"))
    try:
        out = tmp_path / "pred.jsonl"
        assert predict(ck, write_jsonl(tmp_path / "c.jsonl", rows), out, "--batch-size", "2") == 0
    finally:
        for f in Path(tiny_bert).iterdir():
            if f.name.endswith(".away"):
                f.rename(f.with_name(f.name[: -len(".away")]))
    got = read_output(out)
    check_records(got, [p.id for p in test[:3]], list(CLINIFACT_LABELS))
    by_id = {r["id"]: r for r in records}
    for g in got:
        assert g["probabilities"] == pytest.approx(by_id[g["id"]]["probs"], abs=1e-4)

    out_csv = tmp_path / "pred_csv.jsonl"
    assert predict(ck, write_csv(tmp_path / "c.csv", rows, ["id", "claim", "title", "abstract"]), out_csv) == 0
    assert read_output(out_csv) == got


def test_kept_lora_adapters_predict_as_the_fine_tuned_system(clinifact_data, tiny_llama, tmp_path):
    from medfc.experiments.clinifact import fine_tune as FT
    from medfc.experiments.models.options import FineTuneOptions

    tiny = {"lr": 5e-2, "epochs": 1, "max_steps": 1, "batch_size": 4, "target_modules": ["q_proj", "v_proj"], "eval_batch_size": 8,
            "grad_accum": 1, "max_prompt_tokens": 120, "device": "cpu", "seed": 3, "lora_r": 2, "lora_alpha": 4, "lora_dropout": 0.0,
            "warmup_ratio": 0.0, "predict_splits": ["test"]}
    opts = FineTuneOptions.from_mapping(section("experiments.clinifact.fine_tune", **{**tiny, "model": str(tiny_llama), "save_dir": str(tmp_path / "ft")}))
    records, info = FT.run_fine_tuned(clinifact_data, opts)
    adapters = Path(info["saved"]["adapters"])
    card = read_card(adapters)
    assert card["kind"] == "lora" and card["model"] == str(tiny_llama) and card["options"]["max_prompt_tokens"] == 120

    test = CD.load_pairs(clinifact_data["test"])
    rows = [{"id": p.id, "claim": p.claim, "title": p.title, "abstract": p.abstract} for p in test[:2]] + [{"id": "x", "abstract": "a"}]
    out = tmp_path / "pred.jsonl"
    assert predict(adapters, write_jsonl(tmp_path / "c.jsonl", rows), out) == 0
    got = read_output(out)
    check_records(got, [p.id for p in test[:2]], list(CLINIFACT_LABELS))
    by_id = {r["id"]: r for r in records}
    for g in got:
        assert g["probabilities"] == pytest.approx(by_id[g["id"]]["probs"], abs=1e-4)

    # adapters without a card (trained elsewhere): the base model from adapter_config.json or --base-model
    (adapters / CARD).unlink()
    out2 = tmp_path / "pred2.jsonl"
    assert predict(adapters, write_jsonl(tmp_path / "c.jsonl", rows), out2, "--base-model", str(tiny_llama), "--max-prompt-tokens", "120") == 0
    again = read_output(out2)
    assert [g["id"] for g in again] == [g["id"] for g in got]
    for a, g in zip(again, got):
        assert a["label"] == g["label"] and a["probabilities"] == pytest.approx(g["probabilities"], abs=1e-5)


@pytest.mark.parametrize("kind", ["gbm", "frozen"])
def test_kept_gbm_and_frozen_clinifact_models_predict_as_trained(kind, clinifact_data, tiny_bert, tmp_path):
    from medfc.experiments.models.options import FrozenOptions, GbmOptions

    if kind == "gbm":  # with embedding features: the encoder is loaded again at prediction time, no store read
        train = GbmOptions.from_mapping(section("experiments.gbm", model="sklearn:gbm", seeds=[0], min_samples_leaf=2, max_iter=5,
                                                progress=False, embedding_model=str(tiny_bert), embedding_features=["cos"],
                                                embedding_claim_length=16, embedding_evidence_length=32, device="cpu",
                                                cache_dir=str(tmp_path / "emb")))
    else:
        train = FrozenOptions.from_mapping(section("experiments.frozen", model=f"frozen:{tiny_bert}", cache_dir=str(tmp_path / "emb"),
                                                   progress=False, claim_length=16, evidence_length=32, C_grid=[1.0], device="cpu"))
    ck = tmp_path / "ck"
    options = PairsTrainOptions(CLINIFACT_PAIRS, train, include_title=True, predict_splits=("test",), checkpoint_dir=str(ck))
    records, _ = CF.run_discriminative(clinifact_data, options)
    assert read_card(ck)["kind"] == kind and (ck / "model.skops").is_file() and (ck / "model.json").is_file()
    test = CD.load_pairs(clinifact_data["test"])
    rows = [{"id": p.id, "claim": p.claim, "title": p.title, "abstract": p.abstract} for p in test]
    out = tmp_path / "pred.jsonl"
    assert predict(ck, write_jsonl(tmp_path / "c.jsonl", rows), out) == 0
    got = read_output(out)
    check_records(got, [p.id for p in test], list(CLINIFACT_LABELS))
    by_id = {r["id"]: r for r in records}
    for g in got:
        assert g["probabilities"] == pytest.approx(by_id[g["id"]]["probs"], abs=1e-4)


def test_a_directory_without_a_kept_model_says_how_to_keep_one(tmp_path, capsys):
    inp = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "claim": "x"}])
    assert predict(tmp_path, inp, tmp_path / "out.jsonl") == 1
    err = capsys.readouterr().err
    assert err.startswith("medfc predict: ") and err.count("\n") == 1 and "keep_checkpoints" in err


# ------------------------------------------------------------------- HealthFC pipeline and joint (they select evidence)


def article_rows(ds: Path, ids: set[str]) -> list[dict]:
    """The run's test claims as new claims: the claim and the article's sentence list, nothing else."""
    recs = [json.loads(line) for line in ds.read_text().splitlines()]
    return [{"id": r["id"], "claim": r["claim_en"], "sentences": r["sentences_en"]} for r in recs if r["id"] in ids]


def check_as_run(got: list[dict], records: list[dict], labels: list[str], abs_tol: float) -> None:
    """Each prediction is the run's own for that test claim: label, probabilities and the selected sentences."""
    by_id = {r["id"]: r for r in records}
    assert [g["id"] for g in got] == sorted(by_id)
    for g in got:
        assert set(g) == {"id", "label", "probabilities", "evidence_ids"}
        assert set(g["probabilities"]) == set(labels) and g["label"] == by_id[g["id"]]["pred_label"]
        assert g["probabilities"] == pytest.approx(by_id[g["id"]]["probs"], abs=abs_tol)
        assert g["evidence_ids"] == by_id[g["id"]]["pred_evidence_ids"]


def test_kept_tfidf_pipeline_selects_the_runs_evidence_and_predicts_its_labels(healthfc_data, tmp_path, capsys):
    ds, folds = healthfc_data
    ckpt = tmp_path / "ckpt"
    # threshold 0: every sentence passes, so max_evidence (3) picks the most probable, in document order
    records, _ = H.run_fold(ds, folds, healthfc_options("pipeline", tfidf_config(), fold=1, checkpoint_dir=ckpt, threshold=0.0,
                                                        max_evidence=3))
    kept = ckpt / "pipeline"
    card = read_card(kept)
    assert (card["system"], card["kind"], card["threshold"], card["max_evidence"]) == ("pipeline", "pipeline", 0.0, 3)
    assert card["parts"] == {"evidence": "evidence", "veracity": "veracity"} and card["input_fields"] == ["claim", "sentences"]
    assert card["labels"] == list(VERACITY_LABELS)
    selector, veracity = read_card(kept / "evidence"), read_card(kept / "veracity")
    assert (selector["part"], selector["kind"], selector["labels"]) == ("evidence", "tfidf", list(EVIDENCE_LABELS))
    assert (veracity["part"], veracity["kind"], veracity["labels"]) == ("veracity", "tfidf", list(VERACITY_LABELS))
    assert find_model_dir(ckpt) == kept  # the parts' cards are inside the pipeline's: one kept model

    rows = article_rows(ds, {r["id"] for r in records})
    assert all(len(r["pred_evidence_ids"]) == min(3, len(row["sentences"])) for r, row in zip(sorted(records, key=lambda r: r["id"]), rows))
    inp = write_jsonl(tmp_path / "claims.jsonl", [*rows, {"id": "no-article", "claim": "does zinc shorten colds?"},
                                                  {"id": "empty", "claim": "x", "sentences": ["", " "]}])
    out = tmp_path / "pred.jsonl"
    assert predict(ckpt, inp, out, "--report", str(tmp_path / "report.json")) == 0
    check_as_run(read_output(out), records, list(VERACITY_LABELS), 1e-5)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["skipped_by_reason"] == {"missing_sentences": 2} and report["input_fields"] == ["claim", "sentences"]
    assert "a row needs claim, sentences" in capsys.readouterr().err

    # CSV: the sentence list as a JSON list in its cell; an empty sentence keeps its place (the ids index the list)
    first = rows[0]
    csv_rows = [{"id": first["id"], "claim": first["claim"], "sentences": json.dumps(first["sentences"])},
                {"id": "shifted", "claim": first["claim"], "sentences": json.dumps(["", *first["sentences"]])}]
    out_csv = tmp_path / "pred_csv.jsonl"
    assert predict(kept, write_csv(tmp_path / "claims.csv", csv_rows, ["id", "claim", "sentences"]), out_csv) == 0
    got = read_output(out_csv)
    assert got[0] == read_output(out)[0]
    assert len(got[1]["evidence_ids"]) == 3 and all(0 <= i <= len(first["sentences"]) for i in got[1]["evidence_ids"])

    capsys.readouterr()
    assert predict(kept / "evidence", inp, tmp_path / "x.jsonl") == 1
    assert capsys.readouterr().err == ("medfc predict: this is the evidence model of a kept pipeline; point --model-dir at the folder "
                                       "above it, which holds the whole system\n")


def test_kept_encoder_pipeline_predicts_without_its_base_model(healthfc_data, tiny_bert, tmp_path):
    ds, folds = healthfc_data
    ckpt = tmp_path / "ckpt"
    train = tiny_train_config(tiny_bert, max_steps=2)
    records, _ = H.run_fold(ds, folds, healthfc_options("pipeline", train, fold=1, checkpoint_dir=ckpt, val_fraction=0.0, threshold=0.3))
    kept = ckpt / "pipeline"
    for part in ("evidence", "veracity"):
        part_card = read_card(kept / part)
        assert part_card["kind"] == "encoder" and (kept / part / part_card["checkpoint"]).is_file()
    rows = article_rows(ds, {r["id"] for r in records})
    out = tmp_path / "pred.jsonl"
    with models_away(tiny_bert):
        assert predict(ckpt, write_jsonl(tmp_path / "c.jsonl", rows), out, "--batch-size", "3") == 0
    check_as_run(read_output(out), records, list(VERACITY_LABELS), 1e-4)


def test_kept_joint_encoder_selects_the_runs_evidence_and_predicts_its_labels(healthfc_data, tiny_bert, tmp_path):
    ds, folds = healthfc_data
    ckpt = tmp_path / "ckpt"
    train = tiny_train_config(tiny_bert, max_steps=2, max_length=48)  # the 40-sentence article spans several windows
    records, info = H.run_fold(ds, folds, healthfc_options("joint", train, fold=1, checkpoint_dir=ckpt, val_fraction=0.0, threshold=0.3,
                                                           max_evidence=4))
    kept = ckpt / "joint"
    card = read_card(kept)
    assert (card["system"], card["kind"], card["threshold"], card["max_evidence"]) == ("joint", "joint", 0.3, 4)
    assert card["input_fields"] == ["claim", "sentences"] and (kept / card["checkpoint"]).is_file()
    assert (kept / "transformers" / "config.json").is_file() and find_model_dir(ckpt) == kept

    rows = article_rows(ds, {r["id"] for r in records})
    assert any(len(r["sentences"]) == 40 for r in rows) and any(r["pred_evidence_ids"] for r in records)
    out = tmp_path / "pred.jsonl"
    with models_away(tiny_bert):
        assert predict(kept, write_jsonl(tmp_path / "c.jsonl", [*rows, {"id": "bare", "claim": "x"}]), out) == 0
    check_as_run(read_output(out), records, list(VERACITY_LABELS), 1e-4)
