"""One declaration per key: the schema, the library and the docs name the same training keys, systems,
tables and model kinds; each test fails naming what differs."""

from __future__ import annotations

import re
from dataclasses import fields

import yaml

import medfc.tables.steps as table_steps
from medfc.experiments.aliases import BUILTIN_ALIASES
from medfc.experiments.systems import ARTICLE_SYSTEMS, SYSTEM_OPTIONS, SYSTEMS, evidence_source
from medfc.experiments.training import TrainConfig
from medfc.plan.experiments import SKLEARN_KINDS, TABLES
from tests.helpers.config import SCHEMA, defaults
from tests.helpers.workflow import REPO

S = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
EXP = S["properties"]["experiments"]["properties"]
TRAIN_FIELDS = {f.name for f in fields(TrainConfig)} - {"model"}  # model comes from models.aliases


def test_the_training_keys_are_declared_once_and_are_trainconfigs_fields():
    keys = S["$defs"]["train_keys"]
    assert set(keys["properties"]) == TRAIN_FIELDS, "schema $defs.train_keys vs TrainConfig"
    assert all("default" not in spec for spec in keys["properties"].values())  # a declaration, no default
    # every section of training keys reuses the declaration
    assert EXP["smoke"]["$ref"] == EXP["healthfc"]["properties"]["evidence_train"]["$ref"] == "#/$defs/train_overrides"
    assert S["$defs"]["train_overrides"]["$ref"] == S["$defs"]["train"]["$ref"] == "#/$defs/train_keys"
    for dataset in ("healthfc", "clinifact"):
        train = EXP[dataset]["properties"]["train"]
        assert train["$ref"] == "#/$defs/train"
        # a dataset declares only its defaults, and only those that differ from the other dataset's
        assert all(set(spec) == {"default"} for spec in train["properties"].values())
        assert set(train["properties"]).isdisjoint(S["$defs"]["train"]["properties"])
        assert EXP[dataset]["properties"]["model_train"]["additionalProperties"] == {"$ref": "#/$defs/train_overrides"}
    shared, hfc, cf = (S["$defs"]["train"]["properties"], EXP["healthfc"]["properties"]["train"]["properties"],
                       EXP["clinifact"]["properties"]["train"]["properties"])
    assert set(hfc) == set(cf) and all(hfc[k] != cf[k] for k in hfc), "a default both datasets share belongs in $defs.train"
    assert set(shared) | set(hfc) == TRAIN_FIELDS, "every training key has a default"
    # the validated config has every TrainConfig field in both datasets' sections
    cfg = defaults()["experiments"]
    for dataset in ("healthfc", "clinifact"):
        TrainConfig.from_mapping({**cfg[dataset]["train"], "model": "x"})


def test_the_docs_table_of_training_keys_names_exactly_the_schemas_keys():
    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    section = text.split("### `TrainConfig` keys", 1)[1].split("\n## ", 1)[0]
    named = {k for row in section.splitlines() if row.startswith("| `") for k in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert named == TRAIN_FIELDS | {"model"}, f"docs/experiments.md: missing {TRAIN_FIELDS - named}, extra {named - TRAIN_FIELDS - {'model'}}"


def test_the_systems_are_the_schemas_systems():
    hx = EXP["healthfc"]["properties"]
    assert hx["systems"]["items"]["enum"] == list(SYSTEMS)
    # the default runs the systems that read only the dataset: none searches a source (healthfc.retrieval)
    assert hx["systems"]["default"] == list(ARTICLE_SYSTEMS) == [s for s in SYSTEMS if evidence_source(s) is None]
    assert set(hx["system_train"]["properties"]) == set(SYSTEMS) == set(SYSTEM_OPTIONS)
    # every option a system depends on is a key of experiments.healthfc
    assert {f.name for cls in SYSTEM_OPTIONS.values() for f in fields(cls)} <= set(hx)


def test_the_tables_are_the_steps_of_the_table_rule():
    steps = {name for name in dir(table_steps) if re.fullmatch(r"(healthfc|clinifact)_(table\d+|significance|open_domain)", name)}
    assert set(TABLES) == steps


def test_the_models_kinds_are_the_schemas_baseline_sections():
    sklearn = {name.split(":", 1)[1] for name in BUILTIN_ALIASES.values() if name.startswith("sklearn:")}
    assert set(SKLEARN_KINDS) == sklearn
    assert set(SKLEARN_KINDS) <= set(EXP)  # sklearn:<kind> reads experiments.<kind>
