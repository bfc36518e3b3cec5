# Shared set-up: config validation, the plan (medfc.plan: run matrix, and every job's
# config-dependent inputs, options, prompts and resources, from the plan's function named after its
# rule, e.g. PLAN.options_of(HealthFCPlan.healthfc_experiment); PLAN.inputs_of, PLAN.prompts_of,
# PLAN.threads_of, PLAN.resources_of) and wildcard constraints.

import functools
import os
import sys

from medfc.common import provenance
from medfc.common.codeversion import use_disk_cache, user_cache_dir, versioned
from medfc.config.prerequisites import checked_here, cuda_problem, use_checkout_nltk_data
from medfc.config.validate import ConfigError, plan_for
from medfc.experiments.healthfc.systems import SYSTEMS as HFC_SYSTEMS
from medfc.medsnip.options import answer_source
from medfc.plan import HEALTHFC_WILDCARDS, MEDSNIP_TITLES, MEDSNIP_WILDCARDS, TABLES
from medfc.plan.cluster import placeholder_settings
from medfc.plan.datasets import DatasetsPlan
from medfc.plan.examples import ExamplesPlan
from medfc.plan.experiments import ExperimentsPlan, HealthFCPlan
from medfc.plan.layout import tables_and_figures
from medfc.plan.medsnip import MedsnipPlan
from medfc.plan.run import RunPlan
from medfc.plan.tables import TablesPlan

SCHEMA = "../schemas/config.schema.yaml"

# each module's share of the steps' code versions, kept by content in the user's cache folder
use_disk_cache(user_cache_dir())


def stop(message):
    """A config mistake: one short message on stderr and exit status 1 (not the whole schema, no traceback)."""
    print(message, file=sys.stderr)
    sys.exit(1)


# METEOR's NLTK data, for a run in another folder than the checkout: the checkout's, unless NLTK_DATA names one
# (the jobs inherit it)
use_checkout_nltk_data(CHECKOUT)

# the schema (read once; its defaults filled into config), the plan, its checks and every planned job's
# options, once: a mistake in any of them is one line naming the key (medfc.config.validate.plan_for)
# and, where the run is planned (not again inside a cluster job, nor for --unlock, --report, ...), every
# prerequisite of the planned rules: contact e-mails, API keys, local files (medfc.config.prerequisites), one
# line each, also on --dry-run
try:
    PLAN = plan_for(
        config,
        workflow.source_path(SCHEMA),
        prerequisites=not (workflow.remote_exec or workflow.subprocess_exec) and checked_here(sys.argv),
        base_dir=CHECKOUT,  # the shipped resources/ are read from there when the run's folder lacks them (workflow/Snakefile)
        command_line=workflow.config_settings.config,  # the --config values, typed by the schema
    )
except ConfigError as exc:
    stop(str(exc))

# a cluster profile submits every job with its partition and account: one still a placeholder stops the run here
if checked_here(sys.argv) and not (workflow.remote_exec or workflow.subprocess_exec):
    _settings = workflow.resource_settings
    if _placeholders := placeholder_settings(
        (_settings.default_resources.args or []) if _settings.default_resources else [],
        {rule: {k: v.raw for k, v in values.items()} for rule, values in _settings.overwrite_resources.items()},
    ):
        stop("\n".join(_placeholders))


# a job set to device: cuda on a machine whose torch sees none stops a local run before its first job (on a
# cluster the jobs check where they run: medfc.common.device)
onstart:
    if workflow.local_exec and (_cuda := cuda_problem(PLAN)):
        stop(_cuda)
    # the run's line in <results_dir>/provenance/runs.jsonl (its id, host, folder, command, software, config)
    provenance.append_run_record(
        PLAN.layout.provenance,
        provenance.run_record(os.environ[provenance.RUN_ENV], sys.argv, os.getcwd(), config, provenance.software()),
    )


# the run's id and where its provenance records are, for every job it starts (local or on a cluster, whose
# jobs inherit the environment and keep the id); the software record is the provenance rule's params, read
# when that job is planned (a cluster job of another rule never reads it)
os.environ.setdefault(provenance.RUN_ENV, provenance.new_run_id())
os.environ[provenance.RECORDS_ENV] = PLAN.layout.provenance

# the run's folder (results_dir): every output, log and benchmark below it (medfc.plan.layout)
RESULTS = PLAN.layout.results
LOGS = PLAN.layout.logs
EXP_DIR = PLAN.layout.experiments
TIMINGS = PLAN.layout.timings
BENCH_DIR = PLAN.layout.experiment_timings
TABLES_DIR = PLAN.layout.tables
FIGURES_DIR = PLAN.layout.figures
MEDSNIP_DIR = PLAN.layout.medsnip
STEP_SCRIPT = "../scripts/step.py"
CF_PAIRS = PLAN.experiments.clinifact_pairs_dir
# the pairs_* rules' {dataset}: CliniFact and each declared dataset
PAIR_DATASETS = PLAN.experiments.pair_dataset_pattern()


wildcard_constraints:
    lang="en|de",
    system="|".join(HFC_SYSTEMS),
    fold=r"\d+",
    model=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    table="|".join(TABLES),


# each rule's planned jobs' wildcards, from the plan once
PLANNED_WILDCARDS = PLAN.planned_wildcards()


@functools.cache
def _planned_outputs(name):
    """The output files of one rule's planned jobs (filled once: the plan and the rules are fixed once parsed)."""
    outputs = getattr(rules, name).output
    return [str(f) for w in PLANNED_WILDCARDS.get(name, []) for f in expand(outputs, **w)]


def planned(*chosen):
    """The output files of every planned job of the chosen rules, or of all the plan's rules when none is chosen (each
    one's outputs filled with its jobs' wildcards from the plan), in the rules' order; a host Snakefile's own rules
    (the workflow as a module) are not the plan's."""
    names = [r.rule.name for r in chosen] or [r.name for r in workflow.rules if r.name in PLANNED_WILDCARDS]
    if missing := sorted(set(PLANNED_WILDCARDS) - {r.name for r in workflow.rules}):
        # renamed where the workflow is a module imported with a prefix (docs/deployment.md)
        stop(f"the plan's rules {', '.join(missing[:3])}, ... are not this workflow's rules")
    return [f for name in names for f in _planned_outputs(name)]
