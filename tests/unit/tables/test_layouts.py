"""The papers' tables in their papers' layouts (the LaTeX beside the tidy CSV), from small hand-made scores: the
column groups, the oracle as a column, our rows and the paper's under their title rows, the stds as subscripts,
the papers' precision, the notes on a stack that kept its best member, on the paper's models we did not run and
on a smoke-scale run; and every layout compiled by a real pdflatex without an overfull box."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from medfc.clinifact import stats as cstats
from medfc.common import latex
from medfc.healthfc import stats as hstats
from medfc.medsnip.table import table_latex
from medfc.tables import clinifact, healthfc
from medfc.tables.common import not_run
from medfc.common.papers import read_paper_numbers
from tests.helpers.tex import compile_fragments, overfull_boxes

PAPERS = Path(__file__).resolve().parents[3] / "resources" / "papers" / "numbers.yaml"
NUMBERS = read_paper_numbers(PAPERS)


def _scores(tmp_path: Path, name: str, f1: float, ev: float | None = None, n: int = 10) -> str:
    d: dict = {"n": n, "veracity": {"macro_precision": f1, "macro_recall": f1, "macro_f1": f1, "accuracy": f1},
               "medsnip": {"ff1": f1, "coverage": 1.0}, "fever": {"strict": 0.25}}
    if ev is not None:
        d["evidence"] = {"macro_precision": ev, "macro_recall": ev, "macro_f1": ev, "f1": ev}
    p = tmp_path / name / "scores.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(d))
    return str(p)


def _healthfc_runs(tmp_path: Path, systems: dict[str, tuple[float, float]], models=("minilm",)) -> tuple[list[str], list[dict]]:
    files, entries = [], []
    for model in models:
        for system, vals in systems.items():
            for fold, v in enumerate(vals):
                files.append(_scores(tmp_path, f"{model}/{system}/fold{fold}", v, 0.4 if system in ("pipeline", "joint") else None))
                entries.append({"lang": "en", "model": model, "system": system, "fold": fold})
    return files, entries


def _body(table: latex.LatexTable) -> str:
    """The rendered tabular alone (no caption, no notes)."""
    text = latex.render(table)
    return text[text.index(r"\toprule"):text.index(r"\bottomrule")]


def test_table3_has_the_papers_column_groups_and_the_oracle_as_a_column(tmp_path):
    files, entries = _healthfc_runs(tmp_path, {"pipeline": (0.5, 0.7), "joint": (0.6, 0.6), "oracle": (0.8, 0.9)})
    t3 = healthfc.table3(files, entries, NUMBERS, "smoke")[1]
    assert [c.group for c in t3.columns] == ["", "", *["Evidence Selection"] * 3, *["Veracity Prediction"] * 3, "Oracle Ver. Pred."]
    assert [c.header for c in t3.columns][:2] == ["System", "Base Model"]
    ours, paper = t3.blocks
    assert (ours.title, paper.title) == ("Ours (smoke scale)", "Reported: Vladika et al. 2024")
    # one row per system and model, the oracle's veracity F1 on the pipeline's row; the joint row has none
    assert [r[0] for r in ours.rows] == ["pipeline", "joint"]
    oracle, ver_f1 = ours.rows[0][-1], ours.rows[0][7]
    assert (oracle.mean, oracle.sd, ver_f1.mean, ver_f1.sd) == pytest.approx((85.0, 7.0710678, 60.0, 14.142135))
    assert ours.rows[1][-1] == latex.DASH
    # the paper's eight rows with their stds and oracle F1
    assert [(r[0], r[1]) for r in paper.rows][:2] == [("pipeline", "XLM-R (German)"), ("pipeline", "XLM-R (English)")]
    assert len(paper.rows) == 8
    body = _body(t3)
    assert "$60.0_{14.1}$" in body and "$85.0_{7.1}$" in body  # ours, one decimal each
    assert "$65.1_{3.2}$" in body and "$81.9_{1.4}$" in body and "$73.4_{1.4}$" in body  # DeBERTa: pipeline, oracle, joint
    assert r"\multicolumn{3}{c}{Evidence Selection}" in body and "Oracle Ver. Pred." in body
    assert "FEVER" not in body and "±" not in body
    notes = " ".join(t3.notes)
    assert "smoke-sized" in notes and "DeBERTa" in notes and "did not train" in notes


def test_table3_without_a_pipeline_run_keeps_the_oracle_and_the_papers_pipeline_rows(tmp_path):
    files, entries = _healthfc_runs(tmp_path, {"oracle": (0.8, 0.6)})
    t3 = healthfc.table3(files, entries, NUMBERS, "cpu")[1]
    ours, paper = t3.blocks
    assert ours.title == "Ours (CPU recipe)" and len(ours.rows) == 1 and ours.rows[0][0] == "pipeline"
    assert ours.rows[0][2:8] == [None] * 6 and ours.rows[0][8].mean == pytest.approx(70.0)
    assert {r[0] for r in paper.rows} == {"pipeline"}
    assert not any("smoke" in n for n in t3.notes)


def test_table3_companion_holds_what_the_paper_has_no_column_for(tmp_path):
    files, entries = _healthfc_runs(tmp_path, {"pipeline": (0.5, 0.7), "oracle": (0.8, 0.9)})
    df, table = healthfc.table3_extra(files, entries, "smoke")
    assert list(df["system"]) == ["pipeline", "oracle"] and df.iloc[0]["FEVER strict"] == "25.0 ± 0.0"
    assert [c.header for c in table.columns][3:] == ["Evid. F1", "Strict", "@0.25", "FF1", "Coverage"]
    assert table.blocks[0].rows[0][4] == latex.MeanSD(25.0, 0.0)


def test_table5_the_papers_experiments_with_their_stds(tmp_path):
    files, entries = _healthfc_runs(tmp_path, {"claims_only": (0.3, 0.5), "gold_explanations": (0.6, 0.6)})
    t5 = healthfc.table5(files, entries, NUMBERS, "smoke")[1]
    assert [c.header for c in t5.columns] == ["Experiment", "Base Model", "P", "R", "F1"]
    ours, paper = t5.blocks
    assert [r[0] for r in ours.rows] == ["Claims only", "Gold explanations"]
    assert [r[:2] for r in paper.rows] == [["Claims only", "DeBERTa"], ["Gold explanations", "DeBERTa"]]
    assert paper.rows[0][4] == latex.MeanSD(39.3, 0.5)
    df, extra = healthfc.table5_extra(files, entries, "smoke")
    assert list(df["claims"]) == [20, 20] and [c.header for c in extra.columns][-2:] == ["Claims", "Accuracy"]


def _info(path: str, kept: str | None, members=("tfidf", "gbm")) -> str:
    info = {"method": "stack", "selected": [kept] if kept else list(members), "meta_model": None if kept else {"C": 1.0},
            "inner_cv": {"chosen": f"{kept} alone" if kept else "stack"}}
    p = Path(path).with_name("info.json")
    p.write_text(json.dumps(info))
    return str(p)


def _clinifact_scores(tmp_path: Path, name: str, acc: float, f1: float) -> str:
    p = tmp_path / name / "scores.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps({"n": 8, "accuracy": acc, "macro_precision": f1, "macro_recall": f1, "macro_f1": f1,
                             "ci": {"macro_f1": {"low": f1 - 0.1, "high": f1 + 0.1}}}))
    return str(p)


def test_table8_groups_by_kind_and_notes_the_stack_that_kept_its_best_member(tmp_path):
    entries = [{"model": "tfidf", "system": "discriminative"}, {"model": "tfidf+gbm", "system": "discriminative"},
               {"model": "tinylm", "system": "zero_shot"}]
    files = [_clinifact_scores(tmp_path, "tfidf", 0.875, 0.619), _clinifact_scores(tmp_path, "tfidf+gbm", 0.875, 0.619),
             _clinifact_scores(tmp_path, "zero_shot/tinylm", 0.5, 0.3)]
    infos = [_info(files[1], "tfidf")]
    df, t8 = clinifact.table8(files, entries, NUMBERS, "smoke", infos)
    assert [c.header for c in t8.columns] == ["Kind", "Model", "Accuracy", "P", "R", "F1"]
    ours, paper = t8.blocks
    assert [r[0] for r in ours.rows] == ["discriminative", "discriminative", "zero-shot"]
    assert ours.rows[1][1] == latex.marked("tfidf+gbm", "a") and ours.rows[0][2] == 87.5
    assert [r[1] for r in paper.rows] == ["BioBERT", "PubMedBERT", "RoBERTa", "OpenBioLLM-8B (zero-shot)", "Llama3-70B (zero-shot)",
                                          "OpenBioLLM-70B (zero-shot)"]
    assert paper.rows[1][5] == latex.DASH  # PubMedBERT: the paper states no macro-F1
    notes = " ".join(t8.notes)
    assert "a: tfidf+gbm: the stack kept its best member, tfidf" in notes and "smoke-sized" in notes
    body = _body(t8)
    assert r"tfidf+gbm\textsuperscript{a}" in body and "87.5" in body and "87.500" not in body
    assert list(df[df.source == "ours"]["note"]) == ["", "kept its best member, tfidf", ""]
    # a stack that chose a meta-model gets no note
    _, t8 = clinifact.table8(files, entries, NUMBERS, "smoke", [_info(files[1], None)])
    assert t8.blocks[0].rows[1][1] == "tfidf+gbm"
    df, extra = clinifact.table8_extra(files, entries, "smoke")
    assert list(df["CI low"]) == [51.9, 51.9, 20.0] and [c.header for c in extra.columns][2:] == ["Pairs", "F1", "low", "high"]


def test_the_papers_models_we_did_not_run():
    assert not_run(["BERT", "BioBERT", "DeBERTa", "XLM-R (German)"], ["deberta-v3-large", "bert-large", "xlm-r-large"]) == ["BioBERT"]
    assert not_run(["OpenBioLLM-8B (zero-shot)", "Llama3-70B (zero-shot)"], ["openbiollm-8b"]) == ["Llama3-70B (zero-shot)"]


def test_significance_tables_three_places_for_p_and_an_interval_for_delta():
    df = pd.DataFrame([{"lang": "en", "model": "minilm", "system A": "pipeline", "system B": "oracle", "claims": 12,
                        "McNemar-Bowker chi2": 8.6, "df": 3, "p": 0.03507, "metric": "ff1", "claims (S/R)": 8, "A": 22.2, "B": 0.0,
                        "delta B-A": -22.2, "CI low": -54.5, "CI high": 0.0, "bootstrap p": 0.352, "significant": False}])
    body = _body(healthfc.significance_latex(df, "smoke"))
    assert "0.035" in body and "0.03507" not in body and "[$-$54.5, 0.0]" in body and r"$\chi$$^{2}$" in body
    assert "Paired bootstrap, FF1 (\\%)" in body
    cf = pd.DataFrame([{"system A": "tfidf", "system B": "gbm", "pairs": 8, "accuracy A": 87.5, "accuracy B": 50.0,
                        "McNemar-Bowker chi2": 2.9, "df": 3, "p": 0.409}])
    body = _body(clinifact.significance_latex(cf, "cpu"))
    assert "tfidf & gbm & 8 & 87.5 & 50.0 & 2.9 & 3 & 0.409" in body


def _dataset_table2() -> pd.DataFrame:
    rows = []
    for lang in ("en", "de"):
        for aspect, paper in hstats.PAPER_TABLE2.items():
            p = paper if lang == "en" else (None,) * 4
            rows.append({"aspect": aspect, "language": lang, "n": 28, "mean": 2.36, "std": 0.87, "min": 1, "max": 4,
                         "paper_mean": p[0], "paper_std": p[1], "paper_min": p[2], "paper_max": p[3]})
    return pd.DataFrame(rows)


def test_healthfc_table2_in_the_papers_layout():
    t2 = hstats.table2_latex(_dataset_table2(), 31)
    assert [c.header for c in t2.columns] == ["Aspect", "μ", "σ", "Min", "Max"]
    assert [b.title for b in t2.blocks] == ["Ours, English", "Ours, German", "Reported: Vladika et al. 2024"]
    body = _body(t2)
    assert "No. of evid. sent. & 2.4 & 0.9 & 1 & 4" in body and "Words: articles & 857.0 & 369.0 & 244 & 2{,}677" in body
    assert "31 claims" in " ".join(t2.notes)


def test_clinifact_tables_4_and_6_beside_the_released_data():
    release = NUMBERS["clinifact"]["release_stats"]
    words = pd.DataFrame([{"text": "claim", "mean": 19.1, "std": 3.3, "min": 13, "max": 28}])
    t4 = cstats.table4_latex(words, release["table4"], "Ours: this run's pairs (37)")
    assert [b.title for b in t4.blocks] == ["Ours: this run's pairs (37)", "Released data: Zhang et al. 2025"]
    assert "abstract & 246.7 & 84.5 & 22 & 1{,}013" in _body(t4)
    labels = pd.DataFrame([{"split": "test", "evidence": 4, "inconclusive": 0, "not enough information": 4, "total": 8}])
    body = _body(cstats.table6_latex(labels, release["table6"], "Ours"))
    assert "test & 4 & 0 & 4 & 8" in body and "total & 562 & 383 & 1{,}025 & 1{,}970" in body


def _medsnip_scores() -> tuple[dict, list[dict]]:
    scores = {"options": {"baseline_mode": "atoms", "ci_level": 0.95}}
    rows = [{"verifier": "v", "mode": m, "units": 12, "FF1": f, "FF1_ci_low": f - 0.1, "FF1_ci_high": f + 0.1,
             "delta_vs_atoms": d, "delta_ci_low": None if d is None else d - 0.2, "delta_ci_high": None if d is None else d + 0.1,
             "p_gt_0": None if d is None else 0.61, "verify_calls": 12} for m, f, d in (("atoms", 0.5, None), ("direct", 0.6, 0.1))]
    return scores, rows


def test_medsnip_table2_layout_three_decimals():
    scores, rows = _medsnip_scores()
    table = table_latex(scores, rows, "MedSNIP on bench: FF1 with its 95% interval.")
    body = _body(table)
    assert "v & atoms & 12 & 0.500 & [0.400, 0.600]" in body and "& direct & 12 & 0.600 & [0.500, 0.700] & 0.100 & [$-$0.100, 0.200] & 0.610 & 12" in body
    assert r"\multicolumn{3}{c}{$\Delta$ FF1 vs atoms}" in body


@pytest.mark.slow
def test_every_layout_compiles_and_fits(tmp_path):
    files, entries = _healthfc_runs(tmp_path / "h", {"pipeline": (0.5, 0.7), "joint": (0.6, 0.6), "oracle": (0.8, 0.9),
                                                      "claims_only": (0.3, 0.5)}, models=("minilm", "tfidf+minilm-with-a-long-name"))
    cf_entries = [{"model": "tfidf", "system": "discriminative"}, {"model": "tfidf+gbm", "system": "discriminative"}]
    cf_files = [_clinifact_scores(tmp_path, "tfidf", 0.875, 0.619), _clinifact_scores(tmp_path, "tfidf+gbm", 0.875, 0.619)]
    release = NUMBERS["clinifact"]["release_stats"]
    sig = pd.DataFrame([{"lang": "de", "model": "xlm-r-large", "system A": "claims_only", "system B": "gold_explanations", "claims": 750,
                         "McNemar-Bowker chi2": 18.61, "df": 3, "p": 0.0003, "metric": "ff1", "claims (S/R)": 327, "A": 22.2,
                         "B": 40.0, "delta B-A": 17.8, "CI low": -54.5, "CI high": 100.0, "bootstrap p": 0.0001, "significant": True}])
    tables = {
        "t3": healthfc.table3(files, entries, NUMBERS, "smoke")[1],
        "t3x": healthfc.table3_extra(files, entries, "smoke")[1],
        "t5": healthfc.table5(files, entries, NUMBERS, "smoke")[1],
        "t5x": healthfc.table5_extra(files, entries, "smoke")[1],
        "t8": clinifact.table8(cf_files, cf_entries, NUMBERS, "smoke", [_info(cf_files[1], "tfidf")])[1],
        "t8x": clinifact.table8_extra(cf_files, cf_entries, "smoke")[1], "sig": healthfc.significance_latex(sig, "paper"),
        "t2": hstats.table2_latex(_dataset_table2(), 31),
        "t4": cstats.table4_latex(pd.DataFrame([{"text": "claim", "mean": 19.1, "std": 3.3, "min": 13, "max": 28}]), release["table4"], "Ours"),
        "t6": cstats.table6_latex(pd.DataFrame([{"split": "test", "evidence": 4, "inconclusive": 0, "not enough information": 4,
                                                 "total": 8}]), release["table6"], "Ours"),
        "medsnip": table_latex(*_medsnip_scores(), "MedSNIP on bench (95% interval)."),
    }
    frags = []
    for name, table in tables.items():
        (tmp_path / f"{name}.tex").write_text(latex.render(table))
        frags.append(tmp_path / f"{name}.tex")
    log = compile_fragments(frags, tmp_path / "doc")
    assert [b for b in overfull_boxes(log) if b > 1.0] == []
