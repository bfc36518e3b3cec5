"""The MedSNIP stage end to end on the demo through a fake OpenAI-compatible server (started here, in this
process; config/test_medsnip.yaml plus its URL): six HealthFC demo claims (the dataset built from the demo
release alone), the demo MedSNIP-Bench file and the demo MedHallu file, prepare → decompose → verify → score →
table, the paper's rows below ours. Then the dry-run sets after a prompt edit, after an edit of the papers'
numbers and after adding a verifier (run too: only verification reaches the server). The runs have distinctive fake keys in their environment (the LLM's, sent to the fake server; the
web search's, sent by healthfc_retrieve to a fake Serper server; NCBI's), and no file they wrote holds one.
(Config errors that stop the run naming the key: tests/unit/config/test_config_mistakes.py.)"""

from __future__ import annotations

import csv
import functools
import json
from http.server import BaseHTTPRequestHandler

import pytest

from medfc.common.io import read_json, read_jsonl
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.http_servers import reply_json, serving
from tests.helpers.medsnip import FALSE_MARKERS, scripted
from tests.helpers.workflow import WorkflowCopy, planned_jobs

pytestmark = pytest.mark.workflow

# the scripted verifiers also call two HealthFC statements FALSE: glucosamine (gold REFUTED: right) and
# the flu vaccination (gold SUPPORTED: wrong); and five MedHallu sentences: four of the five hallucinated answers
# (the fifth, about adults older than 65, is missed) and one ground truth (falls "equally common": wrong)
MEDHALLU_MARKERS = ("potassium supplement", "calms the brain", "5,000 patients", "halved the number", "equally common")
MARKERS = (*FALSE_MARKERS, "glucosamine", "flu vaccination", *MEDHALLU_MARKERS)
HFC_IDS = ["akupunktur-migraene#0", "akupunktur-migraene#1", "folsaeure-schwangerschaft#0", "glucosamin-arthrose#0",
           "glutenfrei-reizdarm#0", "grippeimpfung-senioren#0"]
BENCH_MODES = ["atoms", "group", "direct", "human_atoms", "human_snippets"]
HFC_MODES = ["atoms", "group", "direct"]
DATASETS = ("bench", "healthfc", "medhallu")
PAPER = "paper (Iqbal et al. 2026)"


def _kind(body: dict) -> str:
    """Which MedSNIP prompt a request is, by its system message."""
    system = body["messages"][0]["content"]
    kinds = {"Rewrite a health question": "rewrite", "You decompose": "extract", "You group": "cluster", "You split": "direct",
             "You are a cautious medical fact-checker. Judge whether the statement is medically correct.\nThe question": "full_context",
             "You are a cautious": "claim_only"}
    return next(k for prefix, k in kinds.items() if system.startswith(prefix))


