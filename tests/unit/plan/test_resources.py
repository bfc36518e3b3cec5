"""What each job asks its executor for (medfc.plan.resources): GPUs, threads, memory and time by the kind and
size of its model, from the schema's rows (experiments.resources) and one alias's overrides
(models.resources); jobs without a model of their own (ensembles, scoring, tables) ask for no GPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config, validate

from medfc.experiments.models.options import MODEL_CONFIGS
from medfc.plan import Plan
from medfc.plan import cluster as C
from medfc.plan import resources as R
from medfc.config.validate import ConfigError, plan_for
from tests.helpers.config import SCHEMA, defaults
from tests.unit.plan.test_plan import DEMO_RELEASE, config

REPO = Path(__file__).resolve().parents[3]
S = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
ROW_DEFAULTS = defaults()["experiments"]["resources"]


def paper_plan() -> Plan:
    """config.yaml < live.yaml < paper.yaml as Snakemake merges them, the schema's defaults filled in."""
    cfg: dict = {}
    for name in ("config.yaml", "live.yaml", "paper.yaml"):
        update_config(cfg, yaml.safe_load((REPO / "config" / name).read_text(encoding="utf-8")) or {})
    validate(cfg, schema=str(SCHEMA), set_default=True)
    return Plan(cfg)


def row(name: str, gpu: int = 0) -> dict[str, int]:
    return {"gpu": gpu, **ROW_DEFAULTS[name]}


def test_the_rows_are_declared_once_in_the_schema_and_every_model_kind_has_one():
    rows = S["properties"]["experiments"]["properties"]["resources"]["properties"]
    assert tuple(rows) == R.ROWS
    assert tuple(S["$defs"]["job_resources"]["properties"]) == R.ROW_KEYS
    for name, spec in rows.items():  # each row: the shared declaration, its own defaults only
        assert spec["$ref"] == "#/$defs/job_resources"
        assert set(spec["properties"]) == set(R.ROW_KEYS) and all(set(v) == {"default"} for v in spec["properties"].values()), name
    assert {cls.kind for cls in MODEL_CONFIGS} - {"encoder"} <= set(R.ROWS)  # encoder: encoder or encoder_large
    per_model = S["properties"]["models"]["properties"]["resources"]["additionalProperties"]["properties"]
    assert set(per_model) == {"size", *R.KEYS} and per_model["size"]["enum"] == ["base", "large"]


@pytest.mark.parametrize(("name", "llm", "size"), [
    ("bert-large-uncased", False, "large"), ("xlm-roberta-large", False, "large"), ("microsoft/deberta-v3-large", False, "large"),
    ("dmis-lab/biobert-large-cased-v1.1", False, "large"), ("google/t5-v1_1-xl", False, "large"),
    ("dmis-lab/biobert-base-cased-v1.2", False, "base"), ("roberta-base", False, "base"), ("offline:minilm", False, "base"),
    ("xlm-roberta-base", False, "base"),  # "xlm" is not the word xl
    ("meta-llama/Meta-Llama-3-70B-Instruct", True, "large"), ("aaditya/Llama3-OpenBioLLM-70B", True, "large"),
    ("openai/gpt-oss-20b", True, "large"), ("aaditya/Llama3-OpenBioLLM-8B", True, "base"), ("Qwen/Qwen2.5-7B-Instruct", True, "base"),
    ("meta-llama/Llama-3.1-8B-Instruct", True, "base"), ("gpt2", True, "base"), ("/models/my-llm", True, "base"),
])
def test_a_models_size_is_read_from_its_name(name, llm, size):
    assert R.name_size(name, llm) == size


