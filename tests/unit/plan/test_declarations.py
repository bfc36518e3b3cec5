"""One declaration per key: the schema, the library and the docs name the same training keys, systems,
tables and model kinds; each test fails naming what differs."""

from __future__ import annotations

import re
import typing
from dataclasses import fields

import yaml

import medfc.tables.steps as table_steps
from medfc.experiments.models.aliases import BUILTIN_ALIASES
from medfc.experiments.models.kinds import MODEL_KINDS
from medfc.experiments.models.options import MODEL_CONFIGS, ModelConfig, TrainConfig, model_config_class
from medfc.experiments.healthfc.systems import EVIDENCE_SOURCES, REGISTRY, SYSTEMS, HealthFCFoldOptions, evidence_source
from medfc.plan.tables import TABLES
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


def test_the_systems_are_the_registrys_in_the_schema_the_steps_type_and_the_docs():
    """A HealthFC system is declared once, in medfc.experiments.healthfc.systems.REGISTRY; the schema's enum, the
    step's type, the per-system overrides and the docs table of systems name exactly its systems."""
    assert SYSTEMS == tuple(REGISTRY) and all(name == spec.name for name, spec in REGISTRY.items())
    hx = EXP["healthfc"]["properties"]
    assert hx["systems"]["items"]["enum"] == list(SYSTEMS), "schema experiments.healthfc.systems vs the registry"
    step_type = typing.get_type_hints(HealthFCFoldOptions)["system"]
    assert typing.get_args(step_type) == SYSTEMS, "HealthFCFoldOptions.system (the step's type) vs the registry"
    # the default runs the systems that read only the dataset: none searches a source (healthfc.retrieval)
    assert hx["systems"]["default"] == [s for s in SYSTEMS if evidence_source(s) is None]
    assert set(hx["system_train"]["properties"]) == set(SYSTEMS) == set(REGISTRY)
    # every option a system depends on is a key of experiments.healthfc
    assert {f.name for spec in REGISTRY.values() for f in fields(spec.options)} <= set(hx)
    assert {spec.source for spec in REGISTRY.values()} - {None} == set(EVIDENCE_SOURCES)
    # docs/experiments.md's table of systems: its rows name the registry's systems in its order, with their labels
    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    rows = [r for r in text.split("| system | training input | test input | labels |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]]
    named, labels = [], {}
    last = ""
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        last = last if cells[3] == "same" else cells[3]
        for name in re.findall(r"`(\w+)`", cells[0]):
            named.append(name)
            labels[name] = last
    assert named == list(SYSTEMS), f"docs/experiments.md systems table: {named} vs the registry {list(SYSTEMS)}"
    for name, spec in REGISTRY.items():
        assert labels[name].startswith(" / ".join(spec.labels)), f"docs/experiments.md: the labels of {name}: {labels[name]!r} vs {spec.labels}"


def test_the_tables_are_the_steps_of_the_table_rule():
    """Every table step of tables.steps is the table rule's, but those the example tables' own rules name."""
    examples = set(re.findall(r"tables\.steps:(\w+)", (REPO / "workflow" / "rules" / "examples.smk").read_text()))
    steps = {name for name in dir(table_steps) if re.fullmatch(r"(healthfc|clinifact)_(table\d+(_extra)?|significance|open_domain|times)", name)}
    assert examples and set(TABLES) == steps - examples


def test_the_model_kinds_are_declared_once_and_each_has_its_implementation_and_config_section():
    kinds = [cls.kind for cls in MODEL_CONFIGS]
    assert len(set(kinds)) == len(kinds) and set(MODEL_KINDS) == set(kinds), "options.MODEL_CONFIGS vs models.MODEL_KINDS"
    assert set(typing.get_args(typing.get_args(ModelConfig)[0])) == set(MODEL_CONFIGS)  # the tagged union is every kind's config
    for cls in MODEL_CONFIGS:
        if cls.section is None:  # the encoders' layered training config
            assert cls is TrainConfig
            continue
        section = EXP[cls.section]["properties"]
        assert set(section) == {f.name for f in fields(cls)} - {"model"}, f"schema experiments.{cls.section} vs {cls.__name__}"
        for key in getattr(cls, "cache_dirs", {}):  # a directory under the workflow's cache_dir unless set: null by default
            assert section[key]["default"] is None and "null" in section[key]["type"], f"schema experiments.{cls.section}.{key}"
        assert model_config_class(cls.model_name) is cls
    # every built-in alias names a declared kind (a new kind needs none: models.aliases names it); a name no
    # baseline claims is an encoder's
    assert {model_config_class(name).kind for name in BUILTIN_ALIASES.values()} <= set(kinds)
    assert {"encoder", "tfidf", "gbm", "frozen"} <= {model_config_class(name).kind for name in BUILTIN_ALIASES.values()}
    assert model_config_class("microsoft/deberta-v3-large") is TrainConfig


def test_the_cross_validation_driver_names_no_system():
    """run_fold and its trainers look a system up in the registry: no system's name (nor the prefix of a
    family of them) is written in medfc/experiments/healthfc/runs.py's code, so nothing there branches on one."""
    import ast

    tree = ast.parse((REPO / "src" / "medfc" / "experiments" / "healthfc" / "runs.py").read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    named = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
                    and (n.value in SYSTEMS or n.value.startswith(("retrieved_", "open_domain_")))})
    assert named == [], f"medfc/experiments/healthfc/runs.py names systems {named}: look them up in the registry instead"
