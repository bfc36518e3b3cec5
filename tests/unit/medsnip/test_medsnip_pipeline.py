"""MedSNIP end to end on the demo bench file through a fake OpenAI-compatible server:
prepare → decompose (atoms, atomize-then-group, snippet-direct, human) → verify → score."""

from __future__ import annotations

import json

import pytest

from tests.helpers.config import call_step
from tests.helpers.medsnip import (
    PROMPT_DIR,
    decompose_opts,
    llm_opts,
    prepare_opts,
    retrieval_opts,
    score_opts,
    verify_opts,
)
from tests.unit.medsnip.conftest import DEMO_BENCH

from medfc.common.io import read_json, read_jsonl
from medfc.common.options import OptionsError
from medfc.medsnip import analysis, steps
from medfc.llm.prompts import PromptError
from medfc.medsnip.options import DecomposeOptions, VerifyOptions

MODES = ("atoms", "group", "direct", "human_atoms", "human_snippets")


def _pipeline(tmp_path, url, passages, prompt_dir=PROMPT_DIR):
    d = tmp_path / "run"
    dirs = {"prompt_dir": prompt_dir, "unit_cache_dir": str(tmp_path / "units")}
    call_step(steps.prepare, {"source": str(DEMO_BENCH)}, {"answers": d / "answers.jsonl", "info": d / "prepare.json"}, prepare_opts(**dirs))
    infos = {}
    for mode in MODES:
        infos[mode] = call_step(steps.decompose, {"answers": d / "answers.jsonl"},
                                {"units": d / f"units_{mode}.jsonl", "info": d / f"dec_{mode}.json", "report": d / f"dec_{mode}_report.json"},
                                decompose_opts(mode, llm_opts(url), **dirs))
    vinfo = {}
    for mode in MODES:
        vinfo[mode] = call_step(steps.verify, {"units": d / f"units_{mode}.jsonl", "answers": d / "answers.jsonl"},
                                {"verdicts": d / f"ver_co_{mode}.jsonl", "info": d / f"ver_co_{mode}.json"},
                                verify_opts("claim_only", "served", llm_opts(url), **dirs))
    rag = call_step(steps.verify, {"units": d / "units_human_snippets.jsonl", "answers": d / "answers.jsonl"},
                    {"verdicts": d / "ver_rag.jsonl", "info": d / "ver_rag.json", "report": d / "ver_rag_report.json"},
                    verify_opts("retrieval", "served-rag", llm_opts(url), retrieval=retrieval_opts(passages, tmp_path / "search"), **dirs))
    return d, infos, vinfo, rag


