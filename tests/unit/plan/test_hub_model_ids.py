"""A Hugging Face model id works wherever a model alias does: named as it is in the model lists, it is an alias
of itself; any other name that is no alias stops the plan saying how to write one."""

from __future__ import annotations

import re

import pytest

from medfc.experiments.models.aliases import direct_model_name, model_aliases
from medfc.plan import Plan
from medfc.config.checks import check_plan
from medfc.config.checks import misplaced_model_train
from tests.unit.plan.test_plan import DEMO_RELEASE, config


def test_which_names_stand_for_themselves(tmp_path, monkeypatch):
    assert direct_model_name("dmis-lab/biobert-v1.1") and direct_model_name("bert-base-uncased/x")
    assert not direct_model_name("bert-base-uncased")  # a hub id without its organisation: an alias
    assert not direct_model_name("/abs/model") and not direct_model_name("../up/model") and not direct_model_name("a/../b")
    assert not direct_model_name("models/deep/model")  # deeper than org/name: only when it is a directory
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "deep" / "model").mkdir(parents=True)
    assert direct_model_name("models/deep/model")
    aliases = model_aliases({"mine": "org/x"}, ["org/y", "mine", "tfidf", "nope"])
    assert aliases["org/y"] == "org/y" and aliases["mine"] == "org/x" and aliases["tfidf"] == "sklearn:tfidf" and "nope" not in aliases


def test_a_hub_id_in_the_model_lists_plans_like_an_alias():
    cfg = config(models__healthfc={"en": ["tfidf", "dmis-lab/biobert-v1.1"], "de": []}, experiments__healthfc__folds=[0], healthfc__release=DEMO_RELEASE,
                 models__clinifact={"discriminative": ["org/enc"], "zero_shot": ["org/llm"], "fine_tuned": ["org/llm"]})
    plan = Plan(cfg)
    check_plan(plan)
    assert plan.models.model_name("dmis-lab/biobert-v1.1") == "dmis-lab/biobert-v1.1"
    assert plan.models.model_kinds("org/enc") == {"encoder"}
    assert {r["model"] for r in plan.healthfc.healthfc_runs()} == {"tfidf", "dmis-lab/biobert-v1.1"}
    pattern = plan.models.model_alias_pattern(ensembles=False)  # the {model} wildcard of the result paths
    assert re.fullmatch(f"(?:{pattern})", "dmis-lab/biobert-v1.1") and not re.fullmatch(f"(?:{pattern})", "dmis-lab")
    assert plan.experiments.clinifact_fine_tune("org/llm").to_mapping()["model"] == "org/llm"
    # its own training keys, keyed by the hub id
    cfg["experiments"]["healthfc"]["model_train"] = {"dmis-lab/biobert-v1.1": {"epochs": 2}}
    assert misplaced_model_train(cfg) is None


def test_a_name_that_is_no_alias_says_how_to_write_one():
    with pytest.raises(ValueError, match=r"names no model.*models: \{aliases: \{NAME: <hub name, directory or offline:minilm>\}\}"):
        check_plan(Plan(config(models__healthfc={"en": ["bert-base-uncased"], "de": []})))
    with pytest.raises(ValueError, match=r"is not defined in models.aliases.*Hugging Face model id \(org/name\)"):
        Plan(config(models__healthfc={"en": ["bert-base-uncased"], "de": []})).healthfc.healthfc_runs()