def test_paper_scale_jobs_follow_their_models_kind_and_size():
    plan = paper_plan()
    assert plan.config["experiments"]["gpu"] == 1
    hfc = lambda model: plan.job_resources("healthfc_experiment", {"lang": "en", "model": model, "system": "oracle", "fold": "0"})  # noqa: E731
    assert hfc("tfidf") == row("tfidf") == {"gpu": 0, "threads": 2, "mem_mb": 4096, "runtime": 60}
    for large in ("deberta-v3-large", "bert-large", "biobert-large", "xlm-r-large"):
        assert hfc(large) == row("encoder_large", gpu=1) == {"gpu": 1, "threads": 4, "mem_mb": 32000, "runtime": 240}
    cf = lambda rule, model: plan.job_resources(rule, {"model": model})  # noqa: E731
    assert cf("pairs_experiment", "tfidf") == row("tfidf")
    for base in ("biobert", "pubmedbert", "roberta"):
        assert cf("pairs_experiment", base) == row("encoder", gpu=1) == {"gpu": 1, "threads": 4, "mem_mb": 16000, "runtime": 240}
    for llm in ("openbiollm-8b", "llama3-8b"):  # transformers backend: an 8B model on the job's GPU
        assert cf("clinifact_zero_shot", llm) == row("llm", gpu=1) == {"gpu": 1, "threads": 4, "mem_mb": 32000, "runtime": 240}
    for big in ("llama3-70b", "openbiollm-70b"):  # zero-shot through vLLM servers: no GPU; QLoRA on one GPU
        assert cf("clinifact_zero_shot", big) == row("server") == {"gpu": 0, "threads": 1, "mem_mb": 2048, "runtime": 240}
        assert cf("clinifact_fine_tune", big) == row("lora_large", gpu=1) == {"gpu": 1, "threads": 8, "mem_mb": 96000, "runtime": 1440}
    # translation with Opus-MT on its GPU (live.yaml); MedSNIP through servers: none
    assert plan.job_resources("healthfc_translate") == {"gpu": 1, "threads": 2, "mem_mb": 8192, "runtime": 600}
    verifier = plan.config["medsnip"]["verifiers"][0]["name"]
    assert plan.job_resources("medsnip_verify", {"dataset": "healthfc", "mode": "atoms", "verifier": verifier}) == {
        "gpu": 0, "threads": 1, "mem_mb": 2048, "runtime": plan.config["medsnip"]["runtime"]}


def test_a_cpu_run_asks_for_no_gpu_and_cpu_kinds_never_do():
    plan = Plan(config(models__aliases={"gbm-bio": "sklearn:gbm"}))
    assert plan.config["experiments"]["gpu"] == 0
    for model, name in (("tfidf", "tfidf"), ("gbm", "gbm"), ("frozen-minilm", "frozen"), ("minilm", "encoder")):
        assert plan.job_resources("pairs_experiment", {"dataset": "clinifact", "model": model}) == row(name)
    gpu_run = Plan(config(experiments__gpu=2))
    assert gpu_run.job_resources("pairs_experiment", {"dataset": "clinifact", "model": "minilm"}) == row("encoder", gpu=2)
    for model, name in (("tfidf", "tfidf"), ("gbm", "gbm"), ("frozen-minilm", "frozen"), ("frozen-mpnet", "frozen")):
        assert gpu_run.job_resources("healthfc_experiment", {"model": model}) == row(name)
    # a zero-shot model on a server asks for none on a GPU run; a local one its size's row
    zs = Plan(config(experiments__gpu=1, models__aliases={"llm8": "org/Model-8B", "llm70": "org/Model-70B"},
                     experiments__clinifact__model_zero_shot={"llm8": {"backend": "openai"}}))
    assert zs.job_resources("clinifact_zero_shot", {"model": "llm8"}) == row("server")
    assert zs.job_resources("clinifact_zero_shot", {"model": "llm70"}) == row("llm_large", gpu=1)
    assert zs.job_resources("clinifact_fine_tune", {"model": "llm8"}) == row("lora", gpu=1)


def test_one_alias_overrides_its_size_and_values_but_a_server_job_keeps_its_row():
    cfg = config(experiments__gpu=1, models__aliases={"mine": "/models/checkpoint", "llm": "/models/llm"},
                 models__resources={"mine": {"size": "large", "mem_mb": 40000}, "tfidf": {"threads": 8},
                                    "frozen-minilm": {"gpu": 1}, "llm": {"size": "large", "gpu": 4, "mem_mb": 256000}},
                 experiments__clinifact__model_zero_shot={"llm": {"backend": "openai"}})
    plan = Plan(cfg)
    job = lambda rule, model: plan.job_resources(rule, {"model": model})  # noqa: E731
    assert job("healthfc_experiment", "mine") == {**row("encoder_large", gpu=1), "mem_mb": 40000}
    assert job("healthfc_experiment", "tfidf") == {**row("tfidf"), "threads": 8}
    assert job("pairs_experiment", "frozen-minilm") == {**row("frozen"), "gpu": 1}
    assert job("clinifact_fine_tune", "llm") == {**row("lora_large"), "gpu": 4, "mem_mb": 256000}
    assert job("clinifact_zero_shot", "llm") == row("server")  # the server holds the model
    # a row's keys one by one: the others keep the row's defaults
    cfg = {"models": {"healthfc": {"en": ["minilm"]}}, "experiments": {"resources": {"encoder": {"threads": 16}}}}
    validate(cfg, schema=str(SCHEMA), set_default=True)
    assert Plan(cfg).job_resources("healthfc_experiment", {"model": "minilm"})["threads"] == 16
    assert cfg["experiments"]["resources"]["encoder"] == {**ROW_DEFAULTS["encoder"], "threads": 16}


