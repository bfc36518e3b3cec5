"""The model kinds are one registry (medfc.experiments.options.MODEL_CONFIGS, each kind's config class, and
medfc.experiments.models.MODEL_KINDS, its implementation; issue 44 items 2 and 4): each kind declares the
datasets it serves, which the plan's check looks up (gbm reads CliniFact's claims and abstracts only). A
test-only kind registered here, and nothing else, is planned, checked and run through the
``clinifact_experiment`` step."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from medfc.common.io import read_json, read_jsonl
from medfc.common.options import Options
from medfc.experiments import models as models_module
from medfc.experiments import options as options_module
from medfc.experiments.options import MODEL_CONFIGS, CliniFactTrainOptions, GbmOptions
from medfc.experiments.steps import clinifact_experiment
from medfc.plan import Plan, resources
from tests.helpers.config import call_step
from tests.helpers.experiment_data import clinifact_data  # noqa: F401
from tests.unit.plan.test_plan import DEMO_RELEASE, config

GBM_IN_HEALTHFC = (r"^config: models\.healthfc uses \['gbm', 'pair'\], gradient boosting over CliniFact features \(sklearn:gbm\); "
                   r"it reads CliniFact claims and abstracts only$")


def test_each_kind_declares_the_datasets_it_serves():
    assert {cls.kind: cls.datasets for cls in MODEL_CONFIGS} == {
        "encoder": ("healthfc", "clinifact"), "tfidf": ("healthfc", "clinifact"), "gbm": ("clinifact",), "frozen": ("healthfc", "clinifact")}
    assert all(bool(cls.limits) == (set(cls.datasets) != {"healthfc", "clinifact"}) for cls in MODEL_CONFIGS), "a limited kind says why"


def test_a_kind_named_by_a_dataset_it_does_not_serve_stops_the_plan_in_one_line():
    """gbm (directly or as an ensemble's member) in a HealthFC model list: the kind's own limits, one line."""
    ensembles = {"pair": {"members": ["tfidf", "gbm"], "weights": None, "method": "average"}}
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


# ---------------------------------------------------------------------------------- a test-only kind
@dataclass(frozen=True)
class PriorOptions(Options):
    """Kind ``prior`` (test-only): the training labels' frequencies, whatever the text; ``experiments.prior``."""

    kind: ClassVar[str] = "prior"
    section: ClassVar[str | None] = "prior"
    model_name: ClassVar[str | None] = "test:prior"
    datasets: ClassVar[tuple[str, ...]] = ("clinifact",)
    limits: ClassVar[str] = "the label prior (test:prior); it serves CliniFact only"
    gpu: ClassVar[bool] = False

    model: str
    smoothing: float


@dataclass
class Stats:
    values: dict

    def as_dict(self) -> dict:
        return dict(self.values)


class FittedPrior:
    def __init__(self, labels: list[str], probs: np.ndarray) -> None:
        self.labels, self.prior = labels, probs
        self.result, self.encode_stats = Stats({"prior": probs.tolist()}), Stats({"truncated": 0})

    def probs(self, examples, desc: str = "predict") -> np.ndarray:
        return np.tile(self.prior, (len(examples), 1))


class PriorModel:
    def __init__(self, config: PriorOptions, threads: int | None) -> None:
        self.config = config

    def fit(self, examples, labels, validation=None, *, checkpoint_dir=None, trim="right", desc="train") -> FittedPrior:
        counts = np.array([sum(e.label == label for e in examples) for label in labels], dtype=float) + self.config.smoothing
        return FittedPrior(list(labels), counts / counts.sum())


@pytest.fixture
def prior_kind(monkeypatch):
    """The test-only kind, registered for one test: its config class and its implementation, nothing else."""
    monkeypatch.setattr(options_module, "MODEL_CONFIGS", (*MODEL_CONFIGS, PriorOptions))
    monkeypatch.setitem(models_module.MODEL_KINDS, "prior", PriorModel)
    return PriorOptions


def prior_config():
    """The schema's defaults with what the kind's schema entries would add: its section, its resources row (the rows
    follow the kinds: medfc.plan.resources.rows)."""
    cfg = config(stages__experiments=True, healthfc__release=DEMO_RELEASE, models__aliases={"prior": "test:prior"},
                 models__healthfc={"en": ["tfidf"], "de": []},
                 models__clinifact={"discriminative": ["tfidf", "prior"], "zero_shot": [], "fine_tuned": []})
    cfg["experiments"]["prior"] = {"smoothing": 1.0}
    cfg["experiments"]["resources"]["prior"] = {"threads": 1, "mem_mb": 1000, "runtime": 5}
    return cfg


def test_a_kind_registered_in_a_test_is_planned_checked_and_run_by_the_clinifact_step(prior_kind, clinifact_data, tmp_path):
    cfg = prior_config()
    plan = Plan(cfg)
    plan.check()
    assert [(r["model"], r["system"]) for r in plan.clinifact_runs()] == [("tfidf", "discriminative"), ("prior", "discriminative")]
    options = plan.clinifact_experiment_options("prior").to_mapping()
    assert options["train"] == {"kind": "prior", "smoothing": 1.0, "model": "test:prior"}
    assert isinstance(CliniFactTrainOptions.from_mapping(options).train, PriorOptions)
    assert plan.job_resources("clinifact_experiment", {"model": "prior"}) == {"gpu": 0, "threads": 1, "mem_mb": 1000, "runtime": 5}
    assert "prior" in resources.rows() and "prior" not in resources.gpu_rows()
    plan.config["models"]["options"]["prior"] = {"smoothing": 0.5}  # models.options: the alias's own keys of its section
    assert plan.clinifact_experiment_options("prior").to_mapping()["train"]["smoothing"] == 0.5
    out = {"predictions": str(tmp_path / "predictions.jsonl"), "info": str(tmp_path / "info.json")}
    call_step(clinifact_experiment, {s: str(p) for s, p in clinifact_data.items()}, out, options)
    records, info = list(read_jsonl(out["predictions"])), read_json(out["info"])
    assert len(records) == 6 and {r["split"] for r in records} == {"test"} and {r["system"] for r in records} == {"discriminative"}
    assert all(r["probs"] == pytest.approx(dict.fromkeys(r["probs"], 1 / 3)) for r in records)  # 4 of each label in train
    assert info["config"] == {"model": "test:prior", "smoothing": 1.0} and info["train"] == {"prior": [1 / 3] * 3}
    # the kind's datasets: in a HealthFC list, its own limits as the one line
    cfg["models"]["healthfc"]["en"] = ["prior"]
    with pytest.raises(ValueError, match=r"^config: models\.healthfc uses \['prior'\], the label prior \(test:prior\); it serves CliniFact only$"):
        Plan(cfg).check()


def test_no_comparison_with_a_kinds_name_is_left_in_the_plan_or_the_model_factory():
    """A kind is looked up (its class's datasets, limits, gpu, section), never tested for by name (``kind ==
    "encoder"``, ``== "sklearn:gbm"``) in medfc/plan or medfc/experiments/models.py."""
    names = "|".join(re.escape(n) for cls in MODEL_CONFIGS for n in (cls.kind, cls.model_name) if n)
    compared = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=|(not\s+)?in\b)""")
    src = Path(options_module.__file__).resolve().parents[1]
    files = [*sorted((src / "plan").glob("*.py")), src / "experiments" / "models.py"]
    found = [f"{p.relative_to(src)}:{n}: {line.strip()}" for p in files for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if compared.search(line)]
    assert found == []
    assert compared.search('if kind == "encoder":') and compared.search('self.aliases.get(x) == "sklearn:gbm"')  # the check sees them