def test_demo_bench_end_to_end(tmp_path, fake_llm, passages):
    d, dec, ver, rag = _pipeline(tmp_path, fake_llm.base_url, passages)
    # decomposition: exact units
    atoms = list(read_jsonl(d / "units_atoms.jsonl"))
    assert [u["unit_id"] for u in atoms][:4] == ["101:atoms:1", "101:atoms:2", "101:atoms:3", "102:atoms:1"]
    assert len(atoms) == 11 and atoms[2]["text"] == "Vitamin D cures the common cold." and atoms[2]["source_sentences"] == [2]
    group = list(read_jsonl(d / "units_group.jsonl"))
    assert [(u["unit_id"], u["pattern"], u["source_atoms"], u["source_sentences"]) for u in group[:2]] == [
        ("101:group:1", "A", [1, 2], [0, 1]), ("101:group:2", "D", [3], [2])]
    g0 = group[0]
    answer = next(a for a in read_jsonl(d / "answers.jsonl") if a["answer_id"] == "101")
    assert g0["text"] == ("Taking 600 to 800 IU of vitamin D per day is safe for most adults. "
                          "Vitamin D doses above 4,000 IU per day can cause high calcium levels.")
    assert [answer["text"][s:e] for s, e in g0["spans"]] == ["Taking 600 to 800 IU of vitamin D per day is safe for most adults",
                                                            "Vitamin D doses above 4,000 IU per day can cause high calcium levels"]
    assert len(group) == 8 and [u["pattern"] for u in read_jsonl(d / "units_direct.jsonl")].count("B") == 2
    assert [len(list(read_jsonl(d / f"units_{m}.jsonl"))) for m in ("direct", "human_atoms", "human_snippets")] == [11, 14, 11]
    # calls: extract once per answer (+1 repair for the malformed answer of 104), shared by atoms and group
    assert dec["atoms"]["usage"]["calls"] == 5 and dec["atoms"]["counts"]["extract_repaired"] == 1
    assert dec["atoms"]["calls"]["decompose:extract:repair"]["calls"] == 1
    assert dec["group"]["counts"]["extract_cached"] == 4 and dec["group"]["calls"]["total"]["calls"] == 4  # cluster only
    assert dec["group"]["usage"]["calls"] == 9  # logical: extract 4 + repair 1 + cluster 4
    assert dec["direct"]["usage"]["calls"] == 4 and dec["human_atoms"]["usage"]["calls"] == 0
    # verification: one call per unit; exact verdicts
    assert [ver[m]["usage"]["calls"] for m in ("atoms", "group", "direct", "human_atoms", "human_snippets")] == [11, 8, 11, 14, 11]
    verdicts = {v["unit_id"]: v["verdict"] for v in read_jsonl(d / "ver_co_human_snippets.jsonl")}
    assert [k for k, v in verdicts.items() if v == "FALSE"] == ["101:human_snippets:2", "101:human_snippets:3", "102:human_snippets:3"]
    # retrieval: search then answer (2 calls a unit); the low-confidence unit is re-prompted once (3 calls)
    assert rag["usage"]["calls"] == 23 and rag["counts"] == {"abstained": 0, "cap_hit": 0, "forced_final": 0,
                                                             "guard_low_confidence": 1, "malformed": 0, "searches_bm25": 11}
    thirst = next(v for v in read_jsonl(d / "ver_rag.jsonl") if v["unit_id"] == "104:human_snippets:2")
    assert (thirst["verdict"], thirst["confidence"], thirst["rounds"]) == ("TRUE", 0.8, 3)
    assert thirst["evidence"][0]["hits"][0]["title"] == "Fluids"
    cold = next(v for v in read_jsonl(d / "ver_rag.jsonl") if v["unit_id"] == "101:human_snippets:3")
    assert cold["evidence"][0]["hits"][0] == {"title": "Vitamin D and colds", "text": "Trials found that vitamin D does not cure the common cold.",
                                              "url": "https://example.org/p1"}

    # scoring, MedSNIP-Bench style: units against unit gold, no aggregation
    res = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [d / f"ver_co_{m}.jsonl" for m in MODES] + [d / "ver_rag.jsonl"],
                                  "decompositions": [d / f"dec_{m}.json" for m in MODES],
                                  "verifications": [d / f"ver_co_{m}.json" for m in MODES] + [d / "ver_rag.json"]},
                    {"scores": d / "scores.json", "report": d / "score_report.json"}, score_opts())
    arms = res["arms"]
    # atoms: gold FALSE on 3 sentences; predicted FALSE: the cold and antibiotic atoms (TP) and the 4,000 IU atom (FP); HbA1c missed
    assert arms["served/atoms"]["counts"] == {"tp_false": 2, "fp_false": 1, "fn_false": 1, "tn_false": 7}
    assert arms["served/atoms"]["ff1"] == pytest.approx(2 / 3)
    assert arms["served/group"]["counts"] == {"tp_false": 2, "fp_false": 1, "fn_false": 1, "tn_false": 4}
    assert arms["served/human_atoms"]["counts"] == {"tp_false": 2, "fp_false": 1, "fn_false": 1, "tn_false": 10}
    assert arms["served/group"]["vs_baseline"]["diff"] == 0.0 and arms["served/group"]["vs_baseline"]["n_clusters"] == 4
    # FF1's own interval resamples whole answers: FF1 is at most 1, and the observed value is the arm's FF1
    ci = arms["served/atoms"]["ff1_interval"]
    assert ci["ff1"] == pytest.approx(2 / 3) and 0.0 <= ci["ci_low"] <= 2 / 3 <= ci["ci_high"] <= 1.0 and ci["n_clusters"] == 4
    # retrieval at tau 0.9: the 0.8-confidence unit is not addressed; coverage 10/11
    r = arms["served-rag/human_snippets"]
    assert (r["n_scored"], r["coverage"], r["unit_coverage"]) == (10, pytest.approx(10 / 11), pytest.approx(10 / 11))
    assert r["ff1"] == pytest.approx(2 / 3) and r["rounds_mean"] == pytest.approx(23 / 11)
    # cost: verify tokens priced at $2.50 / $15 per million
    c = arms["served/group"]["cost"]
    assert (c["decompose"]["calls"], c["verify"]["calls"], c["total"]["calls"]) == (9, 8, 17)
    assert c["verify"]["cost_usd"] == pytest.approx((c["verify"]["prompt_tokens"] * 2.5 + c["verify"]["completion_tokens"] * 15) / 1e6)
    # per pattern (human snippets vs their atoms, gold = general): the D pattern holds the 4,000 IU FP and the HbA1c FN
    pp = res["per_pattern"]["served"]
    assert {k: v["n"] for k, v in pp.items()} == {"A": 1, "B": 1, "C": 1, "D": 4, "E": 1, "F": 3, "all": 11}
    assert pp["all"]["ff1_snippets"] == pytest.approx(2 / 3) and pp["all"]["delta"] == 0.0
    assert pp["all"]["n_clusters"] == 4 and pp["all"]["cluster_ci_low"] <= 0.0 <= pp["all"]["cluster_ci_high"]
    # boundary fidelity: group merges sentences 0+1 of three answers -> (2/3 * 3 + 1 * 5) / 8
    bf = res["boundary_fidelity"]
    assert bf["group"]["sentence_set_f1"] == pytest.approx(7 / 8) and bf["direct"]["sentence_set_f1"] == 1.0
    assert bf["group"]["ari_sentences"] == pytest.approx(0.25) and bf["direct"]["ari_sentences"] == 1.0
    # ... and the text of each pair: snippet-direct found the human sentence sets, so each of its snippets is
    # paired with the human snippet of the same sentences; ROUGE-L and the MiniLM cosine of those texts
    human = {(u["answer_id"], tuple(u["source_sentences"])): u["text"] for u in read_jsonl(d / "units_human_snippets.jsonl")}
    direct = list(read_jsonl(d / "units_direct.jsonl"))
    expected = [analysis.rouge_l(u["text"], human[(u["answer_id"], tuple(u["source_sentences"]))]) for u in direct]
    assert (bf["direct"]["n_pairs"], bf["group"]["n_pairs"]) == (11, 8)
    assert bf["direct"]["rouge_l"] == pytest.approx(sum(expected) / 11) and 0.5 < bf["direct"]["rouge_l"] < 1.0
    assert 0.5 < bf["group"]["cosine"] < bf["direct"]["cosine"] <= 1.0
    off = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [d / "ver_co_direct.jsonl"]}, {"scores": d / "s_off.json"},
                    score_opts(fidelity_embedding_model="none", rouge_stemmer=False))["boundary_fidelity"]["direct"]
    assert off["cosine"] is None and off["rouge_l"] == pytest.approx(
        sum(analysis.rouge_l(u["text"], human[(u["answer_id"], tuple(u["source_sentences"]))], stem=False) for u in direct) / 11)
    # the table: one row per verifier and mode, CSV + Markdown + LaTeX
    rows = call_step(steps.table, {"scores": d / "scores.json"}, {"csv": d / "t.csv", "md": d / "t.md", "tex": d / "t.tex"}, {"title": "demo", "dataset": "bench"})
    table = (d / "t.csv").read_text().splitlines()
    assert table[0] == ("source,verifier,mode,units,unit_coverage,failed,unparsed,decompose_failed,decompose_unparsed,scored,coverage,FF1,"
                        "FF1_ci_low,FF1_ci_high,delta_vs_atoms,delta_ci_low,delta_ci_high,p_gt_0,verify_calls,decompose_calls,total_calls,"
                        "verify_calls_saved_pct,total_calls_change_pct,tokens,cost_usd")
    assert {(r["failed"], r["unparsed"], r["decompose_failed"], r["decompose_unparsed"]) for r in rows} == {(0, 0, 0, 0)}
    assert [(r["verifier"], r["mode"], r["units"], r["FF1"], r["total_calls"]) for r in rows] == [
        ("served", "atoms", 11, 0.6667, 16), ("served", "group", 8, 0.6667, 17), ("served", "direct", 11, 0.6667, 15),
        ("served", "human_atoms", 14, 0.6667, 14), ("served", "human_snippets", 11, 0.6667, 11),
        ("served-rag", "human_snippets", 11, 0.6667, 23)]
    assert rows[0]["delta_vs_atoms"] is None and rows[1]["delta_vs_atoms"] == 0.0
    md = (d / "t.md").read_text()
    assert md.startswith("MedSNIP on demo (4 answers; unit level, no aggregation)")
    assert (f"Boundary fidelity vs the human snippets: group sentence-set F1 0.875, cosine {bf['group']['cosine']:.3f}, "
            f"ROUGE-L {bf['group']['rouge_l']:.3f} (8 snippets); direct sentence-set F1 1.000") in md
    assert "\\begin{table" in (d / "t.tex").read_text()

    # answer level, OR-FALSE: 101 and 102 FALSE found, 103 missed, 104 TRUE
    res2 = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [d / "ver_co_atoms.jsonl", d / "ver_co_direct.jsonl"]},
                     {"scores": d / "scores2.json"}, score_opts("answer"))
    assert res2["arms"]["served/atoms"]["ff1"] == pytest.approx(0.8)
    bs = res2["arms"]["served/direct"]["vs_baseline"]
    assert (bs["diff"], bs["ci_low"], bs["ci_high"], bs["n"]) == (0.0, 0.0, 0.0, 4)
    res3 = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [d / "ver_co_atoms.jsonl"]}, {"scores": d / "s3.json"},
                     score_opts("answer", aggregation="and_false"))
    assert res3["arms"]["served/atoms"]["ff1"] == 0.0  # no answer has every unit FALSE


