"""Which rules a cluster run submits as jobs, and which run where the Snakemake process runs.

A cluster job waits in the queue and imports its libraries: worth it for training, local translation and local LLM
inference, not for seconds of scoring, tables or dataset steps. Many clusters' compute nodes have no route to the
internet, so the rules that fetch run where Snakemake runs too, unless ``cluster.compute_nodes_online``. Each rule's
record says where it runs (its ``placement``); docs/slurm.md lists every rule with its place."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from medfc.plan.jobs import Config, Placement
from medfc.plan.run import job_specs


def rules_placed(placement: Placement) -> tuple[str, ...]:
    """The rules of one placement, in the job table's order."""
    return tuple(rule for rule, spec in job_specs().items() if spec.placement == placement)


def runs_a_local_model(config: Config, rule: str) -> bool:
    """Whether a rule placed ``model`` runs a model on its own node (else it calls a server or an API)."""
    return job_specs()[rule].local_model(config)


COMPUTE_RULES, MODEL_RULES, NETWORK_RULES, LIGHT_RULES = map(rules_placed, ("compute", "model", "network", "light"))


def cluster_rules(config: Config) -> list[str]:
    """The rules a cluster run submits: training, the model rules that run a local model, and, with
    ``cluster.compute_nodes_online``, the rules that call the network too (in the job table's order)."""
    online = config["cluster"]["compute_nodes_online"]
    models = [r for r in rules_placed("model") if online or runs_a_local_model(config, r)]
    return [*rules_placed("compute"), *models, *(rules_placed("network") if online else ())]


def local_rules(config: Config) -> list[str]:
    """Every other rule: it runs where the Snakemake process runs (Snakemake's ``localrules``)."""
    submitted = set(cluster_rules(config))
    return [r for r in job_specs() if r not in submitted]


# the cluster settings a profile must not submit with as they ship: a partition or account still a placeholder
CLUSTER_SETTINGS = {"slurm_partition": "your cluster's partition (sinfo -s lists them)",
                    "slurm_account": "your account (sacctmgr show associations user=$USER format=account lists yours)"}
PLACEHOLDER = re.compile(r"^<.*>$|change[-_ ]?me|^your[-_ ]", re.I)


def placeholder_settings(default_resources: Iterable[str], set_resources: Mapping[str, Mapping[str, object]]) -> list[str]:
    """One line for each :data:`CLUSTER_SETTINGS` resource still a placeholder: ``default_resources`` as
    ``name=value``, ``set_resources`` rule → resource → value (as the profile or the command line gives them)."""
    pairs = (str(item).partition("=") for item in default_resources)
    given = [(f"default-resources: {name}", name, value) for name, _, value in pairs]
    for rule, values in set_resources.items():
        given += [(f"set-resources: {rule}: {name}", name, str(value)) for name, value in values.items()]
    given = [(where, name, value.strip().strip("'\"")) for where, name, value in given if name in CLUSTER_SETTINGS]
    return [f"cluster: {where} is {value!r}, a placeholder: set {CLUSTER_SETTINGS[name]} in the profile "
            f"(profiles/slurm/config.yaml) or with --default-resources {name}=NAME"
            for where, name, value in given if not value or PLACEHOLDER.search(value)]
