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

import re
from collections.abc import Iterable, Mapping
from typing import Any

from medfc.common.llm_backends import runs_locally
from medfc.experiments.clinifact_systems import CLINIFACT_SYSTEMS, SYSTEM_RULE, SYSTEM_SCORE_RULE, CliniFactSystem
from medfc.healthfc.translation_backends import translation_backend
from medfc.medsnip.sources import answer_source, enabled_sources

# every rule of workflow/rules/*.smk, by what it does (tests/unit/plan/test_cluster.py checks the lists
# against the rule files, so a new rule must be placed here). A CliniFact system's rules are placed by its
# record (medfc.experiments.clinifact_systems: its rule by its placement, its inner cross-validation with the
# training, its score and ensemble rules with the light rules; the generic pair that runs the systems with a runner
# of their own, with the training and the light rules): the functions below read the registry, and the constants
# are what they give for the systems registered at import.
NETWORK_RULES = ("healthfc_crawl", "healthfc_release", "healthfc_retrieve", "clinifact_fetch_studies", "clinifact_fetch_abstracts",
                 "clinifact_import_release")
MEDSNIP_MODEL_RULES = ("medsnip_prepare", "medsnip_decompose", "medsnip_verify")
DATASET_LIGHT_RULES = ("healthfc_parse", "healthfc_align", "healthfc_dataset", "healthfc_folds", "healthfc_export",
                       "healthfc_stats", "healthfc_diff", "clinifact_build_claims", "clinifact_build_pairs", "clinifact_export",
                       "clinifact_stats", "clinifact_diff")
REPORT_LIGHT_RULES = ("table", "clinifact_fig3", "medsnip_score", "medsnip_table", "provenance", "index")


def compute_rules() -> tuple[str, ...]:
    """Training: always a job (HealthFC's runs, the CliniFact systems placed ``compute``, the generic rule of those with a
    runner of their own, the inner cross-validations)."""
    systems = CLINIFACT_SYSTEMS.values()
    return ("healthfc_experiment", *(s.rule for s in systems if s.placement == "compute" and s.runner is None), SYSTEM_RULE,
            "healthfc_inner_cv", *(s.inner_cv_rule for s in systems if s.inner_cv_rule))


def model_rules() -> tuple[str, ...]:
    """The rules that run a model: a job when it runs on the job's node (:func:`runs_a_local_model`)."""
    return ("healthfc_translate", *(s.rule for s in CLINIFACT_SYSTEMS.values() if s.placement == "model"), *MEDSNIP_MODEL_RULES)


def light_rules() -> tuple[str, ...]:
    """Seconds of work: the dataset steps, the ensembles, the scorings, the tables, the figures."""
    systems = CLINIFACT_SYSTEMS.values()
    return (*DATASET_LIGHT_RULES, "healthfc_ensemble", *(s.ensemble_rule for s in systems if s.ensemble_rule),
            "healthfc_score", *(s.score_rule for s in systems if s.runner is None), SYSTEM_SCORE_RULE, *REPORT_LIGHT_RULES)


def all_rules() -> tuple[str, ...]:
    return compute_rules() + model_rules() + NETWORK_RULES + light_rules()


COMPUTE_RULES = compute_rules()
MODEL_RULES = model_rules()
LIGHT_RULES = light_rules()
ALL_RULES = all_rules()


def _clinifact_model_system(rule: str) -> CliniFactSystem | None:
    return next((s for s in CLINIFACT_SYSTEMS.values() if s.rule == rule and s.placement == "model"), None)


def _local_model(llm: dict[str, Any] | None) -> bool:
    return bool(llm) and runs_locally(llm.get("backend"))


def runs_a_local_model(config: dict[str, Any], rule: str) -> bool:
    """Whether a :func:`model_rules` rule runs a model on its own node (else it calls a server or an API)."""
    if rule == "healthfc_translate":
        return translation_backend(config["healthfc"]["translation"]["backend"]).local
    spec = _clinifact_model_system(rule)
    if spec is not None:  # any planned model of the system with a local backend (its own override or the section's)
        cx = config["experiments"]["clinifact"]
        models = config["models"]["clinifact"][spec.name] or [None]
        return any(runs_locally({**cx[spec.section], **(cx[spec.overrides].get(m) or {} if m else {})}["backend"]) for m in models)
    ms = config["medsnip"]
    base = ms["llm"]

    def role(overrides: dict[str, Any] | None) -> bool:
        return _local_model({**base, **(overrides or {})})

    if rule == "medsnip_prepare":
        rewriting = any(answer_source(d).rewrites_claims(ms["datasets"][d]) for d in enabled_sources(ms["datasets"]))
        return rewriting and role(ms["rewriter"])
    if rule == "medsnip_decompose":
        return role(ms["decomposer"])
    if rule == "medsnip_verify":
        return any(role(v["llm"]) for v in ms["verifiers"])
    raise ValueError(f"{rule} is not a rule that runs a model")


def cluster_rules(config: dict[str, Any]) -> list[str]:
    """The rules a cluster run submits: training, the model rules that run a local model, and, with
    ``cluster.compute_nodes_online``, the rules that call the network too."""
    online = config["cluster"]["compute_nodes_online"]
    out = list(compute_rules())
    out += [r for r in model_rules() if runs_a_local_model(config, r) or online]
    out += list(NETWORK_RULES) if online else []
    return out


def local_rules(config: dict[str, Any]) -> list[str]:
    """Every other rule: it runs where the Snakemake process runs (Snakemake's ``localrules``)."""
    submitted = set(cluster_rules(config))
    return [r for r in all_rules() if r not in submitted]


# the cluster settings a profile must not submit with as they ship: a partition or account still a placeholder
CLUSTER_SETTINGS = {"slurm_partition": "your cluster's partition (sinfo -s lists them)",
                    "slurm_account": "your account (sacctmgr show associations user=$USER format=account lists yours)"}
PLACEHOLDER = re.compile(r"^<.*>$|change[-_ ]?me|^your[-_ ]", re.I)


def placeholder_settings(default_resources: Iterable[str], set_resources: Mapping[str, Mapping[str, object]]) -> list[str]:
    """One line for each :data:`CLUSTER_SETTINGS` resource still a placeholder (``<your-partition>``, ``CHANGE-ME``):
    ``default_resources`` as ``name=value`` (``--default-resources``, a profile's ``default-resources``),
    ``set_resources`` rule → resource → value (``--set-resources``, a profile's ``set-resources``)."""
    given: list[tuple[str, str, str]] = []
    for item in default_resources:
        name, _, value = str(item).partition("=")
        given.append((f"default-resources: {name}", name, value))
    for rule, values in set_resources.items():
        given += [(f"set-resources: {rule}: {name}", name, str(value)) for name, value in values.items()]
    problems = []
    for where, name, value in given:
        value = value.strip().strip("'\"")
        if name in CLUSTER_SETTINGS and (not value or PLACEHOLDER.search(value)):
            problems.append(f"cluster: {where} is {value!r}, a placeholder: set {CLUSTER_SETTINGS[name]} in the profile "
                            f"(profiles/slurm/config.yaml) or with --default-resources {name}=NAME")
    return problems