def test_group_on_given_atoms_matches_the_human_partition(tmp_path, fake_llm):
    d = tmp_path
    llm = llm_opts(fake_llm.base_url)
    call_step(steps.prepare, {"source": str(DEMO_BENCH)}, {"answers": d / "answers.jsonl"}, prepare_opts(splits=["dev", "test"]))
    info = call_step(steps.decompose, {"answers": d / "answers.jsonl"}, {"units": d / "units.jsonl"},
                     decompose_opts("group", llm, atoms_from="given"))
    units = list(read_jsonl(d / "units.jsonl"))
    assert info["n_answers"] == 3 and info["usage"]["calls"] == 3  # cluster only; the train answer is left out
    assert [u["source_atoms"] for u in units if u["answer_id"] == "103"] == [[1, 2], [3], [4]]
    ver = call_step(steps.verify, {"units": d / "units.jsonl", "answers": d / "answers.jsonl"}, {"verdicts": d / "v.jsonl"},
                    verify_opts("claim_only", "s", llm))
    assert ver["n_units"] == 9
    res = call_step(steps.score, {"answers": d / "answers.jsonl", "verdicts": [d / "v.jsonl"]}, {"scores": d / "s.json"}, score_opts())
    assert res["boundary_fidelity"]["group"]["ari_atoms"] == 1.0  # same grouping of the same atoms as the annotators


