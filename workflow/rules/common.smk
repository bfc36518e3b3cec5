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


def healthfc_mode():
    return config["healthfc"]["dataset"]["mode"]


def healthfc_release_inputs(wildcards):
    """A local release file is an input (editing it reruns); a URL is downloaded into the cache."""
    src = config["healthfc"]["release"]["source"]
    if not src:
        raise ValueError("config: healthfc.release.source must be set when healthfc.dataset.mode uses the release")
    return {} if src.startswith(("http://", "https://")) else {"release": src}


def translation_inputs(wildcards):
    """Shipped memory files and the corrections file are inputs, so editing them reruns the translation."""
    tr = config["healthfc"]["translation"]
    inputs = {"memory_seeds": list(tr["memory_seeds"])}
    if tr["corrections"]:
        inputs["corrections"] = tr["corrections"]
    return inputs


def translation_options():
    """Only the settings the English side depends on; the working memory lives in the cache."""
    tr = config["healthfc"]["translation"]
    return {
        "backend": tr["backend"],
        "model": tr["model"],
        "model_name": tr["model_name"] or tr["model"],
        "device": tr["device"],
        "batch_size": tr["batch_size"],
        "max_length": tr["max_length"],
        "num_beams": tr["num_beams"],
        "memory": f"{CACHE}/healthfc/translation_memory.jsonl",
        "memory_seeds": list(tr["memory_seeds"]),
        "corrections": tr["corrections"],
        "seeds": list(tr["memory_seeds"]),
        "splitter": config["healthfc"]["sentences"]["base"],
    }


def healthfc_dataset_inputs(wildcards):
    mode = healthfc_mode()
    inputs = {}
    if mode in ("crawl+release", "crawl"):
        inputs["claims"] = rules.healthfc_parse.output.claims
        inputs["articles"] = rules.healthfc_parse.output.articles
        inputs["sentences"] = rules.healthfc_translate.output.sentences
        inputs["claims_en"] = rules.healthfc_translate.output.claims_en
    if mode in ("crawl+release", "release"):
        inputs["rows"] = rules.healthfc_release.output.rows
    if mode == "crawl+release":
        inputs["alignment"] = rules.healthfc_align.output.alignment
        inputs["align_report"] = rules.healthfc_align.output.report
    return inputs


def all_targets():
    targets = []
    if stage_enabled("healthfc"):
        if healthfc_mode() != "release":
            targets += [
                "results/healthfc/parsed/report.json",
                "results/healthfc/translated/report.json",
            ]
        targets += [
            "results/healthfc/dataset/dataset_card.md",
            "results/healthfc/folds/folds.csv",
            "results/healthfc/stats/table2.csv",
            "results/healthfc/stats/fig1_claims_per_year.png",
            "results/healthfc/stats/fig2_top_topics.png",
            "results/healthfc/stats/fig3_level_by_verdict.png",
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
