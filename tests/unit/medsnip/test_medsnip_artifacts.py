"""MedSNIP Table 3 (structure of answers and units), Table 6 (τ swept against coverage and FF1, from the verdicts as
they are) and Fig. 21 (verifier calls against FF1) on the demo bench, decomposed and verified through the scripted
fake server (the pipeline of test_medsnip_pipeline.py: four answers, a claim-only verifier in every mode and a retrieval
verifier on the human snippets, one of whose verdicts has confidence 0.8)."""

from __future__ import annotations

import csv
import struct

import pytest

from medfc.medsnip import steps
from tests.helpers.config import call_step
from tests.helpers.medsnip import score_opts
from tests.helpers.tex import compile_fragments, overfull_boxes
from tests.unit.medsnip.test_medsnip_pipeline import MODES, _pipeline


@pytest.fixture()
def verified(tmp_path, fake_llm, passages):
    d, _, _, _ = _pipeline(tmp_path, fake_llm.base_url, passages)
    calls_before = len(fake_llm.chat_requests())
    return d, fake_llm, calls_before


def _outputs(d, stem):
    return {k: d / f"{stem}.{k}" for k in ("csv", "md", "tex", "html")}


def _no_overfull(tmp_path, *tex):
    log = compile_fragments(list(tex), tmp_path / "doc")
    assert not [b for b in overfull_boxes(log) if b > 1.0], overfull_boxes(log)


def test_table3_counts_the_answers_structure_and_each_modes_units(verified, tmp_path):
    d, _, _ = verified
    # a second "dataset": the same answers decomposed in two modes only (its other columns stay empty)
    out = _outputs(d, "t3")
    rows = call_step(steps.structure, {"answers": [d / "answers.jsonl", d / "answers.jsonl"],
                                       "units": [d / f"units_{m}.jsonl" for m in MODES] + [d / "units_atoms.jsonl", d / "units_direct.jsonl"]},
                     out, {"datasets": ["bench", "healthfc"], "titles": {"bench": "MedSNIP-Bench", "healthfc": "HealthFC"},
                           "units": [{"dataset": "bench", "mode": m} for m in MODES] + [{"dataset": "healthfc", "mode": m} for m in ("atoms", "direct")]})
    bench, other = rows
    # 4 answers, 11 sentences; atoms 11, group 8 (grouping 11 atoms), direct 11, human atoms 14, human snippets 11 (of 14 atoms)
    assert (bench["dataset"], bench["answers"], bench["sentences_per_answer"], bench["single_sentence_share"]) == ("MedSNIP-Bench", 4, 2.75, 0.0)
    assert [bench[f"units_{m}"] for m in MODES] == [2.75, 2.0, 2.75, 3.5, 2.75]
    assert (bench["atoms_per_snippet_group"], bench["atoms_per_snippet_human_snippets"]) == (1.375, round(14 / 11, 4))
    assert (other["units_atoms"], other["units_direct"], other["units_group"], other["atoms_per_snippet_group"]) == (2.75, 2.75, None, None)
    with out["csv"].open(encoding="utf-8") as fh:
        assert [r["dataset"] for r in csv.DictReader(fh)] == ["MedSNIP-Bench", "HealthFC"]
    tex = out["tex"].read_text(encoding="utf-8")
    assert r"\multicolumn{5}{c}{Units per answer}" in tex and "human snippets" in tex and "MedSNIP Table 3" in tex
    _no_overfull(tmp_path, out["tex"])


def test_table6_sweeps_tau_over_the_cached_verdicts_without_asking_the_llm(verified, tmp_path):
    d, server, calls_before = verified
    out = _outputs(d, "t6")
    verdicts = [d / f"ver_co_{m}.jsonl" for m in MODES] + [d / "ver_rag.jsonl"]
    rows = call_step(steps.tau, {"answers": d / "answers.jsonl", "verdicts": verdicts}, out,
                     {"title": "MedSNIP-Bench", "taus": [1.0, 0.5, 0.8], "score": score_opts()})
    assert len(server.chat_requests()) == calls_before  # no new call
    rag = [(r["tau"], r["configured"], r["scored"], r["coverage"], r["ff1"]) for r in rows if r["verifier"] == "served-rag"]
    # ten retrieval verdicts at confidence 0.95, one at 0.8 (the thirst snippet, TRUE and right): the configured τ 0.9 joins the grid
    third, covered = pytest.approx(2 / 3, abs=1e-4), pytest.approx(10 / 11, abs=1e-4)  # the table's four places
    assert rag == [(0.5, False, 11, 1.0, third), (0.8, False, 11, 1.0, third), (0.9, True, 10, covered, third), (1.0, False, 0, 0.0, 0.0)]
    single = [(r["mode"], r["tau"], r["scored"]) for r in rows if r["verifier"] == "served"]
    assert single == [("atoms", None, 11), ("group", None, 8), ("direct", None, 11), ("human_atoms", None, 14), ("human_snippets", None, 11)]
    assert [r["verifier"] for r in rows][:4] == ["served-rag"] * 4  # the gated arm first
    md = out["md"].read_text(encoding="utf-8")
    assert md.startswith("MedSNIP Table 6 on MedSNIP-Bench") and "no new LLM call" in md and "configured τ = 0.9" in md
    tex = out["tex"].read_text(encoding="utf-8")
    assert r"0.90$^*$" in tex and r"Retrieval verifier: a verdict counts at confidence $\geq$ $\tau$" in tex
    _no_overfull(tmp_path, out["tex"])
    # without a retrieval verifier the table says so, with the single-call rows only
    call_step(steps.tau, {"answers": d / "answers.jsonl", "verdicts": verdicts[:1]}, _outputs(d, "t6b"),
              {"title": "x", "taus": [0.5], "score": score_opts()})
    assert "No retrieval verifier ran in this run" in (d / "t6b.md").read_text(encoding="utf-8")


def test_fig21_plots_verifier_calls_against_ff1_per_mode(verified, tmp_path):
    d, _, _ = verified
    verdicts = [d / f"ver_co_{m}.jsonl" for m in MODES] + [d / "ver_rag.jsonl"]
    call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": verdicts}, {"scores": d / "scores.json"},
              score_opts(fidelity_embedding_model="none"))
    out = {"png": d / "f21.png", "pdf": d / "f21.pdf", "csv": d / "f21.csv"}
    points = call_step(steps.calls, {"scores": d / "scores.json"}, out, {"title": "MedSNIP-Bench", "dataset": "bench"})
    assert [(p["verifier"], p["mode"], p["verify_calls"]) for p in points] == [
        ("served", "atoms", 11), ("served", "group", 8), ("served", "direct", 11), ("served", "human_atoms", 14),
        ("served", "human_snippets", 11), ("served-rag", "human_snippets", 23)]
    assert all(p["ff1"] == pytest.approx(2 / 3, abs=1e-4) for p in points)
    with out["csv"].open(encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 6
    width, _ = struct.unpack(">II", out["png"].read_bytes()[16:24])
    assert 3.0 * 300 <= width <= 3.6 * 300  # a column's width at 300 dpi
    pdf = out["pdf"].read_bytes()
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # embedded TrueType, no Type 3 font
