"""config/paper.yaml end to end in miniature: the papers' configuration on the demo data (config/config.yaml,
then config/paper.yaml, then the miniature's overrides written here), with every model alias pointed at a
tiny random model of its family, built here in the layout its hub repository ships (DeBERTa-v3: spm.model
only; BERT: tokenizer.json, BioBERT/BiomedBERT: vocab.txt only; RoBERTa: byte-level BPE; XLM-R:
SentencePiece; Llama 3 Instruct: chat template, no pad token); MedSNIP's decomposer and all four
verifiers through a fake OpenAI-compatible server started here; the translation through a tiny Marian
model (the memory seeds lack some demo sentences, so the model really translates). Training is cut to
one step, and HealthFC to fold 0 with its main encoder per language (en: DeBERTa-v3; de: XLM-R; every
alias still points at its family's model, BERT's and BioBERT's layouts run in CliniFact, and the BERT
family's HealthFC path in tests/workflow/test_experiments.py and test_slurm.py): each
HealthFC job costs about 8 s of CPU (a Python process importing torch and transformers), so paper.yaml's
full lists on two folds (272 trainings and 272 scorings) took 27 minutes here on 2 cores; this cut runs
every HealthFC system once in English and, as the paper reports German (XLM-R, Table 3 only), the
Table 3 systems in German (experiments.healthfc.lang_systems; a language's text fields are chosen in one
place for every system, medfc.experiments.healthfc.runs.load_claims). CliniFact and MedSNIP run paper.yaml's lists as
they are. Every system, model family, table and figure of both papers is produced, and each table has
exactly the rows the plan says. A failure here is one a user would meet on a GPU.

To add a system or a model: its config lines go in ``_overrides`` (or come from paper.yaml) and its
rows follow from the plan in ``expected_rows``; a new table gets an entry there and in ``TABLE_FILES``."""

from __future__ import annotations

import copy
import functools
import itertools
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from medfc.common.io import read_json, read_jsonl
from medfc.experiments.healthfc.systems import OPEN_DOMAIN_SYSTEMS, SYSTEMS, TABLE3_SYSTEMS, TABLE5_SYSTEMS
from medfc.plan import Plan
from medfc.plan.resources import ROWS as RESOURCE_ROWS
from tests.helpers import tiny_models as tm
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.medsnip import scripted
from tests.helpers.tex import tex_problems
from tests.helpers.workflow import REPO, WorkflowCopy

pytestmark = pytest.mark.workflow

CONFIGS = ["config/config.yaml", "config/paper.yaml", "config/miniature.yaml"]
# each alias of paper.yaml → the tiny model of its family (a directory name under the test's models/)
FAMILY = {
    "deberta-v3-large": "deberta-v3", "bert-large": "bert", "biobert-large": "biobert", "biobert": "biobert",
    "pubmedbert": "biobert", "xlm-r-large": "xlm-r", "roberta": "roberta", "openbiollm-8b": "llama3", "llama3-8b": "llama3",
    "openbiollm-70b": "llama3", "llama3-70b": "llama3",
}
BUILDERS = {
    "deberta-v3": tm.build_tiny_deberta_v2,
    "bert": tm.build_tiny_bert_family,
    "biobert": functools.partial(tm.build_tiny_bert_family, vocab_txt_only=True),
    "roberta": tm.build_tiny_roberta,
    "xlm-r": tm.build_tiny_xlm_roberta,
    "llama3": tm.build_tiny_llama,
}
TABLE_FILES = ["healthfc_table3", "healthfc_table3_extra", "healthfc_table5", "healthfc_table5_extra", "healthfc_open_domain",
               "healthfc_significance", "clinifact_table8", "clinifact_table8_extra",
               "clinifact_significance", "clinifact_fig3"]
# HealthFC's models in the miniature: one alias per encoder family (the cost is per job; see the docstring)
HEALTHFC_MODELS = {"en": ["deberta-v3-large"], "de": ["xlm-r-large"]}
# the open-domain evidence: the demo ships the web search's (resources/demo/evidence/web.jsonl); PubMed's and
# Wikipedia's are written here from it (made up, as the demo's), so the systems of all three sources run offline
EVIDENCE_FILES = {"pubmed": "config/evidence_pubmed.jsonl", "wikipedia": "config/evidence_wikipedia.jsonl"}
STATS_FILES = ["results/healthfc/stats/table2.csv", "results/clinifact/stats/table6_labels.csv", "results/clinifact/stats/table4_words.csv"]
FIGURES = ["results/healthfc/stats/fig1_claims_per_year.png", "results/healthfc/stats/fig2_top_topics.png",
           "results/healthfc/stats/fig3_level_by_verdict.png", "results/clinifact/stats/fig2_disease_classes.png",
           "results/clinifact/stats/figS1_years.png", "results/figures/clinifact_fig3.png", "results/figures/clinifact_fig3.pdf"]