def test_prompt_edit_reruns_only_what_reads_it(tmp_path, fake_llm, passages):
    import shutil

    prompts = tmp_path / "prompts"
    shutil.copytree(PROMPT_DIR, prompts)
    d, *_ = _pipeline(tmp_path, fake_llm.base_url, passages, str(prompts))
    n_first = len(fake_llm.chat_requests())
    # the claim-only cache keys on the text: a unit text met in several modes is asked once
    texts = {u["text"] for m in MODES for u in read_jsonl(d / f"units_{m}.jsonl")}
    assert len(texts) == 22 and n_first == 5 + 4 + 4 + 22 + 23
    p = prompts / "medsnip" / "verify_claim_only.txt"
    p.write_text(p.read_text().replace("# version: 1", "# version: 2").replace("Judge whether", "Decide whether"), encoding="utf-8")
    d, dec, ver, rag = _pipeline(tmp_path, fake_llm.base_url, passages, str(prompts))
    # only the claim-only verifications asked again, each text once; decomposition and retrieval all cached
    assert len(fake_llm.chat_requests()) - n_first == 22
    assert all(i["calls"]["total"]["calls"] == 0 for i in dec.values())
    assert rag["calls"]["total"]["calls"] == 0 and rag["cache"] == {"hits": 11}
    assert ver["atoms"]["cache"] == {"misses": 11} and ver["direct"]["cache"] == {"hits": 11}
    # a claim-only prompt that names the answer's context would be keyed on the text alone: it is refused
    p.write_text(p.read_text().replace("{{unit}}", "{{unit}} ({{question}})", 1), encoding="utf-8")
    with pytest.raises(PromptError, match="no value for field 'question'"):
        _pipeline(tmp_path, fake_llm.base_url, passages, str(prompts))


