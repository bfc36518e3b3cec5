"""Kept models open without running code: no pickle in a kept folder, a foreign type in its skops file or a pickle
refused in one line before anything of it is loaded; a file of the wrong kind given to ``medfc predict`` is one line."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from medfc.experiments.healthfc import runs as H
from medfc.experiments.models.keeper import LOADABLE_TYPES, PICKLE_SUFFIXES, SKLEARN_ESTIMATORS, UnsafeModelError, load_estimators
from medfc.experiments.final.kept import CARD
from tests.helpers.experiment_data import healthfc_options
from tests.unit.experiments.test_predict import predict, tfidf_config, write_jsonl

MARK = "medfc-code-ran"


class Payload:
    """What a hostile model file would hold: building it (unpickling or skops' loading) writes a marker file."""

    def __init__(self, where: str):
        self.where = where

    def __setstate__(self, state: dict) -> None:
        Path(state["where"]).write_text("ran")

    def __reduce__(self):
        return (Path.write_text, (Path(self.where), "ran"))


@pytest.fixture
def kept_tfidf(healthfc_data, tmp_path) -> tuple[Path, list[dict]]:
    """A kept TF-IDF oracle and claims it reads."""
    ds, folds = healthfc_data
    ckpt = tmp_path / "ckpt"
    H.run_fold(ds, folds, healthfc_options("oracle", tfidf_config(), fold=1, checkpoint_dir=ckpt))
    recs = [json.loads(line) for line in ds.read_text().splitlines()]
    rows = [{"id": r["id"], "claim": r["claim_en"], "evidence": [r["sentences_en"][i] for i in r["evidence_ids"]]} for r in recs]
    return ckpt / "oracle", [r for r in rows if r["evidence"]]


def test_a_kept_model_holds_no_pickle_and_predicts(kept_tfidf, tmp_path):
    kept, rows = kept_tfidf
    files = [p for p in kept.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {CARD, "model.json", SKLEARN_ESTIMATORS}
    assert not [p for p in files if p.suffix in PICKLE_SUFFIXES or p.read_bytes()[:1] == b"\x80"]  # pickle protocol 2+ opens with 0x80
    assert set(json.loads((kept / "model.json").read_text())) == {"options", "labels", "variant", "terms"}
    assert predict(kept, write_jsonl(tmp_path / "c.jsonl", rows), tmp_path / "p.jsonl") == 0


def test_a_foreign_type_in_a_kept_model_is_refused_unloaded(kept_tfidf, tmp_path, capsys):
    """A crafted model folder: its skops file holds an object of a type outside the list. medfc predict refuses it in
    one line naming that type, and nothing of it ran (the marker its loading would write is not there)."""
    import skops.io

    kept, rows = kept_tfidf
    crafted = tmp_path / "crafted"
    shutil.copytree(kept, crafted)
    marker = tmp_path / MARK
    (crafted / SKLEARN_ESTIMATORS).write_bytes(skops.io.dumps({"idf": [], "clf": Payload(str(marker))}))
    foreign = f"{__name__}.Payload"
    assert foreign not in LOADABLE_TYPES
    assert predict(crafted, write_jsonl(tmp_path / "c.jsonl", rows), tmp_path / "p.jsonl") == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and foreign in err and "refused without loading it" in err
    assert not marker.exists() and not (tmp_path / "p.jsonl").exists()
    with pytest.raises(UnsafeModelError, match="Payload"):  # the library refuses it as medfc predict does
        load_estimators(crafted / SKLEARN_ESTIMATORS)
    assert not marker.exists()


def test_a_pickle_in_a_model_folder_is_refused_unopened(kept_tfidf, tmp_path, capsys):
    kept, rows = kept_tfidf
    crafted = tmp_path / "old"
    shutil.copytree(kept, crafted)
    marker = tmp_path / MARK
    (crafted / "model.pkl").write_bytes(pickle.dumps(Payload(str(marker))))
    assert predict(crafted, write_jsonl(tmp_path / "c.jsonl", rows), tmp_path / "p.jsonl") == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{crafted / 'model.pkl'}: a pickle, which medfc never opens" in err
    assert not marker.exists()


def test_a_file_of_the_wrong_kind_is_one_line_with_the_fields_and_a_report(kept_tfidf, tmp_path, capsys):
    """CliniFact's pairs given to a HealthFC model: one line with the fields the model needs and those the file has;
    each row's reason in a report file, not on the terminal."""
    kept, _ = kept_tfidf
    pairs = [{"index": str(i), "claim": f"claim {i}", "article_title": "t", "article_abstract": "an abstract", "label": "1"} for i in range(31)]
    out = tmp_path / "p.jsonl"
    assert predict(kept, write_jsonl(tmp_path / "pairs.jsonl", pairs), out) == 1
    err = capsys.readouterr().err.strip()
    report = Path(f"{out}.report.json")
    assert len(err.splitlines()) == 1, err
    assert "it needs claim, evidence" in err and "the file has index, claim, article_title, article_abstract, label" in err
    assert str(report) in err
    saved = json.loads(report.read_text())
    assert saved["skipped"] == 31 and len(saved["skipped_rows"]) == 31 and saved["skipped_by_reason"] == {"missing_evidence": 31}
    # --report names where the rows' reasons go
    assert predict(kept, tmp_path / "pairs.jsonl", out, "--report", str(tmp_path / "r.json")) == 1
    assert str(tmp_path / "r.json") in capsys.readouterr().err and (tmp_path / "r.json").is_file()