MEMORY = "resources/demo/translation/memory.jsonl"
DROP_EVERY = 40  # every 40th memory entry is left out: those sentences go through the tiny Marian


def _overrides(models: dict[str, Path], marian: Path, url: str) -> dict[str, Any]:
    """The miniature on top of paper.yaml: tiny models, two folds, one training step, short inputs, one thread
    per job (two jobs at a time on two cores), few bootstrap resamples, every LLM call to the fake server."""
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text(encoding="utf-8"))
    verifiers = [{**v, **({"llm": {**v["llm"], "base_url": url}} if "llm" in v else {})} for v in paper["medsnip"]["verifiers"]]
    train = {"epochs": 1, "max_length": 64, "batch_size": 4, "eval_batch_size": 32, "device": "cpu"}
    # paper.yaml's 70B zero-shot rows go to vLLM servers: here to the fake server, prompts trimmed with the tiny Llama's tokenizer
    zero_shot_servers = {m: {**o, "base_url": url, "tokenizer": str(models["llama3"])}
                         for m, o in paper["experiments"]["clinifact"]["model_zero_shot"].items()}
    return {
        "stages": {"healthfc": True, "clinifact": True, "experiments": True, "medsnip": True},
        "healthfc": {"translation": {"model": str(marian), "model_name": "Helsinki-NLP/opus-mt-de-en", "memory_seeds": ["config/memory_partial.jsonl"],
                                     "device": "cpu", "max_length": 32, "num_beams": 2, "progress": False},
                     "retrieval": {source: {"file": path} for source, path in EVIDENCE_FILES.items()}},
        "models": {"aliases": {alias: str(models[family]) for alias, family in FAMILY.items()}, "healthfc": HEALTHFC_MODELS},
        "experiments": {
            "scale": "smoke", "resources": {row: {"threads": 1, "mem_mb": 2048, "runtime": 10} for row in RESOURCE_ROWS},
            "smoke": {"max_steps": 1, "max_examples": 8},
            "healthfc": {"folds": [0], "train": train, "lang_systems": {"de": list(TABLE3_SYSTEMS)}},
            "clinifact": {"train": train, "zero_shot": {"device": "cpu", "max_prompt_tokens": 256, "batch_size": 8},
                          "model_zero_shot": zero_shot_servers,
                          # paper.yaml's QLoRA needs CUDA (bitsandbytes): the bf16/fp32 LoRA path here, with its gradient checkpointing
                          "fine_tune": {"device": "cpu", "load_in_4bit": False, "max_prompt_tokens": 256, "batch_size": 2,
                                        "eval_batch_size": 8, "grad_accum": 1}},
        },
        "scoring": {"bootstrap": {"n_resamples": 200}},
        "medsnip": {"llm": {"base_url": url, "timeout_s": 10, "max_retries": 1}, "verifiers": verifiers, "score": {"n_resamples": 200}},
        "results_dir": "results",  # paper.yaml's runs/paper: the miniature reads results/ as the demo's tests do
    }