def test_a_smoke_scale_model_job_asks_for_one_thread_unless_its_alias_says_more():
    cfg = config(experiments__scale="smoke", experiments__smoke={"max_steps": 2, "max_examples": 16},
                 models__resources={"gbm": {"threads": 3}})
    plan = Plan(cfg)
    job = lambda rule, model: plan.job_resources(rule, {"model": model})  # noqa: E731
    assert job("healthfc_experiment", "minilm") == {**row("encoder"), "threads": 1}
    assert job("healthfc_experiment", "tfidf") == {**row("tfidf"), "threads": 1}
    assert job("healthfc_inner_cv", "tfidf")["threads"] == 1
    assert job("pairs_experiment", "gbm") == {**row("gbm"), "threads": 3}


def test_translation_asks_for_its_gpu_only_with_a_local_model():
    assert Plan(config(healthfc__translation__gpu=1)).job_resources("healthfc_translate")["gpu"] == 1
    tr = {**defaults()["healthfc"]["translation"], "gpu": 1, "backend": "deepl"}
    assert Plan(config(healthfc__translation=tr)).job_resources("healthfc_translate")["gpu"] == 0


FINAL = ("healthfc_final", "pairs_final")  # a row's final model: its members' runs' resources


def test_only_model_rules_have_computed_resources_and_the_others_no_gpu():
    """Ensembles, scoring, tables, figures and the data rules: fixed small resources in their rules, no GPU;
    each rule that asks the plan names its own function."""
    plan = Plan(config())
    with pytest.raises(ValueError, match="healthfc_ensemble has fixed resources"):
        plan.job_resources("healthfc_ensemble", {"model": "tfidf+minilm"})
    asked, model_rules = set(), set(R.model_rows(plan))
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        for rule, body in re.findall(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", smk.read_text(encoding="utf-8"), re.M):
            block = re.search(r"^    resources:\n((?:        .*\n)*)", body, re.M)
            gpu = re.search(r"^        gpu=(.*)$", block.group(1), re.M) if block else None
            if rule in (*model_rules, *FINAL, "healthfc_translate"):
                assert re.search(rf"^    threads: PLAN\.threads_of\(\w+\.{rule}\)$", body, re.M), rule
                assert re.fullmatch(rf"        \*\*PLAN\.resources_of\(\w+\.{rule}\),\n", block.group(1)), rule
                asked.add(rule)
            elif rule not in C.MODEL_RULES:  # MedSNIP's model rules: medfc.plan.medsnip._model_resources
                assert gpu is None, f"{rule} asks for a GPU: {gpu.group(0)}"
    assert asked == {*model_rules, *FINAL, "healthfc_translate"}


def test_config_mistakes_in_resources_are_one_line_naming_the_key():
    base = {"healthfc": {"release": DEMO_RELEASE}}
    with pytest.raises(ConfigError, match=r"^config: experiments\.mem_mb: unknown key"):
        plan_for({**base, "experiments": {"mem_mb": 32000}}, SCHEMA)
    with pytest.raises(ConfigError, match=r"^config: models\.resources\.tfidf\+minilm: 'tfidf\+minilm' is an ensemble"):
        plan_for({**base, "models": {"ensembles": {"tfidf+minilm": {"members": ["tfidf", "minilm"]}},
                                     "resources": {"tfidf+minilm": {"gpu": 0}}}}, SCHEMA)
    with pytest.raises(ConfigError, match=r"^config: models\.resources\.tfdf: 'tfdf' is not in models\.aliases; did you mean tfidf\?"):
        plan_for({**base, "models": {"resources": {"tfdf": {"gpu": 0}}}}, SCHEMA)
    with pytest.raises(ConfigError, match=r"^config: models\.resources\.tfidf\.size: 'huge' is not allowed \(allowed: base, large\)"):
        plan_for({**base, "models": {"resources": {"tfidf": {"size": "huge"}}}}, SCHEMA)
    with pytest.raises(ConfigError, match=r"^config: experiments\.resources\.encoder\.gpu: unknown key"):
        plan_for({**base, "experiments": {"resources": {"encoder": {"gpu": 1}}}}, SCHEMA)
