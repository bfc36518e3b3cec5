# Shared set-up: config validation, wildcard constraints, path helpers and the target list.

from pathlib import Path

from snakemake.utils import validate

from medfc.common.codeversion import versioned


validate(config, schema="../schemas/config.schema.yaml", set_default=True)


def check_config_combinations():
    """Settings the schema allows one by one but not together: stop at once, naming the keys."""
    if config["healthfc"]["dataset"]["mode"] == "release" and config["stages"].get("experiments", False):
        chosen = [s for s in ("pipeline", "joint") if s in config["experiments"]["healthfc"]["systems"]]
        if chosen:
            raise ValueError(
                "config: healthfc.dataset.mode is 'release', so the evidence-selection systems pipeline and joint "
                "would only have the gold sentences to choose from and their evidence scores would be meaningless; "
                f"experiments.healthfc.systems includes {' and '.join(chosen)}. Remove pipeline and joint from "
                "experiments.healthfc.systems (e.g. [oracle, claims_only, gold_explanations, level_of_evidence]) "
                "or use healthfc.dataset.mode crawl+release."
            )


check_config_combinations()


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


def healthfc_dataset_inputs(wildcards):
    """The dataset's inputs in the configured mode (crawl outputs and/or the release)."""
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
    if stage_enabled("experiments"):
        targets += experiment_targets()
    return targets


# ---------------------------------------------------------------------------------- experiments
# Helpers of experiments.smk / evaluation.smk / figures.smk (snakemake --lint wants functions here).

HFC_SYSTEMS = ["pipeline", "joint", "oracle", "claims_only", "gold_explanations", "level_of_evidence"]
HFC_EVIDENCE_SYSTEMS = ["pipeline", "joint"]
HFC_TABLE3_SYSTEMS = ["pipeline", "joint", "oracle"]
HFC_TABLE5_SYSTEMS = ["claims_only", "gold_explanations", "level_of_evidence"]
# The HealthFC options each system depends on (so changing e.g. the threshold reruns only pipeline/joint).
HFC_SYSTEM_OPTION_KEYS = {
    "pipeline": ["threshold", "max_evidence", "neg_ratio", "val_fraction", "evidence_train"],
    "joint": ["threshold", "max_evidence", "evidence_weight", "joint_pool", "val_fraction"],
    "oracle": ["val_fraction"],
    "claims_only": ["val_fraction"],
    "gold_explanations": ["val_fraction"],
    "level_of_evidence": ["loe_input", "val_fraction"],
}
EXP_DIR = "results/experiments"
TABLES_DIR = "results/tables"
FIGURES_DIR = "results/figures"


wildcard_constraints:
    lang="en|de",
    system="|".join(HFC_SYSTEMS),
    fold=r"\d+",
    model=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",


def model_name(alias):
    """A model alias (used in paths) → its hub name, local path or offline: name (resolved in the library)."""
    aliases = config["models"]["aliases"]
    if alias not in aliases:
        raise ValueError(f"config: model {alias!r} is not defined in models.aliases ({sorted(aliases)})")
    return aliases[alias]


def _merged(*dicts):
    out = {}
    for d in dicts:
        out.update({k: v for k, v in (d or {}).items()})
    return out


def healthfc_folds_run():
    folds = config["experiments"]["healthfc"]["folds"]
    n = config["healthfc"]["folds"]["n_splits"]
    folds = list(range(n)) if folds is None else [int(f) for f in folds]
    bad = [f for f in folds if not 0 <= f < n]
    if bad:
        raise ValueError(f"config: experiments.healthfc.folds {bad} outside 0..{n - 1} (healthfc.folds.n_splits)")
    return folds


def healthfc_runs(systems=None):
    """Every HealthFC experiment as {lang, model, system, fold}."""
    hx = config["experiments"]["healthfc"]
    runs = []
    for lang in hx["langs"]:
        for model in config["models"]["healthfc"][lang]:
            model_name(model)
            for system in hx["systems"]:
                if systems is not None and system not in systems:
                    continue
                for fold in healthfc_folds_run():
                    runs.append({"lang": lang, "model": model, "system": system, "fold": fold})
    return runs


def healthfc_run_dir(run):
    return f"{EXP_DIR}/healthfc/{run['lang']}/{run['model']}/{run['system']}/fold{run['fold']}"


def healthfc_train_config(model, system):
    """The training config of one HealthFC experiment: train < model_train[model] < system_train[system] < smoke."""
    hx = config["experiments"]["healthfc"]
    cfg = _merged(hx["train"], hx["model_train"].get(model), hx["system_train"].get(system), config["experiments"]["smoke"])
    cfg["model"] = model_name(model)
    return cfg


def healthfc_experiment_options(w):
    hx = config["experiments"]["healthfc"]
    opts = {k: hx[k] for k in HFC_SYSTEM_OPTION_KEYS[w.system]}
    if "evidence_train" in opts:
        opts["evidence_train"] = _merged(opts["evidence_train"], config["experiments"]["smoke"])
    return {
        "system": w.system,
        "lang": w.lang,
        "fold": int(w.fold),
        "train": healthfc_train_config(w.model, w.system),
        "options": opts,
        "checkpoint_dir": f"{config['experiments']['checkpoint_dir']}/healthfc/{w.lang}/{w.model}/{w.system}/fold{w.fold}",
    }