def _merge(base: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Snakemake's merge of config files: mappings merged key by key, anything else replaced."""
    out = copy.deepcopy(base)
    for k, v in new.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def plan_of(root: Path, configs: list[str]) -> Plan:
    """The plan Snakemake builds from these config files (validated, the schema's defaults filled in)."""
    config: dict[str, Any] = {}
    for name in configs:
        config = _merge(config, yaml.safe_load((root / name).read_text(encoding="utf-8")) or {})
    validate(config, str(root / "workflow/schemas/config.schema.yaml"), set_default=True)
    return Plan(config)


def expected_rows(plan: Plan) -> dict[str, list[tuple]]:
    """Our rows of every table, in the tables' order, from the plan's run matrix."""
    hfc = plan.healthfc.healthfc_runs()
    keys = list(dict.fromkeys((r["lang"], r["model"], r["system"]) for r in hfc))

    def hfc_rows(systems: tuple[str, ...]) -> list[tuple]:
        return sorted((k for k in keys if k[2] in systems), key=lambda k: (k[0], k[1], systems.index(k[2])))

    comparisons, _ = plan.healthfc.healthfc_compared_systems()
    sig = [(lang, model, a, b) for lang, model in sorted({k[:2] for k in keys}) for a, b in comparisons
           if (lang, model, a) in keys and (lang, model, b) in keys]
    shown = {"zero_shot": " (zero-shot)", "fine_tuned": " (fine-tuned)", "discriminative": ""}
    cf = [e["model"] + shown[e["system"]] for e in plan.experiments.clinifact_table_entries()]
    return {"healthfc_table3": hfc_rows(TABLE3_SYSTEMS), "healthfc_table5": hfc_rows(TABLE5_SYSTEMS),
            "healthfc_open_domain": hfc_rows(OPEN_DOMAIN_SYSTEMS), "healthfc_significance": sig,
            "clinifact_table8": cf, "clinifact_significance": list(itertools.combinations(cf, 2))}


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI(scripted) as fake:
        yield fake


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory, server) -> WorkflowCopy:
    root = tmp_path_factory.mktemp("paper")
    models = {family: build(root / "models" / family) for family, build in BUILDERS.items()}
    marian = tm.build_tiny_opus_marian(root / "models" / "marian", init_std=0.5, eos_bias=6.0, max_length=32)
    wf = WorkflowCopy(root / "wf")
    lines = wf.path(MEMORY).read_text(encoding="utf-8").splitlines()
    wf.dropped = {json.loads(line)["source"] for i, line in enumerate(lines) if i % DROP_EVERY == 0}
    web = list(read_jsonl(wf.path("resources/demo/evidence/web.jsonl")))
    for source, rel in EVIDENCE_FILES.items():
        wf.path(rel).write_text("".join(json.dumps({**r, "source": source, "title": f"{r['title']} ({source})",
                                                    "snippet": f"{source}: {r['snippet']}"}) + "\n" for r in web), encoding="utf-8")
    wf.path("config/memory_partial.jsonl").write_text("".join(line + "\n" for i, line in enumerate(lines) if i % DROP_EVERY), encoding="utf-8")
    wf.path("config/miniature.yaml").write_text(yaml.safe_dump(_overrides(models, marian, server.base_url), sort_keys=False), encoding="utf-8")
    wf.models, wf.marian = models, marian
    wf.args = ["--cores", "2", "--configfile", *CONFIGS]
    wf.run(*wf.args, timeout=3600)
    wf.plan = plan_of(wf.root, CONFIGS)
    return wf


def _csv(wf: WorkflowCopy, rel: str) -> pd.DataFrame:
    return pd.read_csv(wf.path(rel), keep_default_na=False)


def test_the_plan_is_the_papers_matrix(paper_run):
    """Not a silently empty plan: the papers' models and systems, every family, in both languages."""
    rows = expected_rows(paper_run.plan)
    # Table 3 in both languages, Table 5 and the open-domain table in English; the significance pairs each language has
    assert [len(rows[t]) for t in ("healthfc_table3", "healthfc_table5", "healthfc_open_domain", "healthfc_significance")] == [6, 4, 3, 5]
    assert {("en", "deberta-v3-large", "joint"), ("en", "deberta-v3-large", "oracle"), ("de", "xlm-r-large", "pipeline")} <= set(rows["healthfc_table3"])
    assert {("en", "deberta-v3-large", "retrieved_web"), ("en", "deberta-v3-large", "level_of_evidence")} <= set(rows["healthfc_table5"])
    assert {("en", "deberta-v3-large", "open_domain_pubmed"), ("en", "deberta-v3-large", "open_domain_wikipedia")} <= set(rows["healthfc_open_domain"])
    assert {k[0] for k in rows["healthfc_table5"] + rows["healthfc_open_domain"]} == {"en"}
    assert [k[2:] for k in rows["healthfc_significance"] if k[0] == "de"] == [("pipeline", "joint"), ("pipeline", "oracle")]
    assert rows["clinifact_table8"] == ["tfidf", "biobert", "pubmedbert", "roberta", "openbiollm-8b (zero-shot)", "llama3-8b (zero-shot)",
                                        "llama3-70b (zero-shot)", "openbiollm-70b (zero-shot)", "llama3-70b (fine-tuned)",
                                        "openbiollm-70b (fine-tuned)"]
    assert len(rows["clinifact_significance"]) == 45
    assert {r["system"] for r in paper_run.plan.healthfc.healthfc_runs()} == set(SYSTEMS) - {"retrieved_pubmed", "retrieved_wikipedia"}
    assert {r["system"] for r in paper_run.plan.healthfc.healthfc_runs() if r["lang"] == "de"} == set(TABLE3_SYSTEMS)
    assert {r["fold"] for r in paper_run.plan.healthfc.healthfc_runs()} == {0} and len(paper_run.plan.healthfc.healthfc_runs()) == 13


