# medfc: evidence-based medical fact-checking, rebuilt from the real sources.
#
#   snakemake --cores all                      # the embedded demo (config/config.yaml)
#   snakemake --cores all --configfile config/live.yaml
#   snakemake --profile profiles/slurm --configfile config/live.yaml
#
# This file only sets up: config + validation, includes, and the final targets.

import os
import sys

from snakemake.utils import min_version

from medfc.plan.config_errors import config_file_error

min_version("9.0")

# the run directory's own config/config.yaml, else the workflow's (snakemake --directory RUN elsewhere)
DEFAULT_CONFIG = "config/config.yaml"
if not os.path.exists(DEFAULT_CONFIG):
    DEFAULT_CONFIG = os.path.join(workflow.basedir, "config", "config.yaml")

# a YAML mistake in the workflow's own config file: its file, line and column, exit status 1 (Snakemake's
# message names neither; the --configfile files it reads itself, before this file runs)
if _yaml_mistake := config_file_error(DEFAULT_CONFIG):
    sys.exit(_yaml_mistake)


configfile: DEFAULT_CONFIG


include: "workflow/rules/common.smk"
include: "workflow/rules/healthfc.smk"
include: "workflow/rules/clinifact.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/medsnip.smk"


# on a cluster only training, translation with a local model and local LLM inference are jobs; the rest
# (scoring, tables, figures, datasets, fetching) runs here (medfc.plan.cluster, docs/slurm.md)
workflow.localrules(*PLAN.local_rules())


rule all:
    input:
        PLAN.targets(),
    default_target: True
