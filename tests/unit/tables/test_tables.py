"""The papers' tables from hand-made scores and predictions with known answers, and the table steps as
the table rule calls them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from medfc.common.io import write_jsonl
from medfc.common.labels import CLINIFACT_LABELS
from medfc.scoring import steps as scoring_steps
from medfc.tables import clinifact, healthfc
from medfc.tables import steps as T
from medfc.common.papers import read_paper_numbers
from tests.helpers.config import call_step
from tests.helpers.experiment_data import clinifact_test_predictions

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
NUMBERS = read_paper_numbers(PAPERS)


def _fold_scores(tmp_path, name, macro_f1, ev_f1=None):
    d = {"veracity": {"macro_precision": macro_f1, "macro_recall": macro_f1, "macro_f1": macro_f1, "accuracy": macro_f1},
         "medsnip": {"ff1": macro_f1, "coverage": 0.9}}
    if ev_f1 is not None:
        d["evidence"] = {"macro_precision": ev_f1, "macro_recall": ev_f1, "macro_f1": ev_f1, "f1": ev_f1}
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(d))
    return str(p)


def test_table3_and_table5_our_rows_then_the_papers_rows(tmp_path):
    files, entries = [], []
    for system, vals in {"pipeline": (0.5, 0.7), "oracle": (0.8, 0.8), "claims_only": (0.3, 0.5)}.items():
        for fold, v in enumerate(vals):
            files.append(_fold_scores(tmp_path, f"{system}{fold}", v, 0.4 if system == "pipeline" else None))
            entries.append({"lang": "en", "model": "minilm", "model_name": "offline:minilm", "system": system, "fold": fold})
    t3 = healthfc.table3(files, entries, NUMBERS, "cpu")[0]
    ours = t3[t3["source"] == "ours"]
    assert list(ours["system"]) == ["pipeline", "oracle"] and set(ours["scale"]) == {"cpu"}
    pipe = ours.iloc[0]
    assert pipe["veracity F1"] == "60.0 ± 14.1" and pipe["evidence F1"] == "40.0 ± 0.0"
    assert (pipe["FF1"], pipe["FF1 coverage"]) == ("60.0 ± 14.1", "90.0 ± 0.0")  # FF1 says how many claims it scored
    assert "paper model" not in t3.columns  # no paper number beside a row of ours
    paper = t3[t3["source"] == "paper (Vladika et al. 2024)"]
    assert set(paper["scale"]) == {"paper"}
    # the paper's pipeline rows (5 models) and its oracle rows (the pipelines' gold-evidence F1)
    assert list(paper[paper.system == "pipeline"]["model"]) == ["XLM-R (German)", "XLM-R (English)", "BERT", "BioBERT", "DeBERTa"]
    deberta = paper[(paper.system == "pipeline") & (paper.model == "DeBERTa")].iloc[0]
    assert (deberta["veracity F1"], deberta["evidence F1"], deberta["lang"]) == (65.1, 55.5, "en")
    oracle = paper[paper.system == "oracle"]
    assert list(oracle["veracity F1"]) == [73.6, 74.7, 69.9, 78.1, 81.9] and set(oracle["evidence F1"]) == {""}
    assert "joint" not in set(paper["system"])  # we ran no joint system
    t5 = healthfc.table5(files, entries, NUMBERS, "smoke")[0]
    assert t5.to_dict("records") == [
        {"source": "ours", "scale": "smoke", "lang": "en", "model": "minilm", "experiment": "claims_only", "folds": 2,
         "P": "40.0 ± 14.1", "R": "40.0 ± 14.1", "F1": "40.0 ± 14.1", "accuracy": "40.0 ± 14.1"},
        {"source": "paper (Vladika et al. 2024)", "scale": "paper", "lang": "en", "model": "DeBERTa", "experiment": "claims_only",
         "folds": 5, "P": 37.4, "R": 43.8, "F1": 39.3, "accuracy": ""},
    ]


def test_the_retrieved_evidence_rows_of_table5_and_the_open_domain_table(tmp_path):
    files, entries = [], []
    for system, vals in {"retrieved_web": (0.4, 0.6), "retrieved_pubmed": (0.5, 0.5), "open_domain_web": (0.7, 0.9),
                         "open_domain_wikipedia": (0.6, 0.6)}.items():
        for fold, v in enumerate(vals):
            files.append(_fold_scores(tmp_path, f"{system}{fold}", v))
            json_path = Path(files[-1])
            json_path.write_text(json.dumps({**json.loads(json_path.read_text()), "n": 3 + fold}))
            entries.append({"lang": "en", "model": "tfidf", "model_name": "sklearn:tfidf", "system": system, "fold": fold})
    t5 = healthfc.table5(files, entries, NUMBERS, "smoke")[0]
    assert [(r["source"], r["experiment"], r["F1"]) for r in t5.to_dict("records")] == [
        ("ours", "retrieved_web", "50.0 ± 14.1"), ("ours", "retrieved_pubmed", "50.0 ± 0.0"),
        ("paper (Vladika et al. 2024)", "retrieved_web", 44.4)]  # the paper's "Google snippets"; it ran no PubMed row
    assert t5.iloc[2][["P", "R", "model"]].tolist() == [44.9, 48.0, "DeBERTa"]
    od = healthfc.open_domain(files, entries, NUMBERS, "smoke")[0]
    assert od.to_dict("records") == [
        {"source": "ours", "scale": "smoke", "lang": "en", "model": "tfidf", "experiment": "open_domain_web", "evidence": "web",
         "claims": 7, "folds": 2, "P": "80.0 ± 14.1", "R": "80.0 ± 14.1", "F1": "80.0 ± 14.1", "accuracy": "80.0 ± 14.1"},
        {"source": "ours", "scale": "smoke", "lang": "en", "model": "tfidf", "experiment": "open_domain_wikipedia", "evidence": "wikipedia",
         "claims": 7, "folds": 2, "P": "60.0 ± 0.0", "R": "60.0 ± 0.0", "F1": "60.0 ± 0.0", "accuracy": "60.0 ± 0.0"},
        {"source": "paper (Vladika and Matthes 2024, in Vladika et al. 2024 §7.3)", "scale": "paper", "lang": "en",
         "model": "open-domain verifier", "experiment": "open_domain_web", "evidence": "web", "claims": 327, "folds": "",
         "P": "", "R": "", "F1": 74.5, "accuracy": ""},
        {"source": "paper (Vladika and Matthes 2024, in Vladika et al. 2024 §7.3)", "scale": "paper", "lang": "en",
         "model": "open-domain verifier", "experiment": "open_domain_wikipedia", "evidence": "wikipedia", "claims": 327, "folds": "",
         "P": "", "R": "", "F1": 76.5, "accuracy": ""},
    ]


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


def test_table8_our_rows_then_the_papers_and_a_caption_that_says_the_scale(tmp_path, clinifact_data):
    _, preds = clinifact_test_predictions(tmp_path, clinifact_data["test"])
    scores = tmp_path / "s.json"
    call_step(scoring_steps.pairs, {"predictions": str(preds)}, {"scores": str(scores), "report": str(tmp_path / "r.json")},
              {"dataset": "clinifact", "classes": CLINIFACT_LABELS, "system": "discriminative", "n_resamples": 1000, "seed": 0})
    out = {k: str(tmp_path / f"t8.{k}") for k in ("csv", "md", "tex")}
    call_step(T.clinifact_table8, {"scores": [str(scores)], "papers": str(PAPERS)}, out,
              {"entries": [{"model": "minilm", "model_name": "offline:minilm", "system": "discriminative"}], "scale": "smoke"})
    t8 = pd.read_csv(out["csv"], keep_default_na=False)
    md = Path(out["md"]).read_text()
    assert "CliniFact Table 8" in md and "SMOKE-SIZED" in md
    assert t8.iloc[0]["source"] == "ours" and t8.iloc[0]["accuracy"] == pytest.approx(100 * 2 / 6, abs=0.05)
    ci = json.loads(scores.read_text())["ci"]["macro_f1"]
    low, high = (float(x) for x in t8.iloc[0]["macro F1 95% CI"].split("–"))
    assert (low, high) == (round(100 * ci["low"], 1), round(100 * ci["high"], 1)) and low <= float(t8.iloc[0]["macro F1"]) <= high
    paper = t8[t8["source"] == "paper (Zhang et al. 2025)"]
    # fine-tuned rows only: no zero-shot system of ours, so no zero-shot rows of the paper
    assert list(paper["model"]) == ["BioBERT", "PubMedBERT", "RoBERTa"]
    assert list(paper["accuracy"]) == [80.2, 77.9, 75.4] and list(paper["macro F1"]) == ["74.7", "", ""]  # a CSV column with blanks
    assert list(paper["macro F1 95% CI"]) == ["", "", ""]


def test_table8_and_significance_name_the_fine_tuned_generative_rows(tmp_path, clinifact_data):
    _, preds = clinifact_test_predictions(tmp_path, clinifact_data["test"])
    scores = tmp_path / "s.json"
    call_step(scoring_steps.pairs, {"predictions": str(preds)}, {"scores": str(scores), "report": str(tmp_path / "r.json")},
              {"dataset": "clinifact", "classes": CLINIFACT_LABELS, "system": "fine_tuned", "n_resamples": 200, "seed": 0})
    entries = [{"model": "llama3-70b", "system": "zero_shot"}, {"model": "llama3-70b", "system": "fine_tuned"}]
    t8 = clinifact.table8([str(scores)] * 2, entries, read_paper_numbers(PAPERS), "paper")[0]
    assert list(t8[t8.source == "ours"]["model"]) == ["llama3-70b (zero-shot)", "llama3-70b (fine-tuned)"]
    paper = t8[t8.source != "ours"]
    assert list(paper["system"]) == ["zero_shot"] * 3 + ["fine_tuned"] * 2  # no discriminative run: no discriminative rows
    assert list(paper["model"])[-2:] == ["Llama3-70B (fine-tuned)", "OpenBioLLM-70B (fine-tuned)"]
    assert list(paper["accuracy"])[-2:] == [53.6, 51.0] and list(paper["macro F1"])[-2:] == [38.1, ""]
    sig = clinifact.significance([str(preds)] * 2, entries)
    assert (sig.iloc[0]["system A"], sig.iloc[0]["system B"], sig.iloc[0]["pairs"]) == ("llama3-70b (zero-shot)", "llama3-70b (fine-tuned)", 6)