def test_every_table_has_exactly_the_planned_rows_and_the_papers(paper_run):
    wf = paper_run
    expected = expected_rows(wf.plan)
    t3 = _csv(wf, "results/tables/healthfc_table3.csv")
    ours = t3[t3.source == "ours"]
    assert [tuple(r) for r in ours[["lang", "model", "system"]].values] == expected["healthfc_table3"]
    assert set(ours["folds"]) == {1} and set(ours["scale"]) == {"smoke"}
    paper = t3[t3.source != "ours"]
    assert [float(x) for x in paper[paper.model == "DeBERTa"]["veracity F1"]] == [65.1, 67.5, 81.9]  # pipeline, joint, oracle
    assert all(ours["veracity F1"] != "") and all(ours[ours.system != "oracle"]["evidence F1"] != "")

    t5 = _csv(wf, "results/tables/healthfc_table5.csv")
    assert [tuple(r) for r in t5[t5.source == "ours"][["lang", "model", "experiment"]].values] == expected["healthfc_table5"]
    assert [float(x) for x in t5[t5.source != "ours"]["F1"]] == [39.3, 44.4, 51.2, 42.2]  # claims only, Google snippets, ...

    od = _csv(wf, "results/tables/healthfc_open_domain.csv")
    assert [tuple(r) for r in od[od.source == "ours"][["lang", "model", "experiment"]].values] == expected["healthfc_open_domain"]
    assert all(od[od.source == "ours"]["F1"] != "")
    assert [(e, float(f)) for e, f in od[od.source != "ours"][["experiment", "F1"]].values] == [
        ("open_domain_web", 74.5), ("open_domain_pubmed", 72.0), ("open_domain_wikipedia", 76.5)]

    sig = _csv(wf, "results/tables/healthfc_significance.csv")
    assert [tuple(r) for r in sig[["lang", "model", "system A", "system B"]].values] == expected["healthfc_significance"]
    assert (sig["claims"] > 0).all()

    t8 = _csv(wf, "results/tables/clinifact_table8.csv")
    assert list(t8[t8.source == "ours"]["model"]) == expected["clinifact_table8"]
    assert [float(x) for x in t8[t8.source != "ours"]["accuracy"]] == [80.2, 77.9, 75.4, 43.4, 37.3, 33.2, 53.6, 51.0]
    test_pairs = len(_csv(wf, "results/clinifact/pairs/test_set.csv"))
    assert {float(n) for n in t8[t8.source == "ours"]["n"]} == {test_pairs}

    cf_sig = _csv(wf, "results/tables/clinifact_significance.csv")
    assert [tuple(r) for r in cf_sig[["system A", "system B"]].values] == expected["clinifact_significance"]
    assert set(cf_sig["pairs"]) == {test_pairs}

    fig3 = _csv(wf, "results/tables/clinifact_fig3.csv")
    assert set(fig3["panel"]) == {"class", "test_type", "disease"}
    for name in TABLE_FILES:
        for ext in ("csv", "md", "tex"):
            assert wf.path(f"results/tables/{name}.{ext}").stat().st_size > 0, (name, ext)
    for rel in STATS_FILES:
        assert len(_csv(wf, rel)) > 0, rel
    for rel in FIGURES:
        assert wf.path(rel).stat().st_size > 1000, rel


