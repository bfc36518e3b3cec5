"""Which rules a cluster run submits as jobs, and which run where the Snakemake process runs.

A job on a cluster waits in the queue, starts Python on a node and imports its libraries: worth it for
training, translation with a local model and local LLM inference, not for the seconds of scoring a fold,
an ensemble, a table, a figure, a diff or a dataset step. And many clusters' compute nodes have no route
to the internet, so the rules that fetch (the portal crawl, release downloads, ClinicalTrials.gov,
PubMed, LLM and search servers) run where Snakemake runs too, unless ``cluster.compute_nodes_online``
says the nodes are online. A local rule runs the same code with the same inputs, so its outputs do not
depend on where it runs. docs/slurm.md lists every rule with its place.
"""

from __future__ import annotations

from typing import Any

from medfc.common.llm_backends import runs_locally

# every rule of workflow/rules/*.smk, by what it does (tests/unit/plan/test_cluster.py checks the lists
# against the rule files, so a new rule must be placed here)
COMPUTE_RULES = ("healthfc_experiment", "clinifact_experiment", "clinifact_fine_tune", "healthfc_inner_cv", "clinifact_inner_cv")  # training: always a job
MODEL_RULES = ("healthfc_translate", "clinifact_zero_shot", "medsnip_prepare", "medsnip_decompose", "medsnip_verify")
NETWORK_RULES = ("healthfc_crawl", "healthfc_release", "healthfc_retrieve", "clinifact_fetch_studies", "clinifact_fetch_abstracts",
                 "clinifact_import_release")
LIGHT_RULES = ("healthfc_parse", "healthfc_align", "healthfc_dataset", "healthfc_folds", "healthfc_stats",
               "healthfc_diff", "clinifact_build_claims", "clinifact_build_pairs", "clinifact_stats", "clinifact_diff",
               "healthfc_ensemble", "clinifact_ensemble", "healthfc_score", "clinifact_score", "clinifact_zero_shot_score",
               "clinifact_fine_tune_score",
               "table", "clinifact_fig3", "medsnip_score", "medsnip_table", "provenance")
ALL_RULES = COMPUTE_RULES + MODEL_RULES + NETWORK_RULES + LIGHT_RULES


def _local_model(llm: dict[str, Any] | None) -> bool:
    return bool(llm) and runs_locally(llm.get("backend"))


def runs_a_local_model(config: dict[str, Any], rule: str) -> bool:
    """Whether a :data:`MODEL_RULES` rule runs a model on its own node (else it calls a server or an API)."""
    if rule == "healthfc_translate":
        return config["healthfc"]["translation"]["backend"] in ("marian", "ctranslate2")
    if rule == "clinifact_zero_shot":  # any planned model with a local backend (its own override or the section's)
        cx = config["experiments"]["clinifact"]
        models = config["models"]["clinifact"]["zero_shot"] or [None]
        return any(runs_locally({**cx["zero_shot"], **(cx["model_zero_shot"].get(m) or {} if m else {})}["backend"]) for m in models)
    ms = config["medsnip"]
    base = ms["llm"]

    def role(overrides: dict[str, Any] | None) -> bool:
        return _local_model({**base, **(overrides or {})})

    if rule == "medsnip_prepare":
        return ms["datasets"]["healthfc"]["rewrite_claims"] and role(ms["rewriter"])
    if rule == "medsnip_decompose":
        return role(ms["decomposer"])
    if rule == "medsnip_verify":
        return any(role(v["llm"]) for v in ms["verifiers"])
    raise ValueError(f"{rule} is not a rule that runs a model")


def cluster_rules(config: dict[str, Any]) -> list[str]:
    """The rules a cluster run submits: training, the model rules that run a local model, and, with
    ``cluster.compute_nodes_online``, the rules that call the network too."""
    online = config["cluster"]["compute_nodes_online"]
    out = list(COMPUTE_RULES)
    out += [r for r in MODEL_RULES if runs_a_local_model(config, r) or online]
    out += list(NETWORK_RULES) if online else []
    return out


def local_rules(config: dict[str, Any]) -> list[str]:
    """Every other rule: it runs where the Snakemake process runs (Snakemake's ``localrules``)."""
    submitted = set(cluster_rules(config))
    return [r for r in ALL_RULES if r not in submitted]
