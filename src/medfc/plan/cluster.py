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

from medfc.plan.jobs import Config, JobSpec, Placement
from medfc.plan.run import job_specs

# every rule's record in the job table says where it runs (its ``placement``; tests/unit/plan/test_cluster.py
# checks that every rule of workflow/rules/*.smk has one); a rule placed ``model`` says when it runs a local model


def rules_placed(placement: Placement) -> tuple[str, ...]:
    """The rules of one placement, in the job table's order."""
    return tuple(rule for rule, spec in job_specs().items() if spec.placement == placement)


def compute_rules() -> tuple[str, ...]:
    """Training: always a job (HealthFC's runs, the CliniFact systems placed ``compute``, the inner cross-validations)."""
    return rules_placed("compute")


def model_rules() -> tuple[str, ...]:
    """The rules that run a model: a job when it runs on the job's node (:func:`runs_a_local_model`)."""
    return rules_placed("model")


def network_rules() -> tuple[str, ...]:
    """The rules that call the network (downloads, APIs, search)."""
    return rules_placed("network")


def light_rules() -> tuple[str, ...]:
    """Seconds of work: the dataset steps, the ensembles, the scorings, the tables, the figures."""
    return rules_placed("light")


def all_rules() -> tuple[str, ...]:
    return tuple(job_specs())


def runs_a_local_model(config: Config, rule: str) -> bool:
    """Whether a :func:`model_rules` rule runs a model on its own node (else it calls a server or an API)."""
    spec: JobSpec | None = job_specs().get(rule)
    if spec is None or spec.local_model is None:
        raise ValueError(f"{rule} is not a rule that runs a model")
    return spec.local_model(config)


COMPUTE_RULES = compute_rules()
MODEL_RULES = model_rules()
NETWORK_RULES = network_rules()
LIGHT_RULES = light_rules()
ALL_RULES = all_rules()


def cluster_rules(config: Config) -> list[str]:
    """The rules a cluster run submits: training, the model rules that run a local model, and, with
    ``cluster.compute_nodes_online``, the rules that call the network too (in the job table's order)."""
    online = config["cluster"]["compute_nodes_online"]
    out = list(compute_rules())
    out += [r for r in model_rules() if online or runs_a_local_model(config, r)]
    out += list(network_rules()) if online else []
    return out


def local_rules(config: Config) -> list[str]:
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
