"""Every config mistake, whichever layer finds it — the schema, the plan's checks, a model alias that names no
model, fold 12 of 5, an error while the plan builds a job's options — is one line naming the key. Checked
in-process through the workflow's own entry point, ``medfc.config.validate.plan_for``, on the config
Snakemake builds from the same files and ``--config`` values (``merged_config``);
tests/workflow/test_config_errors.py runs snakemake once to show that it prints that line and exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from medfc.config.validate import ConfigError, config_file_error, merged_config, plan_for
from tests.helpers.workflow import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(autouse=True)
def _in_the_workflow(monkeypatch):
    """Paths in the configs are relative to the workflow's directory, as for snakemake."""
    monkeypatch.chdir(REPO)


def plan(*files: str | Path, **overrides):
    """The plan of config/config.yaml, then ``files`` (``--configfile``), then ``overrides`` (``--config``)."""
    return plan_for(merged_config([REPO / "config" / "config.yaml", *files], overrides), SCHEMA)


def mistake(*files: str | Path, **overrides) -> str:
    """The one line the workflow prints for this config (and stops with exit status 1)."""
    with pytest.raises(ConfigError) as exc:
        plan(*files, **overrides)
    message = str(exc.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------- unknown and misspelt keys

def test_an_unknown_top_level_key():
    out = mistake(bogus=1)
    assert "config: bogus: unknown key (allowed: cache_dir, results_dir, stages, cluster, healthfc, clinifact, datasets, models, experiments, scoring, medsnip)" in out


def test_a_misspelt_training_key_names_the_closest(tmp_path):
    out = mistake(write(tmp_path, "experiments:\n  healthfc:\n    train: {lrr: 1.0e-5}\n"))
    assert "config: experiments.healthfc.train.lrr: unknown key; did you mean lr? (allowed: lr, warmup_ratio," in out


def test_a_mistake_across_keys_is_one_message_too(tmp_path):
    out = mistake(write(tmp_path, "models:\n  ensembles:\n    pair: {members: [tfidf, nope]}\n"))
    assert "config: models.ensembles.pair.members ['nope'] are not in models.aliases" in out


# -------------------------------------------------------------------------------------- the crawl's mirror

@pytest.mark.parametrize("mirror", ["nowhere", "empty"])
def test_a_missing_mirror_dir_stops_the_run_even_with_an_old_crawl(mirror, tmp_path):
    """The plan stops before Snakemake looks at any output, so an earlier crawl's results are never reused."""
    where = str(tmp_path / "empty") if mirror == "empty" else mirror
    (tmp_path / "empty").mkdir()
    out = mistake("config/test.yaml", healthfc={"crawl": {"mirror_dir": where}})
    assert f"healthfc.crawl.mirror_dir {where!r}" in out


def test_a_mirror_dir_and_a_mirror_url_together_stop_the_run():
    out = mistake("config/test.yaml", healthfc={"crawl": {"mirror_dir": "resources/demo/site",
                                                          "mirror_url": "http://127.0.0.1:9"}})
    assert "healthfc.crawl.mirror_dir and healthfc.crawl.mirror_url are both set; set one" in out


# --------------------------------------------------------------- stages, ensembles, dataset modes, MedSNIP

def test_bad_config_stops_at_once_naming_the_key():
    assert "healthfcc" in mistake("config/test.yaml", stages={"healthfcc": True})


def test_an_unknown_ensemble_member_is_named(tmp_path):
    out = mistake("config/test_experiments.yaml", write(tmp_path, "models:\n  ensembles: {odd: {members: [tfidf, nosuch]}}\n"))
    assert "models.ensembles.odd.members ['nosuch']" in out


def test_release_mode_with_pipeline_or_joint_stops_at_config_validation(tmp_path):
    release = tmp_path / "release.yaml"
    release.write_text("healthfc:\n  dataset:\n    mode: release\n", encoding="utf-8")
    out = mistake("config/test_experiments.yaml", release, stages={"experiments": True})
    assert "healthfc.dataset.mode" in out and "pipeline and joint" in out and "experiments.healthfc.systems" in out
    fixed = plan("config/test_experiments.yaml", release, stages={"experiments": True},
                 experiments={"healthfc": {"systems": ["oracle", "claims_only", "gold_explanations", "level_of_evidence"]}})
    assert "parse" not in fixed.datasets.healthfc_dataset_sources()  # no crawl, no translation


@pytest.mark.parametrize(("section", "keys"), [
    ("verifiers: [{name: x, kind: claimonly}]", ["claimonly", "kind"]),
    ("llm: {modle: served-llm}", ["modle"]),
    ("llm: {model: ''}", ["medsnip.llm.model is empty"]),
    ("datasets: {bench: {human_units: false}}", ["medsnip.datasets.bench.baseline_mode", "medsnip.datasets.bench.human_units"]),
    ("verifiers: [{name: r, kind: retrieval}]\n  retrieval: {sources: [bm25]}", ["medsnip.retrieval.bm25.passages: empty"]),
])
def test_a_bad_medsnip_config_stops_at_validation_naming_the_key(section, keys, tmp_path):
    server = tmp_path / "server.yaml"
    server.write_text("medsnip:\n  llm:\n    base_url: http://127.0.0.1:9/v1\n", encoding="utf-8")
    out = mistake("config/test_medsnip.yaml", server, write(tmp_path, f"medsnip:\n  {section}\n"))
    assert all(k in out for k in keys), out


# ---------------------------------------------------------- folds, model aliases, a job's options

def test_a_fold_outside_the_folds_and_an_alias_that_names_no_model_are_one_line():
    assert mistake("config/test_experiments.yaml", experiments={"healthfc": {"folds": [12]}}) == \
        "config: experiments.healthfc.folds [12] outside 0..4 (healthfc.folds.n_splits)"
    out = mistake("config/test_experiments.yaml", models={"healthfc": {"en": ["minilmm"]}})
    assert out.startswith("config: models.healthfc.en: 'minilmm' names no model; did you mean minilm? (models.aliases: ")
    out = mistake("config/test_experiments.yaml", models={"clinifact": {"zero_shot": ["gpt9"]}})
    assert out.startswith("config: models.clinifact.zero_shot: 'gpt9' names no model (models.aliases: ")


def test_errors_while_the_plan_builds_a_jobs_options_are_one_line(tmp_path):
    # an override of one model's fine-tuning section with a key fine_tune does not have: found only when the
    # fine-tuning job's options are built
    out = mistake("config/test_experiments.yaml", write(tmp_path, (
        "models:\n  aliases: {llm: org/llm}\n  clinifact: {fine_tuned: [llm]}\n"
        "experiments:\n  clinifact:\n    model_fine_tune: {llm: {lora_rank: 8}}\n")))
    assert out.startswith("config: experiments.clinifact.model_fine_tune.llm.lora_rank is not a key of experiments.clinifact.fine_tune")
    out = mistake("config/test_experiments.yaml", write(tmp_path, "models:\n  ensembles: {pair: {members: [tiny, tfidf], weights: [1.0]}}\n"
                                                                  "  healthfc: {en: [pair]}\n"))
    assert out == "config: models.ensembles.pair.weights has 1 values for 2 members"


EMPTY_REFUSED = ["experiments.healthfc.systems", "experiments.healthfc.folds", "experiments.clinifact.predict_splits",
                 "experiments.clinifact.zero_shot.splits", "experiments.clinifact.fine_tune.predict_splits", "scoring.lambdas",
                 "models.ensembles.pair.members", "medsnip.modes", "medsnip.verifiers", "experiments.gbm.seeds"]


def _nested(dotted: str, value) -> dict:
    *parents, last = dotted.split(".")
    out: dict = {last: value}
    for key in reversed(parents):
        out = {key: out}
    return out


@pytest.mark.parametrize("key", EMPTY_REFUSED)
def test_an_empty_list_where_empty_makes_no_sense_is_refused_by_the_schema(key, tmp_path):
    """An empty list where a run needs at least one entry is a config error: ``experiments.healthfc.systems: []``
    would otherwise plan no HealthFC experiment without a word."""
    config = _nested(key, [])
    if key.startswith("models.ensembles"):
        config["models"]["ensembles"]["pair"]["weights"] = None
    out = mistake("config/test_experiments.yaml", write(tmp_path, yaml.safe_dump(config)))
    assert out == f"config: {key}: [] has 0 items; at least {2 if key.endswith('members') else 1} needed"


def test_empty_lists_that_mean_none_stay_allowed_and_an_empty_model_list_of_a_run_language_is_refused():
    base = plan("config/test_experiments.yaml")
    assert base.experiments.clinifact_runs() and base.healthfc.healthfc_runs()
    # the defaults: no zero-shot and no fine-tuned CliniFact models, no German models, no extra URLs
    assert plan().config["models"]["clinifact"]["fine_tuned"] == [] and plan().config["models"]["healthfc"]["de"] == []
    no_hfc = plan("config/test_experiments.yaml", experiments={"healthfc": {"langs": []}})  # explicitly none
    assert no_hfc.healthfc.healthfc_runs() == [] and no_hfc.experiments.clinifact_runs()
    no_cf = plan("config/test_experiments.yaml", models={"clinifact": {"discriminative": []}})
    assert no_cf.experiments.clinifact_runs() == [] and no_cf.healthfc.healthfc_runs()
    out = mistake("config/test_experiments.yaml", models={"healthfc": {"en": []}})
    assert out.startswith("config: models.healthfc.en is empty but experiments.healthfc.langs includes en, so its HealthFC experiments "
                          "would silently vanish")
    assert "de" in mistake("config/test_experiments.yaml", experiments={"healthfc": {"langs": ["en", "de"]}})


@pytest.mark.parametrize("configs", [[], ["test.yaml"], ["test_experiments.yaml"], ["test_medsnip.yaml"], ["cpu.yaml"],
                                     ["live.yaml"], ["live.yaml", "paper.yaml"], ["test_slurm_paper.yaml"]])
def test_every_shipped_config_plans_without_a_mistake(configs):
    assert plan(*[f"config/{c}" for c in configs]).planned_jobs()


# ------------------------------------------------------------------------------------ YAML syntax

@pytest.mark.parametrize(("text", "expected"), [
    ("stages:\n  healthfc: [true\nmodels: {}\n",
     "line 3, column 7: not valid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence that starts at line 2, column 13)"),
    ("a:\n  b: 1\n c: 2\n", "line 3, column 2: not valid YAML: expected <block end>, but found '<block mapping start>'"),
    ("a:\n\t- b\n", "line 2, column 1: not valid YAML: found character '\\t' that cannot start any token"),
])
def test_a_yaml_syntax_error_names_the_file_and_line(text, expected, tmp_path):
    bad = write(tmp_path, text)
    assert config_file_error(bad).startswith(f"{bad}, {expected}")
    assert mistake(bad).startswith(f"{bad}, {expected}")
    assert config_file_error(REPO / "config" / "config.yaml") is None and config_file_error(tmp_path / "nowhere.yaml") is None


def test_a_config_file_that_is_not_a_mapping(tmp_path):
    assert mistake(write(tmp_path, "- a\n- b\n")) == f"{tmp_path / 'mine.yaml'}: a config file must be a mapping of keys at its top level"


def test_check_config_names_a_configfiles_yaml_mistake_and_checks_the_rest(tmp_path, capsys):
    """``python -m medfc.config.validate FILE``: for the --configfile files, whose YAML Snakemake reads itself
    (naming neither file nor line)."""
    from medfc.config.validate import main

    bad = write(tmp_path, "experiments:\n  healthfc: {folds: [1\n")
    assert main(["--workflow", str(REPO), str(bad)]) == 1
    assert capsys.readouterr().err.strip() == (f"{bad}, line 3, column 1: not valid YAML: expected ',' or ']', but got '<stream end>' "
                                               "(while parsing a flow sequence that starts at line 2, column 21)")
    folds = write(tmp_path, "experiments:\n  healthfc: {folds: [12]}\n")
    assert main(["--workflow", str(REPO), "config/test_experiments.yaml", str(folds)]) == 1
    assert capsys.readouterr().err.strip() == "config: experiments.healthfc.folds [12] outside 0..4 (healthfc.folds.n_splits)"
    assert main(["--workflow", str(REPO), "config/paper.yaml"]) == 0
    assert capsys.readouterr().out.startswith("config ok: ")
