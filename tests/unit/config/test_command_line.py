"""--config values typed by the schema, folders that cannot be folders, and the kept models' default folder."""

from __future__ import annotations

import copy

import pytest

from medfc.config.validate import ConfigError, folder_error, load_schema, merged_config, plan_for, typed_command_line
from tests.helpers.workflow import REPO

SCHEMA = load_schema(REPO / "workflow/schemas/config.schema.yaml")


def typed(given):
    config = copy.deepcopy(given)
    typed_command_line(config, given, SCHEMA)
    return config


def test_scalars_snakemake_reads_as_strings_are_typed_where_the_schema_says():
    assert typed({"experiments": {"keep_checkpoints": "true", "healthfc": {"folds": ["0", "3"]}},
                  "scoring": {"bootstrap": {"n_resamples": "200"}, "lambdas": ["0.25"]}}) == {
        "experiments": {"keep_checkpoints": True, "healthfc": {"folds": [0, 3]}},
        "scoring": {"bootstrap": {"n_resamples": 200}, "lambdas": [0.25]}}
    # a key whose schema allows a string keeps the string; a top-level value Snakemake typed stays as it is
    assert typed({"results_dir": "3", "experiments": {"scale": "cpu"}}) == {"results_dir": "3", "experiments": {"scale": "cpu"}}
    assert typed({"experiments": {"checkpoint_dir": "null"}}) == {"experiments": {"checkpoint_dir": "null"}}


def test_the_schema_has_one_node_per_key_as_the_typing_walks_it():
    """--config typing follows properties, items and additionalProperties: the schema has no alternatives."""
    text = (REPO / "workflow/schemas/config.schema.yaml").read_text(encoding="utf-8")
    assert not [k for k in ("anyOf", "oneOf", "allOf", "patternProperties") if f"{k}:" in text]


@pytest.mark.parametrize("given, key", [
    ({"experiments": {"keep_checkpoints": "yes"}}, "experiments.keep_checkpoints"),
    ({"scoring": {"bootstrap": {"n_resamples": "1e9x"}}}, "scoring.bootstrap.n_resamples"),
    ({"experiments": {"healthfc": {"folds": ["0", "one"]}}}, "experiments.healthfc.folds[1]"),
])
def test_a_value_of_no_allowed_type_is_one_line_naming_the_key(given, key):
    with pytest.raises(ConfigError) as err:
        typed(given)
    assert str(err.value).startswith(f"config: {key}: ") and "\n" not in str(err.value) and "--config '" in str(err.value)


def test_a_folder_key_naming_a_file_or_a_path_below_one(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    assert folder_error("results_dir", str(tmp_path / "runs" / "new")) is None
    assert "is a file" in folder_error("results_dir", str(tmp_path / "notes.txt"))
    assert "which is a file" in folder_error("cache_dir", str(tmp_path / "notes.txt" / "cache"))


def test_kept_models_go_below_the_runs_own_folder_unless_a_folder_is_named():
    demo = [REPO / "config/config.yaml"]
    plan = plan_for(merged_config(demo, {"results_dir": "runs/mine", "experiments": {"keep_checkpoints": True}}), SCHEMA, base_dir=REPO)
    assert plan.models.checkpoint_dir("clinifact/tfidf") == "runs/mine/checkpoints/clinifact/tfidf"
    named = {"experiments": {"keep_checkpoints": True, "checkpoint_dir": "/scratch/me"}}
    assert plan_for(merged_config(demo, named), SCHEMA, base_dir=REPO).models.checkpoint_dir("x") == "/scratch/me/x"
