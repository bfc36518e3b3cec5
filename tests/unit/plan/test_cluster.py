"""Which rules a cluster run submits (medfc.plan.cluster): training, translation with a local model and
local LLM inference; every other rule runs where Snakemake runs, the network ones unless the compute nodes
are online. Configs from the schema's defaults, or the paper-scale files as Snakemake merges them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from snakemake.utils import update_config, validate

from medfc.plan import Plan, job_specs
from medfc.plan import cluster as C
from tests.helpers.config import defaults
from tests.unit.plan.test_plan import config

REPO = Path(__file__).resolve().parents[3]


def test_every_rule_of_the_workflow_has_exactly_one_place():
    declared = set()
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        declared |= set(re.findall(r"^rule (\w+):", smk.read_text(encoding="utf-8"), re.M))
    assert set(job_specs()) == declared


def test_by_default_only_training_local_translation_and_local_llms_are_submitted():
    cfg = config()  # translation marian, zero-shot transformers, MedSNIP through an OpenAI-compatible server
    assert C.cluster_rules(cfg) == ["healthfc_experiment", "healthfc_inner_cv", "healthfc_final", "pairs_experiment", "pairs_inner_cv",
                                    "clinifact_fine_tune", "pairs_final", "healthfc_translate", "clinifact_zero_shot"]
    local = Plan(cfg).local_rules()
    assert set(local) == set(job_specs()) - set(C.cluster_rules(cfg))
    assert {"healthfc_crawl", "clinifact_fetch_abstracts", "healthfc_score", "table", "healthfc_ensemble",
            "medsnip_verify", "clinifact_diff"} <= set(local)


def test_servers_and_apis_run_where_snakemake_runs_local_models_on_nodes():
    cfg = config(healthfc__translation__backend="deepl", experiments__clinifact__zero_shot__backend="openai")
    assert C.cluster_rules(cfg) == ["healthfc_experiment", "healthfc_inner_cv", "healthfc_final", "pairs_experiment", "pairs_inner_cv",
                                    "clinifact_fine_tune", "pairs_final"]
    # per-model zero-shot backends: a planned model run locally makes the rule a job, servers for all of them do not
    models = {"discriminative": [], "zero_shot": ["minilm", "tfidf"], "fine_tuned": []}
    cfg = config(healthfc__translation__backend="deepl", models__clinifact=models,
                 experiments__clinifact__model_zero_shot={"tfidf": {"backend": "transformers"}}, experiments__clinifact__zero_shot__backend="openai")
    assert "clinifact_zero_shot" in C.cluster_rules(cfg)
    cfg = config(healthfc__translation__backend="deepl", models__clinifact=models,
                 experiments__clinifact__model_zero_shot={m: {"backend": "openai"} for m in models["zero_shot"]})
    assert "clinifact_zero_shot" not in C.cluster_rules(cfg)
    cfg = config(medsnip__llm={**defaults()["medsnip"]["llm"], "backend": "transformers"})
    assert {"medsnip_decompose", "medsnip_verify"} <= set(C.cluster_rules(cfg))
    assert "medsnip_prepare" in C.cluster_rules(cfg)  # it rewrites HealthFC claims with the model
    ms = defaults()["medsnip"]
    cfg = config(medsnip__llm={**ms["llm"], "backend": "transformers"},
                 medsnip__datasets={**ms["datasets"], "healthfc": {**ms["datasets"]["healthfc"], "rewrite_claims": False}})
    assert "medsnip_prepare" not in C.cluster_rules(cfg)  # no rewriting: no model runs there
    # one verifier with a local model makes the verify rule a job
    base = config()
    verifiers = [dict(base["medsnip"]["verifiers"][0], llm={"backend": "transformers"})] if base["medsnip"]["verifiers"] else []
    if verifiers:
        cfg = config(medsnip__verifiers=verifiers)
        assert "medsnip_verify" in C.cluster_rules(cfg) and "medsnip_decompose" not in C.cluster_rules(cfg)


def test_online_compute_nodes_take_the_network_rules_too():
    cfg = config(cluster__compute_nodes_online=True)
    submitted = C.cluster_rules(cfg)
    assert set(C.NETWORK_RULES) <= set(submitted) and set(C.MODEL_RULES) <= set(submitted)
    assert set(Plan(cfg).local_rules()) == set(C.LIGHT_RULES)


def test_the_paper_scale_plan_submits_only_training_translation_and_local_llm_rules():
    cfg: dict = {}
    for name in ("config.yaml", "live.yaml", "paper.yaml"):
        update_config(cfg, yaml.safe_load((REPO / "config" / name).read_text(encoding="utf-8")) or {})
    validate(cfg, schema=str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    submitted = set(C.cluster_rules(cfg))
    assert submitted <= set(C.COMPUTE_RULES) | set(C.MODEL_RULES)
    assert set(C.COMPUTE_RULES) <= submitted and "healthfc_translate" in submitted
