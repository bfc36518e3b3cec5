# Shared set-up: config validation, wildcard constraints, path helpers and the target list.

from pathlib import Path

from snakemake.utils import validate


validate(config, schema="../schemas/config.schema.yaml", set_default=True)


CACHE = config["cache_dir"]
STEP_SCRIPT = "../scripts/step.py"


def stage_enabled(name):
    return bool(config["stages"].get(name, False))


def files_under(directory):
    """Every file below a directory (as inputs, so editing any of them reruns the rule)."""
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"config: directory {directory!r} does not exist")
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


def crawl_inputs(wildcards):
    """The demo mirror's files (a live crawl has no input files)."""
    mirror = config["healthfc"]["crawl"]["mirror_dir"]
    return files_under(mirror) if mirror else []


def all_targets():
    targets = []
    if stage_enabled("healthfc"):
        targets += [
            "results/healthfc/parsed/articles.jsonl",
            "results/healthfc/parsed/claims.jsonl",
            "results/healthfc/parsed/report.json",
        ]
    if stage_enabled("clinifact"):
        stats = "results/clinifact/stats"
        targets += [
            f"{stats}/table6_labels.csv",
            f"{stats}/table4_words.csv",
            f"{stats}/fig2_disease_classes.png",
            f"{stats}/figS1_years.png",
        ]
        if config["clinifact"]["pairs_source"] == "rebuild":
            targets.append("results/clinifact/pairs/dataset_card.md")
    return targets
