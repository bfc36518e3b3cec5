"""The experiments stage's workflow steps: training/inference steps on tiny random models, scoring and
tables on hand-made predictions with known answers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.experiments import steps as S


def exact(pred: str, gold: str) -> float:
    """A stand-in for METEOR: 1 for the same sentence, else 0."""
    return 1.0 if pred == gold else 0.0


# ------------------------------------------------------------------------------ models / training


def test_resolve_model_maps_offline_minilm_to_the_packaged_copy():
    path = Path(S.resolve_model("offline:minilm"))
    assert (path / "config.json").exists()
    assert S.resolve_model("microsoft/deberta-v3-large") == "microsoft/deberta-v3-large"
    with pytest.raises(ValueError, match="unknown offline model"):
        S.resolve_model("offline:gpt5")


def test_healthfc_fold_step_writes_predictions_and_info(healthfc_data, train_cfg, tmp_path):
    ds, folds = healthfc_data
    out = {"predictions": str(tmp_path / "p.jsonl"), "info": str(tmp_path / "info.json")}
    S.healthfc_fold({"dataset": str(ds), "folds": str(folds)}, out,
                    {"system": "pipeline", "lang": "en", "fold": 1, "train": train_cfg,
                     "options": {"threshold": 0.5, "max_evidence": 5, "neg_ratio": 4.0, "val_fraction": 0.0, "evidence_train": {}},
                     "checkpoint_dir": str(tmp_path / "ck"), "threads": 1, "log_file": None})
    recs = list(read_jsonl(out["predictions"]))
    test_ids = [line.split(",")[0] for line in folds.read_text().splitlines()[1:] if line.endswith(",1")]
    assert [r["id"] for r in recs] == sorted(test_ids)
    assert {r["system"] for r in recs} == {"pipeline"} and all(isinstance(r["pred_evidence_ids"], list) for r in recs)
    info = read_json(out["info"])
    assert info["fold"] == 1 and info["n_test"] == len(recs) and info["model_config_name"] == train_cfg["model"]


def test_clinifact_train_and_zero_shot_steps(clinifact_data, train_cfg, tiny_gpt2, tmp_path):
    splits = {k: str(v) for k, v in clinifact_data.items()}
    out = {"predictions": str(tmp_path / "d.jsonl"), "info": str(tmp_path / "d.json")}
    S.clinifact_train(splits, out, {"train": train_cfg, "include_title": True, "predict_splits": ["test"], "checkpoint_dir": None})
    recs = list(read_jsonl(out["predictions"]))
    assert len(recs) == 6 and {r["split"] for r in recs} == {"test"}
    assert read_json(out["info"])["sizes"] == {"train": 12, "validation": 6, "test": 6}
    out_zs = {"predictions": str(tmp_path / "z.jsonl"), "info": str(tmp_path / "z.json")}
    S.clinifact_zero_shot({"test": splits["test"]}, out_zs, {"zero_shot": {"model": str(tiny_gpt2), "device": "cpu", "splits": ["test"]}})
    zs = list(read_jsonl(out_zs["predictions"]))
    assert [r["id"] for r in zs] == [r["id"] for r in recs]
    assert all(r["system"] == "zero_shot" and r["pred_label"] in S.CLINIFACT_LABELS for r in zs)


# ----------------------------------------------------------------------------------------- scoring


def _rec(i, label, pred, gold_ids, pred_ids, sents=("s0", "s1", "s2", "s3")):
    return {"id": f"c{i}", "label": label, "pred_label": pred, "evidence_ids": list(gold_ids),
            "pred_evidence_ids": None if pred_ids is None else list(pred_ids),
            "gold_evidence": [sents[j] for j in gold_ids], "evidence": [] if pred_ids is None else [sents[j] for j in pred_ids]}


RECORDS = [
    _rec(0, "SUPPORTED", "SUPPORTED", [0, 1], [0, 1, 2]),   # all gold found, right  -> strict 1
    _rec(1, "REFUTED", "REFUTED", [2], [3]),                # gold missed            -> strict 0
    _rec(2, "NOT ENOUGH INFO", "NOT ENOUGH INFO", [], []),  # NEI: label only        -> strict 1
    _rec(3, "REFUTED", "SUPPORTED", [1], [1]),              # wrong label            -> strict 0
]


def test_evidence_selection_fever_and_averitec_scores():
    counts = {"c0": 4, "c1": 4, "c2": 4, "c3": 4}
    ev = S.evidence_selection_scores(RECORDS, counts)
    # TP 3 (c0: 0,1; c3: 1), FP 2 (c0: 2; c1: 3), FN 1 (c1: 2), TN 16 - 6 = 10
    assert (ev["tp"], ev["fp"], ev["fn"], ev["tn"]) == (3, 2, 1, 10)
    assert ev["precision"] == pytest.approx(3 / 5) and ev["recall"] == pytest.approx(3 / 4)
    other_p, other_r = 10 / 11, 10 / 12
    assert ev["macro_precision"] == pytest.approx((3 / 5 + other_p) / 2)
    assert ev["macro_recall"] == pytest.approx((3 / 4 + other_r) / 2)
    assert ev["n_claims_with_gold"] == 3
    fever = S.fever_strict(RECORDS)
    assert fever == {"strict": 0.5, "n": 4, "n_label_only": 1}
    av = S.averitec_evidence(RECORDS, [0.25, 0.5], None, metric=exact)
    # evidence scores: c0 2/2 = 1, c1 0, c2 1 (no gold, no prediction), c3 1
    assert av["evidence_score"] == pytest.approx(0.75)
    assert av["score"] == {"0.25": 0.5, "0.5": 0.5}  # c0 and c2 (c3 has the wrong label)
    assert av["n_no_gold_evidence"] == 1


def test_score_healthfc_file_with_medsnip_and_classification(tmp_path, monkeypatch):
    preds = tmp_path / "p.jsonl"
    write_jsonl(preds, [dict(r, system="pipeline") for r in RECORDS] + [dict(RECORDS[0])])  # a duplicate id
    ds = tmp_path / "ds.jsonl"
    write_jsonl(ds, [{"id": f"c{i}", "sentences_en": ["a", "b", "c", "d"]} for i in range(4)])
    out = {"scores": str(tmp_path / "s.json"), "report": str(tmp_path / "r.json")}
    monkeypatch.setattr(S.averitec, "_default_metric", lambda: exact)  # no NLTK data needed here
    s = S.score({"predictions": str(preds), "dataset": str(ds)}, out, {"kind": "healthfc", "system": "pipeline", "lang": "en", "lambdas": [0.25]})
    assert s["n"] == 4 and s["skipped"]["by_reason"] == {"duplicate_id": 1}
    assert s["veracity"]["accuracy"] == pytest.approx(0.75)
    assert s["evidence"]["n_sentences"] == 16 and s["fever"]["strict"] == 0.5
    # MedSNIP over the 3 supported/refuted claims: FALSE (refuted) is positive: TP 1 (c1), FN 1 (c3), FP 0
    assert s["medsnip"]["n_excluded_nei"] == 1
    assert s["medsnip"]["ff1"] == pytest.approx(2 / 3)
    assert read_json(out["scores"]) == json.loads(json.dumps(s))


def test_score_non_selecting_and_level_of_evidence_systems(tmp_path):
    oracle = [dict(r, pred_evidence_ids=None) for r in RECORDS]
    s = S.score_healthfc(oracle, {"system": "oracle"})
    assert "evidence" not in s and "fever" not in s and "averitec" not in s and "medsnip" in s
    loe = [{"id": "a", "label": "high", "pred_label": "low", "pred_evidence_ids": None}, {"id": "b", "label": "low", "pred_label": "low", "pred_evidence_ids": None}]
    s = S.score_healthfc(loe, {"system": "level_of_evidence"})
    assert s["veracity"]["confusion"]["labels"] == S.LOE_LABELS and s["veracity"]["accuracy"] == 0.5 and "medsnip" not in s


def test_score_clinifact_counts_missing_predictions_as_wrong(tmp_path):
    preds = tmp_path / "p.jsonl"
    write_jsonl(preds, [{"id": "1", "split": "test", "label": "evidence", "pred_label": "evidence"},
                        {"id": "2", "split": "test", "label": "NEI", "pred_label": None},
                        {"id": "3", "split": "validation", "label": "NEI", "pred_label": "NEI"}])
    s = S.score({"predictions": str(preds)}, {"scores": str(tmp_path / "s.json")}, {"kind": "clinifact", "system": "zero_shot"})
    assert s["n"] == 2 and s["n_no_prediction"] == 1 and s["accuracy"] == 0.5
    assert s["per_class"]["NEI"]["recall"] == 0.0


# ------------------------------------------------------------------------------------------ tables


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
    t3 = S.healthfc_table3(files, entries)
    assert list(t3["system"]) == ["pipeline", "oracle"]
    pipe = t3.iloc[0]
    assert pipe["veracity F1"] == "60.0 ± 14.1" and pipe["evidence F1"] == "40.0 ± 0.0"
    assert pipe["paper veracity F1"] == 65.1 and pipe["paper evidence F1"] == 55.5 and pipe["paper model"] == "DeBERTa"
    assert t3.iloc[1]["paper veracity F1"] == 81.9 and t3.iloc[1]["evidence F1"] == ""
    bert = S.healthfc_table3(files[:2], [dict(e, model_name="bert-large-uncased") for e in entries[:2]])
    assert bert.iloc[0]["paper veracity F1"] == 50.1
    t5 = S.healthfc_table5(files, entries)
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
    df = S.healthfc_significance(files, entries, [["pipeline", "oracle"], ["pipeline", "joint"]], n_resamples=500)
    assert len(df) == 1  # the joint system was not run
    row = df.iloc[0]
    assert row["claims"] == 60 and row["claims (S/R)"] == 40 and row["df"] >= 1
    assert row["CI low"] <= row["delta B-A"] <= row["CI high"]

    cf = []
    for name, acc in (("a", 0.9), ("b", 0.5)):
        p = tmp_path / f"cf_{name}.jsonl"
        write_jsonl(p, [{"id": str(i), "split": "test", "label": S.CLINIFACT_LABELS[i % 3],
                         "pred_label": S.CLINIFACT_LABELS[i % 3] if rng.random() < acc else "NEI"} for i in range(90)])
        cf.append(str(p))
    mb = S.clinifact_significance(cf, [{"model": "a", "system": "discriminative"}, {"model": "b", "system": "zero_shot"}])
    assert list(mb["system B"]) == ["b (zero-shot)"] and mb.iloc[0]["pairs"] == 90 and mb.iloc[0]["p"] < 0.05


def test_table8_and_fig3_with_and_without_studies(tmp_path, clinifact_data):
    test = pd.read_csv(clinifact_data["test"], dtype=str, keep_default_na=False)
    test.loc[0, "nonInferiorityTypes"] = "['Non-Inferiority']"
    test.to_csv(clinifact_data["test"], index=False)
    preds = tmp_path / "p.jsonl"
    write_jsonl(preds, [{"id": r["index"], "split": "test", "label": S.CLINIFACT_LABELS[[1, 0, 2].index(int(r["label"]))],
                         "pred_label": "evidence"} for _, r in test.iterrows()])
    scores = tmp_path / "s.json"
    S.score({"predictions": str(preds)}, {"scores": str(scores)}, {"kind": "clinifact"})
    t8 = S.clinifact_table8([str(scores)], [{"model": "bio", "model_name": "dmis-lab/biobert-base-cased-v1.2", "system": "discriminative"}])
    assert t8.iloc[0]["paper accuracy"] == 80.2 and t8.iloc[0]["paper macro F1"] == 74.7
    assert t8.iloc[0]["accuracy"] == pytest.approx(100 * 2 / 6, abs=0.05)
    rob = S.clinifact_table8([str(scores)], [{"model": "rob", "model_name": "roberta-base", "system": "discriminative"}])
    assert rob.iloc[0]["paper accuracy"] == 75.4

    entries = [{"model": "bio", "system": "discriminative"}]
    df, notes = S.clinifact_fig3_table([str(preds)], entries, clinifact_data["test"], None)
    assert "panel (c) skipped" in notes[0] and set(df["panel"]) == {"class", "test_type"}
    assert set(df[df.panel == "test_type"]["group"]) == {"Superiority", "Non-inferiority"}
    studies = tmp_path / "studies.jsonl.gz"
    with gzip.open(studies, "wt", encoding="utf-8") as fh:
        for k, (_, r) in enumerate(test.iterrows()):
            branches = [{"abbrev": "All", "name": "All Conditions"}, {"abbrev": "BC10" if k % 2 else "BC11", "name": "Eye Diseases" if k % 2 else "Heart Diseases"}]
            fh.write(json.dumps({"protocolSection": {"identificationModule": {"nctId": r["nctId"]}},
                                 "derivedSection": {"conditionBrowseModule": {"browseBranches": branches}}}) + "\n")
    df, notes = S.clinifact_fig3_table([str(preds)], entries, clinifact_data["test"], studies)
    assert notes == []
    disease = df[(df.panel == "disease") & (df.metric == "macro_f1")]
    assert set(disease["group"]) == {"Eye Diseases", "Heart Diseases"} and set(disease["n"]) == {3}
    assert disease[disease.group == "Eye Diseases"]["paper (BioBERT)"].iloc[0] == 100.0

    out = {"png": str(tmp_path / "fig" / "f.png"), "pdf": str(tmp_path / "fig" / "f.pdf"),
           "csv": str(tmp_path / "t" / "f.csv"), "md": str(tmp_path / "t" / "f.md"), "tex": str(tmp_path / "t" / "f.tex")}
    S.tables({"predictions": [str(preds)], "test": str(clinifact_data["test"]), "studies": str(studies)}, out,
             {"table": "clinifact_fig3", "entries": entries})
    for p in out.values():
        assert Path(p).stat().st_size > 0
    assert "Fig. 3" in Path(out["md"]).read_text()


def test_statistical_test_type_parsing():
    assert S.statistical_test_type("['Superiority or Other']") == "Superiority or Other"
    assert S.statistical_test_type("['NON_INFERIORITY', 'EQUIVALENCE']") == "Equivalence / Non-inferiority"
    assert S.statistical_test_type("") == "Unknown"
    with pytest.raises(ValueError, match="options.table"):
        S.tables({}, {}, {"table": "nope"})
