"""MedSNIP's verifier kinds are one registry (``VERIFIER_KINDS`` of :mod:`medfc.medsnip.options`): the plan, the
verify step and the verifier look a kind up. Test-only kinds, registered here and nowhere else, are planned (a verify
job's options, prompts and inputs, the config check) and one of them is run through the verify step against the fake
LLM server; neither the plan nor the MedSNIP steps, verifier and options compare anything with a kind's name."""

from __future__ import annotations

import re

import pytest
import yaml
from tests.helpers.config import call_step, defaults
from tests.helpers.medsnip import PROMPT_DIR, decompose_opts, llm_opts, prepare_opts, verify_opts
from tests.helpers.workflow import REPO
from tests.unit.medsnip.conftest import DEMO_BENCH

from medfc.common.io import read_jsonl
from medfc.common.options import OptionsError
from medfc.llm.prompts import prompt_hashes
from medfc.medsnip import steps
from medfc.medsnip.options import VERIFIER_KINDS, VerifierKind, VerifyOptions, verifier_kind
from medfc.plan import Plan
from medfc.config import checks

# the claim-only prompt under another name; a retrieving kind that reads the retrieval loop's prompts
SECOND = VerifierKind("second_opinion", ("medsnip/verify_claim_only",))
DIGGER = VerifierKind("digger", VERIFIER_KINDS["retrieval"].prompts, retrieves=True)


@pytest.fixture()
def test_kinds(monkeypatch):
    for kind in (SECOND, DIGGER):
        monkeypatch.setitem(VERIFIER_KINDS, kind.name, kind)


def _config() -> dict:
    cfg = defaults()
    cfg["stages"] = {stage: stage == "medsnip" for stage in cfg["stages"]}
    ms = cfg["medsnip"]
    ms["llm"].update(model="org/llm", base_url="http://127.0.0.1:8000/v1")
    ms["verifiers"] = [{"name": "second", "kind": "second_opinion", "unparsed": "false", "llm": {}},
                       {"name": "dig", "kind": "digger", "unparsed": "abstain", "llm": {}}]
    ms["retrieval"]["sources"] = ["bm25"]
    ms["retrieval"]["bm25"]["passages"] = str(REPO / "README.md")  # any file: the check asks that it exists
    return cfg


def test_kinds_registered_in_a_test_are_planned(test_kinds):
    cfg = _config()
    plan = Plan(cfg)
    job = {"dataset": "bench", "mode": "atoms"}
    second = plan.options("medsnip_verify", {**job, "verifier": "second"})
    assert (second["verifier"], second["name"], second["retrieval"]) == ("second_opinion", "second", None)
    assert plan.prompts("medsnip_verify", {**job, "verifier": "second"}) == prompt_hashes(["medsnip/verify_claim_only"], PROMPT_DIR)
    assert plan.inputs("medsnip_verify", {**job, "verifier": "second"}) == {
        "units": "results/medsnip/bench/units/atoms.jsonl", "answers": "results/medsnip/bench/answers.jsonl"}
    dig = plan.options("medsnip_verify", {**job, "verifier": "dig"})
    assert dig["verifier"] == "digger" and dig["retrieval"]["sources"] == ["bm25"]  # a retrieving kind gets the retrieval options
    assert list(plan.prompts("medsnip_verify", {**job, "verifier": "dig"})) == ["llm/json_repair", "medsnip/rag_final", "medsnip/rag_turn"]
    assert plan.inputs("medsnip_verify", {**job, "verifier": "dig"})["passages"] == cfg["medsnip"]["retrieval"]["bm25"]["passages"]
    checks.check_medsnip(plan)  # the retrieval section is checked for the retrieving kind
    with pytest.raises(OptionsError, match=r"options\.retrieval: required for the digger verifier"):
        VerifyOptions.from_mapping({**dig, "retrieval": None}, "options")


def test_the_config_takes_the_registrys_kinds():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text(encoding="utf-8"))
    kind = schema["properties"]["medsnip"]["properties"]["verifiers"]["items"]["properties"]["kind"]
    assert kind["enum"] == list(VERIFIER_KINDS) == ["claim_only", "full_context", "retrieval"]
    assert [(k.full_context, k.retrieves) for k in VERIFIER_KINDS.values()] == [(False, False), (True, False), (False, True)]


def test_an_unknown_kind_is_refused_naming_the_registered_ones(test_kinds):
    with pytest.raises(ValueError, match=r"unknown MedSNIP verifier kind 'nope' \(claim_only \| full_context \| retrieval \| second_opinion \| digger\)"):
        verifier_kind("nope")
    with pytest.raises(OptionsError, match=r"options\.verifier: 'nope' is not one of"):
        VerifyOptions.from_mapping(verify_opts("nope", "n", llm_opts("http://127.0.0.1:1/v1")), "options")


def test_a_kind_registered_in_a_test_verifies_like_the_kind_whose_prompt_it_reads(test_kinds, tmp_path, fake_llm):
    d, llm = tmp_path, llm_opts(fake_llm.base_url)
    call_step(steps.prepare, {"source": str(DEMO_BENCH)}, {"answers": d / "answers.jsonl"}, prepare_opts())
    call_step(steps.decompose, {"answers": d / "answers.jsonl"}, {"units": d / "units.jsonl"}, decompose_opts("human_atoms", llm))
    infos, verdicts, sent = {}, {}, {}
    for kind in ("claim_only", "second_opinion"):
        before = len(fake_llm.chat_requests())
        infos[kind] = call_step(steps.verify, {"units": d / "units.jsonl", "answers": d / "answers.jsonl"},
                                {"verdicts": d / f"{kind}.jsonl"}, verify_opts(kind, "served", llm))
        verdicts[kind] = list(read_jsonl(d / f"{kind}.jsonl"))
        sent[kind] = [b["messages"] for b in fake_llm.chat_requests()[before:]]
    assert infos["second_opinion"]["kind"] == "second_opinion" and infos["second_opinion"]["n_units"] == infos["claim_only"]["n_units"] > 0
    assert {v["verifier_kind"] for v in verdicts["second_opinion"]} == {"second_opinion"}
    assert not any(v["gated"] for v in verdicts["second_opinion"])
    assert [{**v, "verifier_kind": None} for v in verdicts["second_opinion"]] == [{**v, "verifier_kind": None} for v in verdicts["claim_only"]]
    assert {v["verdict"] for v in verdicts["second_opinion"]} == {"TRUE", "FALSE"}  # the fake server's answers, read as the claim-only's
    assert sent["second_opinion"] == sent["claim_only"] and sent["claim_only"]  # the same claim-only prompt, rendered the same


def test_no_plan_or_step_code_compares_a_kinds_name():
    files = ["src/medfc/plan/medsnip.py", "src/medfc/config/prerequisites.py", "src/medfc/medsnip/steps.py",
             "src/medfc/medsnip/verify.py", "src/medfc/medsnip/options.py"]
    names = "|".join(map(re.escape, VERIFIER_KINDS))
    pattern = re.compile(rf"""(==|!=|\bin)\s*\(?["']({names})["']|["']({names})["']\s*(==|!=|\bin\b)|\{{\s*["']({names})["']\s*:""")
    for file in files:
        text = (REPO / file).read_text(encoding="utf-8")
        assert not pattern.search(text), f"{file}: {pattern.search(text).group(0)}"