def test_options_name_the_missing_or_unknown_key(tmp_path):
    """The options are built as `medfc run` builds them (medfc.common.options): a missing or unknown key,
    a wrong type or a value outside its choices names the key; the cross-field checks name it too."""
    good = decompose_opts("atoms", llm_opts("http://127.0.0.1:9/v1"))
    opts = DecomposeOptions.from_mapping(good, "options")
    assert opts.llm.model == "served-llm" and opts.llm.timeout_s == 10.0 and opts.llm.max_tokens == 256
    with pytest.raises(OptionsError, match=r"missing options\.llm\.max_tokens"):
        DecomposeOptions.from_mapping({**good, "llm": {k: v for k, v in good["llm"].items() if k != "max_tokens"}}, "options")
    with pytest.raises(OptionsError, match=r"unknown options\.colour"):
        DecomposeOptions.from_mapping({**good, "colour": 1}, "options")
    with pytest.raises(OptionsError, match=r"options\.mode: 'atom' is not one of"):
        DecomposeOptions.from_mapping({**good, "mode": "atom"}, "options")
    with pytest.raises(OptionsError, match=r"options\.llm\.temperature: expected a number"):
        DecomposeOptions.from_mapping({**good, "llm": {**good["llm"], "temperature": "0"}}, "options")
    with pytest.raises(OptionsError, match=r"options\.llm\.backend: 'vllm' is not one of"):
        DecomposeOptions.from_mapping({**good, "llm": {**good["llm"], "backend": "vllm"}}, "options")
    # cross-field checks, run as the options are built (so before a step reads anything)
    checks = [(DecomposeOptions, {**good, "llm": None}, r"options\.llm: required for mode atoms"),
              (DecomposeOptions, {**good, "llm": {**good["llm"], "model": " "}}, r"options\.llm\.model: empty"),
              (VerifyOptions, verify_opts("retrieval", "x", good["llm"]), r"options\.retrieval: required for the retrieval verifier"),
              (VerifyOptions, verify_opts("retrieval", "x", good["llm"], retrieval={**retrieval_opts(tmp_path, tmp_path), "bm25": {
                  **retrieval_opts(tmp_path, tmp_path)["bm25"], "passages": ""}}), r"options\.retrieval\.bm25\.passages: empty")]
    for cls, mapping, message in checks:
        with pytest.raises(OptionsError, match=message):
            cls.from_mapping(mapping, "options")
    # a step called with them stops before reading its inputs
    with pytest.raises(OptionsError, match=r"options\.llm: required for mode group"):
        call_step(steps.decompose, {"answers": tmp_path / "missing.jsonl"}, {"units": tmp_path / "u.jsonl"}, decompose_opts("group", None))


def test_healthfc_claims_rewritten_as_statements(tmp_path, fake_llm):
    rows = [{"id": "h1", "claim_en": "Does zinc shorten colds?", "label": "SUPPORTED", "explanation_en": "The verdict: yes."},
            {"id": "h2", "claim_en": "Does coffee cause broken bones?", "label": "REFUTED", "explanation_en": "No."},
            {"id": "h3", "claim_en": "Does ginger help?", "label": "NOT ENOUGH INFORMATION", "explanation_en": "Unclear."}]
    src = tmp_path / "healthfc.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    opts = prepare_opts(source="healthfc", rewrite_claims=True, llm=llm_opts(fake_llm.base_url), unit_cache_dir=str(tmp_path / "u"))
    info = call_step(steps.prepare, {"source": str(src)}, {"answers": tmp_path / "a.jsonl", "report": tmp_path / "r.json"}, opts)
    answers = list(read_jsonl(tmp_path / "a.jsonl"))
    assert [(a["answer_id"], a["label"], a["query"], a["text"]) for a in answers] == [
        ("h1", "TRUE", "Does zinc shorten colds?", "zinc shorten colds."),
        ("h2", "FALSE", "Does coffee cause broken bones?", "Does coffee cause broken bones?")]  # malformed twice: question kept
    report = read_json(tmp_path / "r.json")
    assert report["excluded_by_reason"] == {"not_enough_information": 1}
    assert report["skipped_by_reason"] == {"statement_malformed_question_kept": 1}
    assert info["rewrite"]["usage"]["calls"] == 3  # h1 once, h2 once + its repair
    assert all("explanation" not in json.dumps(b) and "verdict" not in json.dumps(b["messages"][-1]) for b in fake_llm.chat_requests())


def test_a_pubmed_source_without_contact_email_stops_at_the_options(tmp_path, monkeypatch):
    good = decompose_opts("atoms", llm_opts("http://127.0.0.1:9/v1"))
    retrieval = {**retrieval_opts(tmp_path, tmp_path), "sources": ["pubmed"]}
    monkeypatch.delenv("NCBI_EMAIL", raising=False)
    with pytest.raises(OptionsError, match=r"options\.retrieval\.pubmed\.email: empty and NCBI_EMAIL unset"):
        VerifyOptions.from_mapping(verify_opts("retrieval", "x", good["llm"], retrieval=retrieval), "options")
    monkeypatch.setenv("NCBI_EMAIL", "me@example.org")
    assert VerifyOptions.from_mapping(verify_opts("retrieval", "x", good["llm"], retrieval=retrieval), "options").retrieval.sources == ("pubmed",)