def test_medsnip_table_has_every_verifier_of_the_paper(paper_run):
    wf = paper_run
    table = _csv(wf, "results/medsnip/healthfc/table.csv")
    ours, paper = table[table["source"] == "ours"], table[table["source"] != "ours"]
    verifiers = [v["name"] for v in wf.plan.config["medsnip"]["verifiers"]]
    assert verifiers == ["gpt-oss-20b", "gpt-oss-20b-fc", "llama-3.1-8b", "llama-3.3-70b"]
    modes = ["atoms", "group", "direct"]
    assert [tuple(r) for r in ours[["verifier", "mode"]].values] == [(v, m) for v in verifiers for m in modes]
    answers = list(read_jsonl(wf.path("results/medsnip/healthfc/answers.jsonl")))
    assert answers and set(ours["scored"].astype(int)) == {len(answers)}
    # the paper's rows below ours (GPT-5.4, claim-only; resources/papers/numbers.yaml)
    assert [tuple(r) for r in paper[["verifier", "mode", "FF1"]].values] == [
        ("GPT-5.4 (claim-only)", m, f) for m, f in zip(modes, (0.672, 0.672, 0.693))]
    assert wf.path("results/medsnip/healthfc/table.md").read_text().startswith("MedSNIP on HealthFC")


def test_every_tex_of_the_paper_matrix_compiles_and_fits(paper_run, tmp_path):
    """Every model family's rows, the German rows, MedSNIP's table: each .tex compiles with no overfull box over 1 pt."""
    assert paper_run.path("results/medsnip/healthfc/table.tex").exists()
    assert tex_problems(paper_run.path("results"), tmp_path) == []


def test_translation_ran_the_model_on_what_the_memory_lacks(paper_run):
    wf = paper_run
    report = read_json(wf.path("results/healthfc/translated/report.json"))
    assert report["model_name"] == "Helsinki-NLP/opus-mt-de-en"
    assert 0 < report["n_model"] <= len(wf.dropped)
    assert report["n_corrections"] + report["n_memory_hits"] + report["n_model"] == report["n_unique"]
    new = [r for r in read_jsonl(wf.path("cache/healthfc/translation_memory.jsonl")) if r.get("origin") == "model"]
    assert len(new) == report["n_model"] and {r["source"] for r in new} <= wf.dropped


def test_every_model_family_was_loaded_and_trained(paper_run):
    wf = paper_run
    plan = wf.plan
    for run in plan.healthfc.healthfc_runs():
        info = read_json(wf.path(f"{plan.healthfc.healthfc_run_dir(run)}/info.json"))
        assert info["model_config_name"] == plan.models.model_name(run["model"]), run
        if run["model"] != "tfidf":  # the encoder fine-tuned for one step (the pipeline's two: selector and classifier)
            trained = [info["evidence_model"], info["veracity_model"]] if run["system"] == "pipeline" else [info["model"]]
            assert [(t["train"]["steps"], t["train"]["device"], t["train"]["precision"]) for t in trained] == [(1, "cpu", "fp32")] * len(trained), run
    for run in plan.experiments.clinifact_runs():
        info = read_json(wf.path(f"{run['dir']}/info.json"))
        assert info["model_config_name"] == plan.models.model_name(run["model"]), run
        if run["system"] == "zero_shot":  # the tiny Llama scored every test pair's options (several tokens each)
            served = run["model"] in plan.config["experiments"]["clinifact"]["model_zero_shot"]  # the 70B rows: vLLM (the fake server)
            assert info["backend"] == ("openai" if served else "transformers") and info["n_no_option"] == 0, run
            assert info["skips"]["n_skipped"] == 0, run
            if served:  # one completion per test pair, sent or (the second 70B alias: the same tiny model) from the cache
                assert info["requests_sent"] + info["cache_hits"] == info["skips"]["counts"]["pairs"] > 0, run
        elif run["system"] == "fine_tuned":  # LoRA on the tiny Llama, one step, the adapters alone saved
            assert (info["train"]["steps"], info["train"]["device"], info["train"]["precision"]) == (1, "cpu", "fp32"), run
            assert info["kept_epoch"] is not None and info["n_no_option"] == 0 and info["lora"]["load_in_4bit"] is False, run
            saved = sorted(p.name for p in wf.path(info["saved"]["adapters"]).iterdir())
            assert "adapter_config.json" in saved and "adapter_model.safetensors" in saved and "model.safetensors" not in saved, run
        elif run["model"] != "tfidf":
            assert (info["train"]["steps"], info["train"]["device"], info["train"]["precision"]) == (1, "cpu", "fp32"), run
    used = {Path(plan.models.model_name(m)).name for m in FAMILY}
    assert used == set(BUILDERS)  # every family behind some alias