def _kinds(requests: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for body in requests:
        out[_kind(body)] = out.get(_kind(body), 0) + 1
    return dict(sorted(out.items()))


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI(functools.partial(scripted, false_markers=MARKERS)) as fake:
        yield fake


# distinctive fake keys in the runs' environment: the MedSNIP LLM's (sent to the fake server), the web
# search's (sent to the fake Serper server by healthfc_retrieve) and NCBI's (no job here calls E-utilities);
# test_no_key_is_written_anywhere searches every file the runs wrote for them
KEYS = {"OPENAI_API_KEY": "sk-medfc-FAKE-openai-0c3d9a71e5", "SERPER_API_KEY": "medfc-FAKE-serper-6b2e04f8d1",
        "NCBI_API_KEY": "medfc-FAKE-ncbi-93af7c21b4"}


@pytest.fixture(scope="module")
def serper():
    """A fake Serper web search: four organic results for every query; ``log`` holds (query, X-API-KEY)."""
    log: list[tuple[str, str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append((body["q"], self.headers.get("X-API-KEY")))
            reply_json(self, {"organic": [{"title": f"Result {n}", "snippet": f"What result {n} says about it.",
                                           "link": f"https://r.example/{len(log)}/{n}", "position": n} for n in range(1, 5)]})

        def log_message(self, *args):
            pass

    with serving(Handler) as base:
        yield base, log


@pytest.fixture(scope="module")
def medsnip_run(tmp_path_factory, server, serper) -> WorkflowCopy:
    wf = WorkflowCopy(tmp_path_factory.mktemp("medsnip") / "wf")
    wf.path("config/server.yaml").write_text(
        f"medsnip:\n  llm:\n    base_url: {server.base_url}\n    api_key_env: OPENAI_API_KEY\n"
        f"healthfc:\n  retrieval:\n    progress: false\n    web: {{url: {serper[0]}/search, requests_per_second: 1000.0, file: ''}}\n")
    # one core: the atoms and group jobs share the extract call through the unit cache, so exactly one sends it
    wf.args = ["--cores", "1", "--configfile", "config/test_medsnip.yaml", "config/server.yaml"]
    with pytest.MonkeyPatch.context() as env:
        for name, value in KEYS.items():
            env.setenv(name, value)
        wf.run(*wf.args)
        wf.first_requests = list(server.chat_requests())
        wf.run("results/healthfc/evidence/web.jsonl", *wf.args)  # the web search of the HealthFC claims (healthfc_retrieve)
        yield wf


def _plan(wf: WorkflowCopy, *configs: str) -> list[str]:
    proc = wf.run("-n", *wf.args, *configs)
    return planned_jobs(proc.stdout + proc.stderr)


def _table(wf: WorkflowCopy, dataset: str, source: str = "ours") -> list[tuple]:
    """Our rows of a dataset's table (or the paper's, ``source``), the columns both may fill."""
    with open(wf.path(f"results/medsnip/{dataset}/table.csv"), encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    keys = ("verifier", "mode", "units", "scored", "FF1", "FF1_ci_low", "FF1_ci_high", next(k for k in rows[0] if k.startswith("delta_vs_")),
            "verify_calls", "decompose_calls", "total_calls")
    return [tuple(r[k] for k in keys) for r in rows if r["source"] == source]


def test_healthfc_claims_decomposed_verified_and_scored(medsnip_run):
    wf = medsnip_run
    answers = list(read_jsonl(wf.path("results/medsnip/healthfc/answers.jsonl")))
    # the first six supported / refuted claims (NEI excluded, the rest beyond the limit), each rewritten as a statement
    assert [(a["answer_id"], a["label"]) for a in answers] == list(zip(HFC_IDS, ["TRUE", "TRUE", "TRUE", "FALSE", "TRUE", "TRUE"]))
    assert [a["text"] for a in answers[:4]] == ["acupuncture prevent migraine attacks.", "real acupuncture work better than sham acupuncture.",
                                                "taking folic acid around conception protect the child from neural tube defects such as spina bifida.",
                                                "glucosamine relieve pain in knee osteoarthritis."]
    assert answers[0]["query"] == "Can acupuncture prevent migraine attacks?"
    report = read_json(wf.path("results/medsnip/healthfc/answers.report.json"))
    assert report["excluded_by_reason"] == {"not_enough_information": 7, "beyond_limit": 15}
    # every claim is one sentence: one unit per claim in every mode
    for mode in HFC_MODES:
        units = list(read_jsonl(wf.path(f"results/medsnip/healthfc/units/{mode}.jsonl")))
        assert [u["unit_id"] for u in units] == [f"{i}:{mode}:1" for i in HFC_IDS]
        assert [u["text"] for u in units] == [a["text"] for a in answers]
    verdicts = list(read_jsonl(wf.path("results/medsnip/healthfc/verdicts/served/group.jsonl")))
    assert [v["unit_id"] for v in verdicts if v["verdict"] == "FALSE"] == ["glucosamin-arthrose#0:group:1", "grippeimpfung-senioren#0:group:1"]
    # OR-FALSE per claim: one TP (glucosamine), one FP (flu vaccination), no FN → FF1 2/3 in every mode, Δ 0
    scores = read_json(wf.path("results/medsnip/healthfc/scores.json"))
    atoms = scores["arms"]["served/atoms"]
    assert atoms["counts"] == {"tp_false": 1, "fp_false": 1, "fn_false": 0, "tn_false": 4} and atoms["ff1"] == pytest.approx(2 / 3)
    assert scores["arms"]["served/direct"]["vs_baseline"]["diff"] == 0.0
    # calls: 1 extract per claim (atoms), + 1 cluster (group), 1 direct; one verification per unit; priced at $2.50 / $15
    assert _table(wf, "healthfc") == [
        ("served", "atoms", "6", "6", "0.6667", "0.0", "1.0", "", "6", "6", "12"),
        ("served", "group", "6", "6", "0.6667", "0.0", "1.0", "0.0", "6", "12", "18"),
        ("served", "direct", "6", "6", "0.6667", "0.0", "1.0", "0.0", "6", "6", "12")]
    cost = atoms["cost"]["total"]
    assert cost["cost_usd"] == pytest.approx((cost["prompt_tokens"] * 2.5 + cost["completion_tokens"] * 15) / 1e6)
    # the paper's rows below ours (GPT-5.4, claim-only: resources/papers/numbers.yaml)
    assert [r[:5] for r in _table(wf, "healthfc", PAPER)] == [
        ("GPT-5.4 (claim-only)", m, u, "327", f) for m, u, f in (("atoms", "1076", "0.672"), ("group", "821", "0.672"), ("direct", "761", "0.693"))]
    md = wf.path("results/medsnip/healthfc/table.md").read_text()
    assert md.startswith("MedSNIP on HealthFC (6 answers; answer level, units aggregated by or_false)")
    assert "\\begin{table" in wf.path("results/medsnip/healthfc/table.tex").read_text()


def test_bench_units_verdicts_and_table(medsnip_run):
    wf = medsnip_run
    counts = {m: len(list(read_jsonl(wf.path(f"results/medsnip/bench/units/{m}.jsonl")))) for m in BENCH_MODES}
    assert counts == {"atoms": 11, "group": 8, "direct": 11, "human_atoms": 14, "human_snippets": 11}
    group = list(read_jsonl(wf.path("results/medsnip/bench/units/group.jsonl")))
    assert [(u["unit_id"], u["pattern"], u["source_atoms"], u["source_sentences"]) for u in group[:2]] == [
        ("101:group:1", "A", [1, 2], [0, 1]), ("101:group:2", "D", [3], [2])]
    verdicts = list(read_jsonl(wf.path("results/medsnip/bench/verdicts/served/human_snippets.jsonl")))
    assert [v["unit_id"] for v in verdicts if v["verdict"] == "FALSE"] == ["101:human_snippets:2", "101:human_snippets:3", "102:human_snippets:3"]
    scores = read_json(wf.path("results/medsnip/bench/scores.json"))
    # unit level against the physicians' atoms: 2 TP (the cold cure, the antibiotic), 1 FP (4,000 IU), 1 FN (HbA1c)
    assert scores["arms"]["served/human_atoms"]["counts"] == {"tp_false": 2, "fp_false": 1, "fn_false": 1, "tn_false": 10}
    assert scores["per_pattern"]["served"]["all"]["n"] == 11
    assert scores["boundary_fidelity"]["group"]["sentence_set_f1"] == pytest.approx(7 / 8)
    # extract 4 calls + 1 repair (the malformed first answer of 104); group adds 4 cluster calls; the bench's own units none
    assert _table(wf, "bench") == [
        ("served", "atoms", "11", "11", "0.6667", "0.0", "1.0", "0.0", "11", "5", "16"),
        ("served", "group", "8", "8", "0.6667", "0.0", "1.0", "0.0", "8", "9", "17"),
        ("served", "direct", "11", "11", "0.6667", "0.0", "1.0", "0.0", "11", "4", "15"),
        ("served", "human_atoms", "14", "14", "0.6667", "0.0", "1.0", "", "14", "0", "14"),
        ("served", "human_snippets", "11", "11", "0.6667", "0.0", "1.0", "0.0", "11", "0", "11")]
    assert [r[1:5] for r in _table(wf, "bench", PAPER)] == [
        ("group", "1578", "", ""), ("direct", "2132", "", ""), ("human_atoms", "5755", "5755", "0.321"), ("human_snippets", "2524", "2524", "0.431")]


def test_medhallu_answers_decomposed_verified_and_scored_beside_the_papers_numbers(medsnip_run):
    wf = medsnip_run
    answers = list(read_jsonl(wf.path("results/medsnip/medhallu/answers.jsonl")))
    # each row's ground truth (TRUE) and hallucinated answer (FALSE), the question as the query, subset vignette; the last
    # row's empty hallucinated answer skipped and counted
    assert [(a["answer_id"], a["label"]) for a in answers[:2]] == [("0-gt", "TRUE"), ("0-h", "FALSE")] and len(answers) == 11
    assert {a["subset"] for a in answers} == {"vignette"} and answers[0]["query"] == answers[1]["query"]
    assert read_json(wf.path("results/medsnip/medhallu/answers.report.json"))["skipped_by_reason"] == {"empty_hallucinated_answer": 1}
    counts = {m: len(list(read_jsonl(wf.path(f"results/medsnip/medhallu/units/{m}.jsonl")))) for m in HFC_MODES}
    assert counts == {"atoms": 18, "group": 17, "direct": 18}  # one answer of three sentences: its first two grouped
    verdicts = list(read_jsonl(wf.path("results/medsnip/medhallu/verdicts/served/atoms.jsonl")))
    assert sorted({v["answer_id"] for v in verdicts if v["verdict"] == "FALSE"}) == ["0-h", "1-h", "2-h", "4-gt", "4-h"]
    # OR-FALSE per answer: 4 TP, 1 FP (4-gt), 1 FN (3-h), 5 TN → FF1 0.8 in every mode
    scores = read_json(wf.path("results/medsnip/medhallu/scores.json"))
    assert scores["arms"]["served/atoms"]["counts"] == {"tp_false": 4, "fp_false": 1, "fn_false": 1, "tn_false": 5}
    assert (scores["options"]["level"], scores["options"]["baseline_mode"]) == ("answer", "atoms")
    # calls: 1 extract per answer (atoms), + 1 cluster (group), 1 direct; one verification per unit
    assert _table(wf, "medhallu") == [
        ("served", "atoms", "18", "11", "0.8", "0.4444", "1.0", "", "18", "11", "29"),
        ("served", "group", "17", "11", "0.8", "0.4444", "1.0", "0.0", "17", "22", "39"),
        ("served", "direct", "18", "11", "0.8", "0.4444", "1.0", "0.0", "18", "11", "29")]
    # the paper's rows below ours (GPT-5.4, claim-only: resources/papers/numbers.yaml), and the calls each mode saves
    assert _table(wf, "medhallu", PAPER) == [
        ("GPT-5.4 (claim-only)", "atoms", "3798", "2000", "0.694", "", "", "", "", "", ""),
        ("GPT-5.4 (claim-only)", "group", "2636", "2000", "0.72", "", "", "", "", "", ""),
        ("GPT-5.4 (claim-only)", "direct", "2586", "2000", "0.721", "", "", "", "", "", "")]
    with open(wf.path("results/medsnip/medhallu/table.csv"), encoding="utf-8") as fh:
        saved = [(r["source"], r["mode"], r["verify_calls_saved_pct"], r["total_calls_change_pct"]) for r in csv.DictReader(fh)]
    assert saved == [("ours", "atoms", "", ""), ("ours", "group", "5.6", "34.5"), ("ours", "direct", "0.0", "0.0"),
                     (PAPER, "atoms", "", ""), (PAPER, "group", "30.6", "14.5"), (PAPER, "direct", "31.9", "-20.9")]
    md = wf.path("results/medsnip/medhallu/table.md").read_text()
    assert md.startswith("MedSNIP on MedHallu (11 answers; answer level, units aggregated by or_false)")
    assert "Below ours, the rows of the paper (Iqbal et al. 2026) with GPT-5.4 (claim-only) as verifier" in md
    assert "Reported: Iqbal et al. 2026" in wf.path("results/medsnip/medhallu/table.tex").read_text()


def test_each_call_reaches_the_server_once(medsnip_run):
    # HealthFC: 6 rewrites, 6 extracts (shared by atoms and group), 6 clusters, 6 direct, 6 verifications (the same
    # text in every mode is asked once); bench: 5 extracts, 4 clusters, 4 direct, 22 distinct unit texts; MedHallu: 11
    # extracts, 11 clusters, 11 direct, 19 distinct unit texts (18 sentences, one group of two)
    assert _kinds(medsnip_run.first_requests) == {"claim_only": 47, "cluster": 21, "direct": 21, "extract": 22, "rewrite": 6}
    assert all(b["model"] == "served-llm" and b["max_tokens"] == (8000 if _kind(b) in ("extract", "cluster", "direct") else 256)
               for b in medsnip_run.first_requests)
    assert _plan(medsnip_run) == []  # up to date


def test_a_prompt_edit_reruns_exactly_the_rules_that_read_it(medsnip_run, tmp_path):
    wf = medsnip_run.clone(tmp_path / "wf")
    path = wf.path("resources/prompts/medsnip/cluster.txt")
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("# version: 1", "# version: 2").replace("Merge atoms only", "Merge atoms solely"), encoding="utf-8")
    # the group decompositions, their verifications, and the scores, tables and figures built on them
    assert _plan(wf) == sorted(["all", "index", "main_tex", "medsnip_structure",
                                *[f"medsnip_decompose[dataset={d},mode=group]" for d in DATASETS],
                                *[f"medsnip_verify[dataset={d},verifier=served,mode=group]" for d in DATASETS],
                                *[f"medsnip_{r}[dataset={d}]" for r in ("score", "table", "tau", "calls") for d in DATASETS]])
    path.write_text(original, encoding="utf-8")
    assert _plan(wf) == []
    # the papers' numbers: the MedSNIP tables (and the document and index that show them), nothing before them
    papers = wf.path("resources/papers/numbers.yaml")
    numbers = papers.read_text(encoding="utf-8")
    assert "ff1: 0.693," in numbers
    papers.write_text(numbers.replace("ff1: 0.693,", "ff1: 0.694,"), encoding="utf-8")
    assert _plan(wf) == sorted(["all", "index", "main_tex", *[f"medsnip_table[dataset={d}]" for d in DATASETS]])
    papers.write_text(numbers, encoding="utf-8")
    assert _plan(wf) == []
    # the HealthFC statement prompt: HealthFC only, from its answers on
    statement = wf.path("resources/prompts/medsnip/healthfc_statement.txt")
    statement.write_text(statement.read_text(encoding="utf-8") + "Keep the statement short.\n", encoding="utf-8")
    assert _plan(wf) == sorted(["all", "index", "main_tex", *[f"medsnip_decompose[dataset=healthfc,mode={m}]" for m in sorted(HFC_MODES)],
                                "medsnip_prepare[dataset=healthfc]", "medsnip_score[dataset=healthfc]", "medsnip_table[dataset=healthfc]",
                                *[f"medsnip_verify[dataset=healthfc,verifier=served,mode={m}]" for m in sorted(HFC_MODES)],
                                "medsnip_structure", "medsnip_tau[dataset=healthfc]", "medsnip_calls[dataset=healthfc]"])


def test_adding_a_verifier_reruns_only_its_verification_and_the_scores(medsnip_run, server, tmp_path):
    wf = medsnip_run.clone(tmp_path / "wf")
    wf.path("config/verifiers.yaml").write_text(
        "medsnip:\n  verifiers:\n    - {name: served, kind: claim_only}\n    - {name: served-fc, kind: full_context}\n")
    new = sorted([f"medsnip_verify[dataset=bench,verifier=served-fc,mode={m}]" for m in BENCH_MODES]
                 + [f"medsnip_verify[dataset={d},verifier=served-fc,mode={m}]" for d in ("healthfc", "medhallu") for m in HFC_MODES])
    # ... and the tables and the figure of the verdicts and scores (Table 3, of the answers and units, stays)
    assert _plan(wf, "config/verifiers.yaml") == sorted(["all", "index", "main_tex", *new,
                                                        *[f"medsnip_{r}[dataset={d}]" for r in ("score", "table", "tau", "calls") for d in DATASETS]])
    before = len(server.chat_requests())
    wf.run(*wf.args, "config/verifiers.yaml")
    # only the new verifier reached the server: one call per distinct (unit, question, answer); no decomposition, no rewrite
    assert _kinds(server.chat_requests()[before:]) == {"full_context": 47}
    rows = _table(wf, "healthfc")
    assert [r[:3] for r in rows] == [("served", m, "6") for m in HFC_MODES] + [("served-fc", m, "6") for m in HFC_MODES]
    # full context: the same six statements, judged the same way (the markers), so the same FF1 and calls
    assert rows[3][4:] == rows[0][4:]


# a bad medsnip config stops at validation naming the key: tests/unit/config/test_config_mistakes.py, in-process


def test_no_key_is_written_anywhere(medsnip_run, server, serper):
    """The keys reached the fake services (so they were read and sent), and no byte of any of them is in a file
    the runs wrote: results/, logs/, cache/ and Snakemake's own records (.snakemake/)."""
    wf = medsnip_run
    assert {auth for _, _, auth in server.requests} == {f"Bearer {KEYS['OPENAI_API_KEY']}"}
    queries = [q for q, _ in serper[1]]
    assert len(queries) == len(set(queries)) > 20 and {key for _, key in serper[1]} == {KEYS["SERPER_API_KEY"]}
    assert len(list(read_jsonl(wf.path("results/healthfc/evidence/web.jsonl")))) == 4 * len(queries)
    files = [p for top in ("results", "logs", "cache", ".snakemake") for p in wf.path(top).rglob("*") if p.is_file()]
    assert len(files) > 100 and any("/logs/healthfc/retrieve/" in str(p) for p in files)
    leaks = [(str(p.relative_to(wf.root)), name) for p in files for name, value in KEYS.items()
             if value.encode() in p.read_bytes() or value[-10:].encode() in p.read_bytes()]
    assert leaks == []


def test_tables_3_and_6_and_fig_21_are_made_from_the_runs_own_units_and_verdicts(medsnip_run, tmp_path):
    from tests.helpers.tex import compile_fragments, overfull_boxes

    wf = medsnip_run
    with open(wf.path("results/medsnip/table3_structure.csv"), encoding="utf-8") as fh:
        structure = {r["dataset"]: r for r in csv.DictReader(fh)}
    assert list(structure) == ["HealthFC", "MedSNIP-Bench", "MedHallu"]
    hfc = structure["HealthFC"]
    # six one-sentence statements; the scripted decomposer makes one atom (and one snippet) of each
    assert (hfc["answers"], hfc["sentences_per_answer"], hfc["single_sentence_share"]) == ("6", "1.0", "1.0")
    assert (hfc["units_atoms"], hfc["units_group"], hfc["units_direct"], hfc["units_human_snippets"]) == ("1.0", "1.0", "1.0", "")
    assert structure["MedSNIP-Bench"]["units_human_snippets"] != ""
    # one claim-only verifier: no τ to sweep, its arms once each (no LLM call: the run's requests are all counted above)
    tau = wf.path("results/medsnip/healthfc/table6_tau.md").read_text(encoding="utf-8")
    assert "No retrieval verifier ran in this run" in tau
    with open(wf.path("results/medsnip/healthfc/fig21_calls.csv"), encoding="utf-8") as fh:
        points = [(r["verifier"], r["mode"], r["verify_calls"]) for r in csv.DictReader(fh)]
    assert points == [("served", m, "6") for m in HFC_MODES]
    assert wf.path("results/medsnip/bench/fig21_calls.png").stat().st_size > 0 and wf.path("results/medsnip/bench/fig21_calls.pdf").is_file()
    index = wf.path("results/index.md").read_text(encoding="utf-8")
    assert "`medsnip/table3_structure.md`" in index and "`medsnip/bench/table6_tau.md`" in index and "`medsnip/healthfc/fig21_calls.png`" in index
    log = compile_fragments([wf.path("results/medsnip/table3_structure.tex"), wf.path("results/medsnip/bench/table6_tau.tex"),
                             wf.path("results/medsnip/healthfc/table6_tau.tex")], tmp_path / "doc")
    assert not [b for b in overfull_boxes(log) if b > 1.0]
