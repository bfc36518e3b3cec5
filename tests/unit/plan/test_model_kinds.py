"""The model kinds are one registry (medfc.experiments.options.MODEL_CONFIGS, each kind's config class, and
medfc.experiments.models.MODEL_KINDS, its implementation; issue 44 items 2 and 4): each kind declares the
datasets it serves, which the plan's check looks up (gbm reads CliniFact's claims and abstracts only)."""

from __future__ import annotations

import pytest

from medfc.experiments.options import MODEL_CONFIGS, GbmOptions
from medfc.plan import Plan
from tests.unit.plan.test_plan import DEMO_RELEASE, config

GBM_IN_HEALTHFC = (r"^config: models\.healthfc uses \['gbm', 'pair'\], gradient boosting over CliniFact features \(sklearn:gbm\); "
                   r"it reads CliniFact claims and abstracts only$")


def test_each_kind_declares_the_datasets_it_serves():
    assert {cls.kind: cls.datasets for cls in MODEL_CONFIGS} == {
        "encoder": ("healthfc", "clinifact"), "tfidf": ("healthfc", "clinifact"), "gbm": ("clinifact",), "frozen": ("healthfc", "clinifact")}
    assert all(bool(cls.limits) == (set(cls.datasets) != {"healthfc", "clinifact"}) for cls in MODEL_CONFIGS), "a limited kind says why"


def test_a_kind_named_by_a_dataset_it_does_not_serve_stops_the_plan_in_one_line():
    """gbm (directly or as an ensemble's member) in a HealthFC model list: the kind's own limits, one line."""
    ensembles = {"pair": {"members": ["tfidf", "gbm"], "weights": None}}
    cfg = config(stages__experiments=True, models__ensembles=ensembles, models__healthfc={"en": ["tfidf", "pair"], "de": ["gbm"]},
                 healthfc__release=DEMO_RELEASE)
    with pytest.raises(ValueError, match=GBM_IN_HEALTHFC):
        Plan(cfg).check()
    # the kind in CliniFact's list is planned; an alias of the kind is the kind
    cfg = config(stages__experiments=True, models__aliases={"gbm-2": "sklearn:gbm"}, models__healthfc={"en": ["tfidf"], "de": []},
                 models__clinifact={"discriminative": ["gbm", "gbm-2"], "zero_shot": [], "fine_tuned": []},
                 healthfc__release=DEMO_RELEASE)
    Plan(cfg).check()
    cfg["models"]["healthfc"]["en"] = ["gbm-2"]
    with pytest.raises(ValueError, match=r"^config: models\.healthfc uses \['gbm-2'\], gradient boosting"):
        Plan(cfg).check()
    assert GbmOptions.datasets == ("clinifact",)
