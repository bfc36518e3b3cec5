# Shared set-up: config validation, wildcard constraints, path helpers and the target list.

import re
from pathlib import Path

from snakemake.utils import validate

from medfc.common.codeversion import versioned
from medfc.experiments.aliases import model_aliases
from medfc.experiments.systems import EVIDENCE_SYSTEMS as HFC_EVIDENCE_SYSTEMS
from medfc.experiments.systems import SYSTEMS as HFC_SYSTEMS
from medfc.experiments.systems import TABLE3_SYSTEMS as HFC_TABLE3_SYSTEMS
from medfc.experiments.systems import TABLE5_SYSTEMS as HFC_TABLE5_SYSTEMS
from medfc.experiments.systems import system_option_keys


validate(config, schema="../schemas/config.schema.yaml", set_default=True)
config["models"]["aliases"] = model_aliases(config["models"]["aliases"])


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
    both = sorted(set(config["models"]["aliases"]) & set(config["models"]["ensembles"]))
    if both:
        raise ValueError(f"config: {both} are both models.aliases and models.ensembles: an ensemble needs a name of its own")
    for name, ens in config["models"]["ensembles"].items():
        unknown = [m for m in ens["members"] if m not in config["models"]["aliases"]]
        if unknown:
            raise ValueError(f"config: models.ensembles.{name}.members {unknown} are not in models.aliases")
    gbm = [m for lang in ("en", "de") for m in config["models"]["healthfc"][lang]
           if any(config["models"]["aliases"].get(x) == "sklearn:gbm" for x in config["models"]["ensembles"].get(m, {}).get("members", [m]))]
    if gbm:
        raise ValueError(f"config: models.healthfc uses {sorted(set(gbm))}, gradient boosting over CliniFact features (sklearn:gbm); "
                         "it reads CliniFact claims and abstracts only")
    smoke = {k: v for k, v in config["experiments"]["smoke"].items() if v is not None}
    if config["stages"].get("experiments", False) and smoke and config["experiments"]["scale"] != "smoke":
        raise ValueError(
            f"config: experiments.smoke caps training ({smoke}), so the tables' numbers are smoke-sized, but "
            f"experiments.scale is {config['experiments']['scale']!r}: set experiments.scale: smoke, or lift the caps "
            "(experiments.smoke: {max_steps: null, max_examples: null})."
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
    """The demo mirror's files (a live crawl has no input files). A configured mirror that is missing,
    empty or without its sitemap index stops the run: an old crawl is never reused in its place."""
    crawl = config["healthfc"]["crawl"]
    mirror = crawl["mirror_dir"]
    if mirror is None:
        return []
    root = Path(mirror)
    if not root.is_dir():
        raise ValueError(f"config: healthfc.crawl.mirror_dir {mirror!r} does not exist (or is not a directory); "
                         "set it to the mirror's directory, or to null to crawl the live site")
    index = root / crawl["sitemap_path"].lstrip("/")
    if not index.is_file():
        raise ValueError(f"config: healthfc.crawl.mirror_dir {mirror!r} has no sitemap index "
                         f"{crawl['sitemap_path']} (healthfc.crawl.sitemap_path): not a mirror of the site")
    return files_under(mirror)


def healthfc_mode():
    return config["healthfc"]["dataset"]["mode"]


def healthfc_release_inputs(wildcards):
    """A local release file is an input (editing it reruns); a URL is downloaded into the cache."""
    src = config["healthfc"]["release"]["source"]
    if not src:
        raise ValueError("config: healthfc.release.source must be set when healthfc.dataset.mode uses the release")
    return {} if src.startswith(("http://", "https://")) else {"release": src}


def clinifact_diff_inputs(wildcards):
    """A local release's three files are inputs (editing one reruns the diff); a URL is downloaded into the cache."""
    src = config["clinifact"]["diff"]["release"]
    if not src:
        raise ValueError("config: clinifact.diff.release must be set for the rule clinifact_diff")
    files = release_split_files(src)
    return {"release_files": list(files.values())} if files else {}


def clinifact_diff_enabled():
    cf = config["clinifact"]
    return cf["pairs_source"] == "rebuild" and bool(cf["diff"]["release"])


def translation_inputs(wildcards):
    """Shipped memory files and the corrections file are inputs, so editing them reruns the translation."""
    tr = config["healthfc"]["translation"]
    inputs = {"memory_seeds": list(tr["memory_seeds"])}
    if tr["corrections"]:
        inputs["corrections"] = tr["corrections"]
    return inputs


def release_split_files(src):
    """A local CliniFact release directory → its three CSVs by split; a URL (downloaded into the cache) → {}."""
    if src.startswith(("http://", "https://")):
        return {}
    return {split: f"{src.rstrip('/')}/{split}_set.csv" for split in ("train", "validation", "test")}


def clinifact_release_inputs(wildcards):
    """A local release directory's three CSVs are inputs (editing one reruns the import)."""
    return release_split_files(config["clinifact"]["release"]["source"])


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
        if healthfc_mode() == "crawl+release":
            targets.append("results/healthfc/diff/diff.md")
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
        if clinifact_diff_enabled():
            targets.append("results/clinifact/diff/diff.md")
    if stage_enabled("experiments"):
        targets += experiment_targets()
    targets += medsnip_targets()
    return targets


# ---------------------------------------------------------------------------------- experiments
# Helpers of experiments.smk, scoring.smk, tables.smk and figures.smk (snakemake --lint wants functions
# here). The HealthFC systems and the option keys each depends on come from the library.

EXP_DIR = "results/experiments"
TABLES_DIR = "results/tables"
FIGURES_DIR = "results/figures"
PAPERS = "resources/papers/numbers.yaml"
HFC_TABLES = {"healthfc_table3": HFC_TABLE3_SYSTEMS, "healthfc_table5": HFC_TABLE5_SYSTEMS}


wildcard_constraints:
    lang="en|de",
    system="|".join(HFC_SYSTEMS),
    fold=r"\d+",
    model=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    table="healthfc_table3|healthfc_table5|healthfc_significance|clinifact_table8|clinifact_significance",


def is_ensemble(name):
    return name in config["models"]["ensembles"]


def ensemble_members(name):
    return list(config["models"]["ensembles"][name]["members"])


def ensemble_weights(name):
    weights = config["models"]["ensembles"][name]["weights"]
    members = ensemble_members(name)
    if weights is not None and len(weights) != len(members):
        raise ValueError(f"config: models.ensembles.{name}.weights has {len(weights)} values for {len(members)} members")
    return list(weights) if weights is not None else [1.0] * len(members)


def ensemble_options(w):
    """An ensemble job's options: its members (the order of its prediction inputs) and their weights."""
    return {"members": ensemble_members(w.model), "weights": ensemble_weights(w.model)}


def model_name(alias):
    """A model alias (used in paths) → its hub name, local path, offline: or sklearn: name (resolved in
    the library); an ensemble → ensemble:<members>."""
    if is_ensemble(alias):
        return "ensemble:" + "+".join(model_name(m) for m in ensemble_members(alias))
    aliases = config["models"]["aliases"]
    if alias not in aliases:
        raise ValueError(f"config: model {alias!r} is not defined in models.aliases ({sorted(aliases)}) nor models.ensembles")
    return aliases[alias]


def is_sklearn(alias):
    """Whether a model (or any member of an ensemble) is a scikit-learn baseline (sklearn:tfidf, sklearn:gbm)."""
    if is_ensemble(alias):
        return any(is_sklearn(m) for m in ensemble_members(alias))
    return model_name(alias).startswith("sklearn:")


def model_alias_pattern(ensembles):
    """A wildcard regex matching exactly the model aliases (ensembles=False) or the ensemble names."""
    names = sorted(config["models"]["ensembles"] if ensembles else config["models"]["aliases"])
    return "|".join(re.escape(n) for n in names) or "(?!)"


def layered(*layers):
    """Config sections merged left to right (later layers override earlier keys)."""
    out = {}
    for layer in layers:
        out.update(layer or {})
    return out


def checkpoint_dir(sub):
    """Where a run keeps its checkpoints; None (kept in memory, nothing written) unless keep_checkpoints."""
    ex = config["experiments"]
    return f"{ex['checkpoint_dir']}/{sub}" if ex["keep_checkpoints"] else None


def model_config(alias, *train_layers):
    """An encoder's training config (the layers merged) or a scikit-learn baseline's section
    (experiments.tfidf, experiments.gbm)."""
    name = model_name(alias)
    if name.startswith("sklearn:"):
        kind = name.split(":", 1)[1]
        if kind not in ("tfidf", "gbm"):
            raise ValueError(f"config: model {alias!r} is {name!r}; the scikit-learn baselines are sklearn:tfidf and sklearn:gbm")
        return {**config["experiments"][kind], "model": name}
    return layered(*train_layers, {"model": name})


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
                if system == "joint" and is_sklearn(model):  # the joint system needs an encoder
                    continue
                for fold in healthfc_folds_run():
                    runs.append({"lang": lang, "model": model, "system": system, "fold": fold})
    return runs


def healthfc_run_dir(run):
    return f"{EXP_DIR}/healthfc/{run['lang']}/{run['model']}/{run['system']}/fold{run['fold']}"


def healthfc_experiment_options(w):
    """One HealthFC run's options: the training config (train < model_train[model] < system_train[system]
    < smoke) and just the system options this system depends on."""
    hx = config["experiments"]["healthfc"]
    smoke = config["experiments"]["smoke"]
    system_options = {k: hx[k] for k in system_option_keys(w.system)}
    if "evidence_train" in system_options:
        system_options["evidence_train"] = layered(system_options["evidence_train"], smoke)
    return {
        "system": w.system,
        "lang": w.lang,
        "fold": int(w.fold),
        "train": model_config(w.model, hx["train"], hx["model_train"].get(w.model), hx["system_train"].get(w.system), smoke),
        "system_options": system_options,
        "checkpoint_dir": checkpoint_dir(f"healthfc/{w.lang}/{w.model}/{w.system}/fold{w.fold}"),
    }


def clinifact_experiment_options(w):
    cx = config["experiments"]["clinifact"]
    return {
        "train": model_config(w.model, cx["train"], cx["model_train"].get(w.model), config["experiments"]["smoke"]),
        "include_title": cx["include_title"],
        "predict_splits": cx["predict_splits"],
        "checkpoint_dir": checkpoint_dir(f"clinifact/{w.model}"),
    }


def clinifact_zero_shot_options(w):
    zs = config["experiments"]["clinifact"]["zero_shot"]
    return {**zs, "model": model_name(w.model), "cache_dir": zs["cache_dir"] or f"{CACHE}/completions"}


def clinifact_split_inputs(w):
    return {s: f"{CF_PAIRS}/{s}_set.csv" for s in ("train", "validation", "test")}


def clinifact_zero_shot_inputs(w):
    return {s: f"{CF_PAIRS}/{s}_set.csv" for s in config["experiments"]["clinifact"]["zero_shot"]["splits"]}


def healthfc_score_options(w):
    """The scoring keys a run's scores depend on (the evidence keys only for the evidence-selecting systems)."""
    sc = config["scoring"]
    evidence = {k: sc[k] for k in ("lambdas", "reported_lambda", "max_pred_evidence")} if w.system in HFC_EVIDENCE_SYSTEMS else None
    return {"system": w.system, "lang": w.lang, "abstain": sc["abstain"], "evidence": evidence}


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
    return [{"model": r["model"], "system": r["system"]} for r in clinifact_runs()]


def table_runs(table):
    """(input name, the runs' files, the runs' entries) of one table."""
    if table in HFC_TABLES or table == "healthfc_significance":
        systems = HFC_TABLES[table] if table in HFC_TABLES else healthfc_compared_systems()[1]
        name, file = ("scores", "scores.json") if table in HFC_TABLES else ("predictions", "predictions.jsonl")
        runs = healthfc_runs(systems)
        return name, [f"{healthfc_run_dir(r)}/{file}" for r in runs], runs
    name, file = ("scores", "scores.json") if table == "clinifact_table8" else ("predictions", "predictions.jsonl")
    return name, [f"{r['dir']}/{file}" for r in clinifact_runs()], clinifact_table_entries()


def table_inputs(w):
    name, files, _ = table_runs(w.table)
    return {name: files, **({"papers": PAPERS} if name == "scores" else {})}


def table_options(w):
    options = {"entries": table_runs(w.table)[2], "scale": config["experiments"]["scale"]}
    if w.table == "healthfc_significance":
        sc = config["scoring"]
        options.update(comparisons=healthfc_compared_systems()[0], abstain=sc["abstain"], **sc["bootstrap"])
    return options


def clinifact_score_options(system):
    """The CliniFact scoring options: the system and the bootstrap behind its intervals."""
    bs = config["scoring"]["bootstrap"]
    return {"system": system, "n_resamples": bs["n_resamples"], "seed": bs["seed"]}


def clinifact_fig3_inputs(w):
    inputs = {"predictions": [f"{r['dir']}/predictions.jsonl" for r in clinifact_runs()], "test": f"{CF_PAIRS}/test_set.csv",
              "papers": PAPERS}
    if config["experiments"]["clinifact"]["disease_panel"]:
        inputs["studies"] = "results/clinifact/studies/studies.jsonl.gz"
    return inputs


def experiment_targets():
    targets = []
    hfc = healthfc_runs()
    for r in hfc:
        targets += [f"{healthfc_run_dir(r)}/predictions.jsonl", f"{healthfc_run_dir(r)}/scores.json"]
    systems = {r["system"] for r in hfc}
    targets += [f"{TABLES_DIR}/{t}.csv" for t, table_systems in HFC_TABLES.items() if systems & set(table_systems)]
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


# -------------------------------------------------------------------------------------- medsnip
# Helpers of medsnip.smk (docs/medsnip.md): each rule's options from the `medsnip` config section, the
# prompt hashes each rule reads (so a prompt edit reruns exactly those rules), and the config checks.

from medfc.llm.prompts import prompt_hashes
from medfc.medsnip.decompose import prompt_names as medsnip_decompose_prompts
from medfc.medsnip.options import LLM_MODES as MEDSNIP_LLM_MODES
from medfc.medsnip.options import MODES as MEDSNIP_MODES
from medfc.medsnip.options import LLMOptions as MedsnipLLM
from medfc.medsnip.options import RetrievalOptions as MedsnipRetrieval
from medfc.medsnip.verify import prompt_names as medsnip_verify_prompts

MEDSNIP_DIR = "results/medsnip"
MEDSNIP_TITLES = {"healthfc": "HealthFC", "bench": "MedSNIP-Bench"}
MEDSNIP_STATEMENT_PROMPTS = ["medsnip/healthfc_statement", "llm/json_repair"]
MEDSNIP_WILDCARDS = {"dataset": "|".join(MEDSNIP_TITLES), "mode": "|".join(MEDSNIP_MODES), "verifier": r"[A-Za-z0-9][A-Za-z0-9_.+-]*"}


def medsnip_cache(value, sub):
    """A cache directory of the stage: null → <cache_dir>/<sub>; "" (off) and paths as they are."""
    return f"{CACHE}/{sub}" if value is None else value


def medsnip_datasets():
    return [d for d in MEDSNIP_TITLES if config["medsnip"]["datasets"][d]["enabled"]]


def medsnip_modes(dataset):
    """The decompositions of a dataset: the configured ones, plus the bench's own units."""
    ms = config["medsnip"]
    human = ["human_atoms", "human_snippets"] if dataset == "bench" and ms["datasets"]["bench"]["human_units"] else []
    return list(ms["modes"]) + human


def medsnip_verifier(name):
    for v in config["medsnip"]["verifiers"]:
        if v["name"] == name:
            return v
    raise ValueError(f"config: no verifier {name!r} in medsnip.verifiers")


def medsnip_llm(overrides):
    """medsnip.llm with a role's overrides, its HTTP cache resolved."""
    llm = layered(config["medsnip"]["llm"], overrides)
    llm["http_cache_dir"] = medsnip_cache(llm["http_cache_dir"], "medsnip/http")
    return llm


def medsnip_common():
    ms = config["medsnip"]
    return {"prompt_dir": ms["prompt_dir"], "unit_cache_dir": medsnip_cache(ms["unit_cache_dir"], "medsnip/units")}


def medsnip_rewrites(dataset):
    return dataset == "healthfc" and config["medsnip"]["datasets"]["healthfc"]["rewrite_claims"]


def medsnip_source(w):
    """What a dataset's answers are read from: the HealthFC dataset (built as needed) or a bench file."""
    if w.dataset == "healthfc":
        return rules.healthfc_dataset.output.jsonl
    return config["medsnip"]["datasets"]["bench"]["path"]


def medsnip_prepare_options(w):
    ds = config["medsnip"]["datasets"][w.dataset]
    rewrite = medsnip_rewrites(w.dataset)
    return {"source": w.dataset, "splits": ds.get("splits", []), "rewrite_claims": rewrite, "limit": ds["limit"],
            "llm": medsnip_llm(config["medsnip"]["rewriter"]) if rewrite else None, **medsnip_common()}


def medsnip_decompose_options(w):
    ms = config["medsnip"]
    return {"mode": w.mode, "atoms_from": ms["atoms_from"] if (w.dataset, w.mode) == ("bench", "group") else "extract",
            "fallback_whole_text": ms["fallback_whole_text"],
            "llm": medsnip_llm(ms["decomposer"]) if w.mode in MEDSNIP_LLM_MODES else None, **medsnip_common()}


def medsnip_retrieval():
    r = config["medsnip"]["retrieval"]
    return {**r, "search_cache_dir": medsnip_cache(r["search_cache_dir"], "medsnip/search"),
            "pubmed": {**r["pubmed"], "cache_dir": medsnip_cache(r["pubmed"]["cache_dir"], "clinifact/pubmed")},
            "web": {**r["web"], "http_cache_dir": medsnip_cache(r["web"]["http_cache_dir"], "medsnip/web")}}


def medsnip_verify_options(w):
    v = medsnip_verifier(w.verifier)
    return {"verifier": v["kind"], "name": v["name"], "unparsed": v["unparsed"], "llm": medsnip_llm(v["llm"]),
            "retrieval": medsnip_retrieval() if v["kind"] == "retrieval" else None, **medsnip_common()}


def medsnip_baseline(dataset):
    return config["medsnip"]["datasets"]["bench"]["baseline_mode"] if dataset == "bench" else "atoms"


def medsnip_score_options(w):
    level = config["medsnip"]["datasets"]["bench"]["level"] if w.dataset == "bench" else "answer"
    return {"level": level, "baseline_mode": medsnip_baseline(w.dataset), **config["medsnip"]["score"]}


def medsnip_prompts(names):
    """{prompt name: sha256 of its file}: in a rule's params, so editing a prompt reruns its rules."""
    return prompt_hashes(names, config["medsnip"]["prompt_dir"])


def medsnip_prepare_prompts(w):
    return medsnip_prompts(MEDSNIP_STATEMENT_PROMPTS if medsnip_rewrites(w.dataset) else [])


def medsnip_decompose_prompts_of(w):
    return medsnip_prompts(medsnip_decompose_prompts(w.mode))


def medsnip_verify_prompts_of(w):
    return medsnip_prompts(medsnip_verify_prompts(medsnip_verifier(w.verifier)["kind"]))


def medsnip_verify_inputs(w):
    """A verifier's inputs: the units and answers, and a local BM25 index's passages (editing them reruns it)."""
    inputs = {"units": f"{MEDSNIP_DIR}/{w.dataset}/units/{w.mode}.jsonl", "answers": f"{MEDSNIP_DIR}/{w.dataset}/answers.jsonl"}
    r = config["medsnip"]["retrieval"]
    if medsnip_verifier(w.verifier)["kind"] == "retrieval" and "bm25" in r["sources"]:
        inputs["passages"] = r["bm25"]["passages"]
    return inputs


def medsnip_verdicts(dataset, suffix):
    return [f"{MEDSNIP_DIR}/{dataset}/verdicts/{v['name']}/{m}{suffix}" for v in config["medsnip"]["verifiers"]
            for m in medsnip_modes(dataset)]


def medsnip_score_inputs(w):
    return {"answers": f"{MEDSNIP_DIR}/{w.dataset}/answers.jsonl", "verdicts": medsnip_verdicts(w.dataset, ".jsonl"),
            "verifications": medsnip_verdicts(w.dataset, ".info.json"),
            "decompositions": [f"{MEDSNIP_DIR}/{w.dataset}/units/{m}.info.json" for m in medsnip_modes(w.dataset)]}


def medsnip_local(options):
    llm = options.get("llm")
    return llm is not None and llm["backend"] == "transformers"


def medsnip_threads(options):
    return config["medsnip"]["threads"] if medsnip_local(options) else 1


def medsnip_gpu(options):
    """A job running a local transformers model asks for the configured GPUs; a server job for none."""
    return config["medsnip"]["gpu"] if medsnip_local(options) else 0


def medsnip_mem_mb(options):
    return config["medsnip"]["mem_mb"] if medsnip_local(options) else 2048


def check_medsnip_config():
    """What the schema cannot say about the medsnip section, checked before any job runs, naming the key."""
    ms = config["medsnip"]
    datasets = medsnip_datasets()
    if not datasets:
        raise ValueError("config: stages.medsnip is on but neither medsnip.datasets.healthfc.enabled nor medsnip.datasets.bench.enabled is true")
    bench = ms["datasets"]["bench"]
    if "bench" in datasets:
        if not Path(bench["path"]).is_file():
            raise ValueError(f"config: medsnip.datasets.bench.path {bench['path']!r} is not a file")
        if bench["baseline_mode"] == "human_atoms" and not bench["human_units"]:
            raise ValueError("config: medsnip.datasets.bench.baseline_mode is human_atoms but medsnip.datasets.bench.human_units is false")
    names = [v["name"] for v in ms["verifiers"]]
    if len(set(names)) < len(names):
        raise ValueError(f"config: medsnip.verifiers has repeated names {sorted(n for n in set(names) if names.count(n) > 1)}")
    roles = [("medsnip.decomposer", ms["decomposer"])]
    if medsnip_rewrites("healthfc") and "healthfc" in datasets:
        roles.append(("medsnip.rewriter", ms["rewriter"]))
    roles += [(f"medsnip.verifiers[{i}].llm", v["llm"]) for i, v in enumerate(ms["verifiers"])]
    checks = [(MedsnipLLM, medsnip_llm(overrides), where) for where, overrides in roles]
    if any(v["kind"] == "retrieval" for v in ms["verifiers"]):
        checks.append((MedsnipRetrieval, medsnip_retrieval(), "medsnip.retrieval"))
    for cls, options, where in checks:
        try:
            cls.from_mapping(options, where)  # its cross-field checks included
        except ValueError as exc:
            note = f" (the LLM of {where} is medsnip.llm updated with the keys {where} sets)" if cls is MedsnipLLM else ""
            raise ValueError(f"config: {exc}{note}") from None


def medsnip_targets():
    if not stage_enabled("medsnip"):
        return []
    check_medsnip_config()
    return [f"{MEDSNIP_DIR}/{d}/table.csv" for d in medsnip_datasets()]
