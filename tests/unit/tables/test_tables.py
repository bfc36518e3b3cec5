"""The papers' tables from hand-made scores and predictions with known answers, and the table steps as
the table rule calls them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from medfc.common.io import write_jsonl
from medfc.scoring import steps as scoring_steps
from medfc.scoring.predictions import CLINIFACT_LABELS
from medfc.tables import clinifact, healthfc
from medfc.tables import steps as T
from medfc.tables.papers import clinifact_row, healthfc_row, match_row, paper_numbers
from tests.helpers.config import call_step
from tests.helpers.experiment_data import clinifact_test_predictions

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
NUMBERS = paper_numbers(PAPERS)


def _fold_scores(tmp_path, name, macro_f1, ev_f1=None):
    d = {"veracity": {"macro_precision": macro_f1, "macro_recall": macro_f1, "macro_f1": macro_f1, "accuracy": macro_f1}}
    if ev_f1 is not None:
        d["evidence"] = {"macro_precision": ev_f1, "macro_recall": ev_f1, "macro_f1": ev_f1, "f1": ev_f1}
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(d))
    return str(p)


def test_table3_and_table5_mean_std_over_folds_with_paper_columns(tmp_path):
    files, entries = [], []
    for system, vals in {"pipeline": (0.5, 0.7), "oracle": (0.8, 0.8), "claims_only": (0.3, 0.5)}.items():
        for fold, v in enumerate(vals):
            files.append(_fold_scores(tmp_path, f"{system}{fold}", v, 0.4 if system == "pipeline" else None))
            entries.append({"lang": "en", "model": "deb", "model_name": "microsoft/deberta-v3-large", "system": system, "fold": fold})
    t3 = healthfc.table3(files, entries, NUMBERS)
    assert list(t3["system"]) == ["pipeline", "oracle"]
    pipe = t3.iloc[0]
    assert pipe["veracity F1"] == "60.0 ± 14.1" and pipe["evidence F1"] == "40.0 ± 0.0"
    assert pipe["paper veracity F1"] == 65.1 and pipe["paper evidence F1"] == 55.5 and pipe["paper model"] == "DeBERTa"
    assert t3.iloc[1]["paper veracity F1"] == 81.9 and t3.iloc[1]["evidence F1"] == ""
    bert = healthfc.table3(files[:2], [dict(e, model_name="bert-large-uncased") for e in entries[:2]], NUMBERS)
    assert bert.iloc[0]["paper veracity F1"] == 50.1
    t5 = healthfc.table5(files, entries, NUMBERS)
    assert list(t5["experiment"]) == ["claims_only"] and t5.iloc[0]["F1"] == "40.0 ± 14.1" and t5.iloc[0]["paper F1"] == 39.3


def test_significance_tables(tmp_path):
    import random

    rng = random.Random(0)
    labels = ["SUPPORTED", "REFUTED", "NOT ENOUGH INFO"]
    gold = [labels[i % 3] for i in range(60)]
    files, entries = [], []
    for system, acc in (("pipeline", 0.4), ("oracle", 0.9)):
        for fold in (0, 1):
            recs = [{"id": f"c{i}", "label": g, "pred_label": g if rng.random() < acc else rng.choice(labels)}
                    for i, g in enumerate(gold) if i % 2 == fold]
            p = tmp_path / f"{system}{fold}.jsonl"
            write_jsonl(p, recs)
            files.append(str(p))
            entries.append({"lang": "en", "model": "m", "system": system, "fold": fold})
    df = healthfc.significance(files, entries, [["pipeline", "oracle"], ["pipeline", "joint"]], metric="ff1", n_resamples=500, seed=0, abstain="drop")
    assert len(df) == 1  # the joint system was not run
    row = df.iloc[0]
    assert row["claims"] == 60 and row["claims (S/R)"] == 40 and row["df"] >= 1
    assert row["CI low"] <= row["delta B-A"] <= row["CI high"]

    cf = []
    for name, acc in (("a", 0.9), ("b", 0.5)):
        p = tmp_path / f"cf_{name}.jsonl"
        write_jsonl(p, [{"id": str(i), "split": "test", "label": CLINIFACT_LABELS[i % 3],
                         "pred_label": CLINIFACT_LABELS[i % 3] if rng.random() < acc else "NEI"} for i in range(90)])
        cf.append(str(p))
    mb = clinifact.significance(cf, [{"model": "a", "system": "discriminative"}, {"model": "b", "system": "zero_shot"}])
    assert list(mb["system B"]) == ["b (zero-shot)"] and mb.iloc[0]["pairs"] == 90 and mb.iloc[0]["p"] < 0.05


def test_table8_with_the_paper_row_of_each_model(tmp_path, clinifact_data):
    _, preds = clinifact_test_predictions(tmp_path, clinifact_data["test"])
    scores = tmp_path / "s.json"
    call_step(scoring_steps.clinifact, {"predictions": str(preds)}, {"scores": str(scores), "report": str(tmp_path / "r.json")},
              {"system": "discriminative"})
    out = {k: str(tmp_path / f"t8.{k}") for k in ("csv", "md", "tex")}
    call_step(T.clinifact_table8, {"scores": [str(scores)], "papers": str(PAPERS)}, out,
              {"entries": [{"model": "bio", "model_name": "dmis-lab/biobert-base-cased-v1.2", "system": "discriminative"}]})
    t8 = pd.read_csv(out["csv"])
    assert "CliniFact Table 8" in Path(out["md"]).read_text()
    assert t8.iloc[0]["paper accuracy"] == 80.2 and t8.iloc[0]["paper macro F1"] == 74.7
    assert t8.iloc[0]["accuracy"] == pytest.approx(100 * 2 / 6, abs=0.05)
    rob = clinifact.table8([str(scores)], [{"model": "rob", "model_name": "roberta-base", "system": "discriminative"}], NUMBERS)
    assert rob.iloc[0]["paper accuracy"] == 75.4


def test_paper_rows_come_from_the_numbers_file():
    assert match_row("microsoft/deberta-v3-large", NUMBERS["healthfc"]["models"]) == "DeBERTa"
    assert healthfc_row(NUMBERS, "xlm-roberta-large", "de") == ("XLM-R (German)", "XLM-R (German)")
    assert healthfc_row(NUMBERS, "dmis-lab/biobert-v1.1", "en") == ("BioBERT", "BioBERT")
    assert healthfc_row(NUMBERS, "bert-large-uncased", "en") == ("BERT", "BERT")
    assert healthfc_row(NUMBERS, "/models/all-MiniLM-L6-v2", "en") == (None, "DeBERTa")  # no row: the default shown
    assert clinifact_row(NUMBERS, "aaditya/Llama3-OpenBioLLM-70B", True) == ("OpenBioLLM-70B (zero-shot)",) * 2
    assert clinifact_row(NUMBERS, "meta-llama/Llama-3-8B", True) == (None, "OpenBioLLM-8B (zero-shot)")
    assert clinifact_row(NUMBERS, "microsoft/BiomedNLP-PubMedBERT-base", False)[0] == "PubMedBERT"