def clinifact_train_config(model):
    cx = config["experiments"]["clinifact"]
    cfg = _merged(cx["train"], cx["model_train"].get(model), config["experiments"]["smoke"])
    cfg["model"] = model_name(model)
    return cfg


def clinifact_experiment_options(w):
    cx = config["experiments"]["clinifact"]
    return {
        "train": clinifact_train_config(w.model),
        "include_title": cx["include_title"],
        "predict_splits": list(cx["predict_splits"]),
        "checkpoint_dir": f"{config['experiments']['checkpoint_dir']}/clinifact/{w.model}",
    }


def clinifact_zero_shot_options(w):
    zs = dict(config["experiments"]["clinifact"]["zero_shot"])
    zs["cache_dir"] = zs["cache_dir"] or f"{CACHE}/completions"
    zs["model"] = model_name(w.model)
    zs["splits"] = list(zs["splits"])
    return {"zero_shot": zs}


def clinifact_split_inputs(w):
    return {s: f"{CF_PAIRS}/{s}_set.csv" for s in ("train", "validation", "test")}


def clinifact_zero_shot_inputs(w):
    return {s: f"{CF_PAIRS}/{s}_set.csv" for s in config["experiments"]["clinifact"]["zero_shot"]["splits"]}


def scoring_options(kind, w):
    sc = config["scoring"]
    opts = {"kind": kind}
    if kind == "healthfc":
        opts.update({"system": w.system, "lang": w.lang, "abstain": sc["abstain"]})
        if w.system in HFC_EVIDENCE_SYSTEMS:
            opts.update({"lambdas": list(sc["lambdas"]), "reported_lambda": sc["reported_lambda"],
                         "max_pred_evidence": sc["max_pred_evidence"]})
    else:
        opts.update({"system": "zero_shot" if kind == "clinifact_zero_shot" else "discriminative", "kind": "clinifact"})
    return opts


def healthfc_table_inputs(systems, name="scores"):
    return [f"{healthfc_run_dir(r)}/{name}.{'json' if name == 'scores' else 'jsonl'}" for r in healthfc_runs(systems)]


def healthfc_table_entries(systems):
    return [dict(r, model_name=model_name(r["model"])) for r in healthfc_runs(systems)]


def healthfc_compared_systems():
    run = set(config["experiments"]["healthfc"]["systems"])
    pairs = [p for p in config["scoring"]["healthfc_comparisons"] if p[0] in run and p[1] in run]
    return pairs, sorted({s for p in pairs for s in p}, key=HFC_SYSTEMS.index)


def clinifact_runs():
    """Every CliniFact system as {model, system, dir}."""
    runs = [{"model": m, "system": "discriminative", "dir": f"{EXP_DIR}/clinifact/{m}"} for m in config["models"]["clinifact"]["discriminative"]]
    runs += [{"model": m, "system": "zero_shot", "dir": f"{EXP_DIR}/clinifact/zero_shot/{m}"} for m in config["models"]["clinifact"]["zero_shot"]]
    for r in runs:
        model_name(r["model"])
    return runs


def clinifact_table_entries():
    return [{"model": r["model"], "system": r["system"], "model_name": model_name(r["model"])} for r in clinifact_runs()]


def clinifact_fig3_inputs(w):
    inputs = {"predictions": [f"{r['dir']}/predictions.jsonl" for r in clinifact_runs()], "test": f"{CF_PAIRS}/test_set.csv"}
    if config["experiments"]["clinifact"]["disease_panel"]:
        inputs["studies"] = "results/clinifact/studies/studies.jsonl.gz"
    return inputs


def experiment_targets():
    targets = []
    hfc = healthfc_runs()
    for r in hfc:
        targets += [f"{healthfc_run_dir(r)}/predictions.jsonl", f"{healthfc_run_dir(r)}/scores.json"]
    systems = {r["system"] for r in hfc}
    if systems & set(HFC_TABLE3_SYSTEMS):
        targets.append(f"{TABLES_DIR}/healthfc_table3.csv")
    if systems & set(HFC_TABLE5_SYSTEMS):
        targets.append(f"{TABLES_DIR}/healthfc_table5.csv")
    if hfc and healthfc_compared_systems()[0]:
        targets.append(f"{TABLES_DIR}/healthfc_significance.csv")
    cf = clinifact_runs()
    for r in cf:
        targets += [f"{r['dir']}/predictions.jsonl", f"{r['dir']}/scores.json"]
    if cf:
        targets += [f"{TABLES_DIR}/clinifact_table8.csv", f"{FIGURES_DIR}/clinifact_fig3.png"]
    if len(cf) > 1:
        targets.append(f"{TABLES_DIR}/clinifact_significance.csv")
    return targets
