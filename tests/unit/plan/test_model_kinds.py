"""The model kinds are one registry (medfc.experiments.models.options.MODEL_CONFIGS, each kind's config class, and
medfc.experiments.models.kinds.MODEL_KINDS, its implementation and its keeper): each kind declares the datasets it
serves, which the plan's check looks up (gbm reads CliniFact's claims and abstracts only), and how a fitted
model of it is kept for ``medfc predict`` and loaded back, which medfc.experiments.final.kept looks up. A test-only
kind registered here, and nothing else, is planned, checked, run through the ``pairs_experiment`` step, kept
and applied to new claims by ``medfc predict``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from medfc.common.io import read_json, read_jsonl, write_json
from medfc.common.labels import CLINIFACT_LABELS
from medfc.common.options import Options
from medfc.experiments.final import kept as kept_module
from medfc.experiments.models import kinds as models_module
from medfc.experiments.models import options as options_module
from medfc.experiments.final import predict as predict_module
from medfc.experiments.pairs import load_pairs
from medfc.experiments.records import Example
from medfc.experiments.models.keeper import Keeper
from medfc.experiments.final.kept import CARD, keep_fitted, keepers, load_fitted, read_card
from medfc.experiments.models.kinds import ModelKind
from medfc.experiments.models.options import MODEL_CONFIGS, PairsTrainOptions, GbmOptions
from medfc.experiments.final.predict import predict_file
from medfc.experiments.steps import pairs_experiment
from medfc.plan import Plan, resources
from medfc.config.checks import check_plan
from tests.helpers.config import call_step
from tests.helpers.experiment_data import clinifact_data  # noqa: F401
from tests.unit.plan.test_plan import DEMO_RELEASE, config

GBM_IN_HEALTHFC = (r"^config: models\.healthfc uses \['gbm', 'pair'\], gradient boosting over claim–text features \(sklearn:gbm\); "
                   r"it reads the claim and text of CliniFact's and the declared datasets' pairs only$")


EVERY = ("healthfc", "clinifact", "pairs")  # HealthFC's lists, CliniFact's, the one pairs path's (CliniFact's discriminative, declared datasets')


def test_each_kind_declares_the_datasets_it_serves():
    assert {cls.kind: cls.datasets for cls in MODEL_CONFIGS} == {
        "encoder": EVERY, "tfidf": EVERY, "gbm": ("pairs",), "frozen": EVERY}
    assert all(bool(cls.limits) == (cls.datasets != EVERY) for cls in MODEL_CONFIGS), "a limited kind says why"


def test_a_kind_named_by_a_dataset_it_does_not_serve_stops_the_plan_in_one_line():
    """gbm (directly or as an ensemble's member) in a HealthFC model list: the kind's own limits, one line."""
    ensembles = {"pair": {"members": ["tfidf", "gbm"], "weights": None, "method": "average"}}
    cfg = config(stages__experiments=True, models__ensembles=ensembles, models__healthfc={"en": ["tfidf", "pair"], "de": ["gbm"]},
                 healthfc__release=DEMO_RELEASE)
    with pytest.raises(ValueError, match=GBM_IN_HEALTHFC):
        check_plan(Plan(cfg))
    # the kind in CliniFact's list is planned; an alias of the kind is the kind
    cfg = config(stages__experiments=True, models__aliases={"gbm-2": "sklearn:gbm"}, models__healthfc={"en": ["tfidf"], "de": []},
                 models__clinifact={"discriminative": ["gbm", "gbm-2"], "zero_shot": [], "fine_tuned": []},
                 healthfc__release=DEMO_RELEASE)
    check_plan(Plan(cfg))
    cfg["models"]["healthfc"]["en"] = ["gbm-2"]
    with pytest.raises(ValueError, match=r"^config: models\.healthfc uses \['gbm-2'\], gradient boosting"):
        check_plan(Plan(cfg))
    assert GbmOptions.datasets == ("pairs",)


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


PRIOR_STATE = "prior.json"


def keep_prior(fitted: FittedPrior, directory: Path) -> dict:
    """The kind's keep: its labels and prior in a file of its own, which the card names."""
    write_json(directory / PRIOR_STATE, {"labels": fitted.labels, "prior": fitted.prior.tolist()})
    return {"state": PRIOR_STATE}


def load_prior(directory: Path, card: dict, device: str, batch_size: int | None) -> FittedPrior:
    """The kind's load: the prior back from the file the card names."""
    state = read_json(directory / card["state"])
    return FittedPrior(state["labels"], np.array(state["prior"]))


@pytest.fixture
def prior_kind(monkeypatch):
    """The test-only kind, registered for one test: its config class and its implementation (its model and its
    keeper), nothing else."""
    monkeypatch.setattr(options_module, "MODEL_CONFIGS", (*MODEL_CONFIGS, PriorOptions))
    monkeypatch.setitem(models_module.MODEL_KINDS, "prior", ModelKind(PriorModel, Keeper(keep_prior, load_prior)))
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


def test_a_kind_registered_in_a_test_is_planned_checked_and_run_by_the_clinifact_step(prior_kind, clinifact_data, tmp_path, monkeypatch):
    cfg = prior_config()
    plan = Plan(cfg)
    check_plan(plan)
    assert [(r["model"], r["system"]) for r in plan.experiments.clinifact_runs()] == [("tfidf", "discriminative"), ("prior", "discriminative")]
    options = plan.experiments.pairs_experiment("clinifact", "prior").to_mapping()
    assert options["train"] == {"kind": "prior", "smoothing": 1.0, "model": "test:prior"}
    assert isinstance(PairsTrainOptions.from_mapping(options).train, PriorOptions)
    assert plan.job_resources("pairs_experiment", {"dataset": "clinifact", "model": "prior"}) == {"gpu": 0, "threads": 1, "mem_mb": 1000, "runtime": 5}
    assert "prior" in resources.rows() and "prior" not in resources.gpu_rows()
    plan.config["models"]["options"]["prior"] = {"smoothing": 0.5}  # models.options: the alias's own keys of its section
    assert plan.experiments.pairs_experiment("clinifact", "prior").to_mapping()["train"]["smoothing"] == 0.5
    out = {"predictions": str(tmp_path / "predictions.jsonl"), "info": str(tmp_path / "info.json")}
    call_step(pairs_experiment, {s: str(p) for s, p in clinifact_data.items()}, out, options)
    records, info = list(read_jsonl(out["predictions"])), read_json(out["info"])
    assert len(records) == 6 and {r["split"] for r in records} == {"test"} and {r["system"] for r in records} == {"discriminative"}
    assert all(r["probs"] == pytest.approx(dict.fromkeys(r["probs"], 1 / 3)) for r in records)  # 4 of each label in train
    assert info["config"] == {"model": "test:prior", "smoothing": 1.0} and info["train"] == {"prior": [1 / 3] * 3}
    # the kind's datasets: in a HealthFC list, its own limits as the one line
    cfg["models"]["healthfc"]["en"] = ["prior"]
    with pytest.raises(ValueError, match=r"^config: models\.healthfc uses \['prior'\], the label prior \(test:prior\); it serves CliniFact only$"):
        check_plan(Plan(cfg))
    # a kind without a keeper is refused when the run keeps checkpoints: before it trains, not after
    cfg["models"]["healthfc"]["en"] = ["tfidf"]
    cfg["experiments"]["keep_checkpoints"] = True
    check_plan(Plan(cfg))
    monkeypatch.setitem(models_module.MODEL_KINDS, "prior", ModelKind(PriorModel))
    with pytest.raises(ValueError, match=r"^config: experiments\.keep_checkpoints is true but models\.clinifact\.discriminative uses 'prior', "
                                         r"of the model kind prior, which has no keeper"):
        check_plan(Plan(cfg))


def test_no_comparison_with_a_kinds_name_is_left_in_the_plan_or_the_model_factory():
    """A kind is looked up (its class's datasets, limits, gpu, section), never tested for by name (``kind ==
    "encoder"``, ``== "sklearn:gbm"``) in medfc/plan or medfc/experiments/models/kinds.py."""
    names = "|".join(re.escape(n) for cls in MODEL_CONFIGS for n in (cls.kind, cls.model_name) if n)
    compared = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=|(not\s+)?in\b)""")
    src = Path(options_module.__file__).resolve().parents[2]
    files = [*sorted((src / "plan").glob("*.py")), src / "experiments" / "models" / "kinds.py"]
    found = [f"{p.relative_to(src)}:{n}: {line.strip()}" for p in files for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if compared.search(line)]
    assert found == []
    assert compared.search('if kind == "encoder":') and compared.search('self.aliases.get(x) == "sklearn:gbm"')  # the check sees them


def test_a_kind_registered_in_a_test_is_kept_and_loaded_back_through_its_keeper(prior_kind, tmp_path):
    """keep_fitted writes what the kind's keeper writes and the card it adds to; read_card and load_fitted give
    back a fitted model predicting the same probabilities (an unbalanced prior: nothing a default could guess)."""
    train = [Example("a", "b", label) for label in ("SUPPORTED", "SUPPORTED", "SUPPORTED", "REFUTED")]
    labels = ["SUPPORTED", "REFUTED", "NOT ENOUGH INFO"]
    fitted = PriorModel(PriorOptions(model="test:prior", smoothing=0.5), None).fit(train, labels)
    examples = [Example("c", "d"), Example("e", None)]
    path = keep_fitted(fitted, tmp_path / "kept", {"dataset": "clinifact", "system": "discriminative", "kind": "prior",
                                                   "model": "test:prior", "labels": labels})
    assert path == tmp_path / "kept" / CARD and sorted(p.name for p in (tmp_path / "kept").iterdir()) == [CARD, PRIOR_STATE]
    card = read_card(tmp_path / "kept")
    assert card == {"format": 1, "dataset": "clinifact", "system": "discriminative", "kind": "prior", "model": "test:prior",
                    "labels": labels, "state": PRIOR_STATE}
    loaded = load_fitted(tmp_path / "kept", card, "cpu", 2)
    assert isinstance(loaded, FittedPrior) and loaded.labels == labels
    np.testing.assert_array_equal(loaded.probs(examples), fitted.probs(examples))
    assert fitted.probs(examples)[0].tolist() == pytest.approx([3.5 / 5.5, 1.5 / 5.5, 0.5 / 5.5])
    assert list(keepers()) == ["encoder", "tfidf", "gbm", "frozen", "prior", "joint", "pipeline", "lora", "ensemble"]


def test_a_kind_registered_in_a_test_is_kept_by_its_run_and_applied_by_medfc_predict(prior_kind, clinifact_data, tmp_path):
    """The pairs_experiment step keeps the test-only kind's model (experiments.keep_checkpoints: the plan's
    checkpoint_dir); medfc predict reads its card and applies it to new claims as the run predicted its test claims."""
    options = Plan(prior_config()).experiments.pairs_experiment("clinifact", "prior").replace(checkpoint_dir=str(tmp_path / "ck"))
    out = {"predictions": str(tmp_path / "predictions.jsonl"), "info": str(tmp_path / "info.json")}
    call_step(pairs_experiment, {s: str(p) for s, p in clinifact_data.items()}, out, options)
    card = read_card(tmp_path / "ck")
    assert (card["kind"], card["model"], card["state"], card["labels"]) == ("prior", "test:prior", PRIOR_STATE, list(CLINIFACT_LABELS))
    pairs = load_pairs(clinifact_data["test"])[:3]
    rows = tmp_path / "claims.jsonl"
    rows.write_text("".join(json.dumps({"id": p.id, "claim": p.claim, "abstract": p.abstract}) + "\n" for p in pairs), encoding="utf-8")
    summary = predict_file(tmp_path / "ck", rows, tmp_path / "out.jsonl", device="cpu")
    assert (summary["kind"], summary["predicted"], summary["skipped"]) == ("prior", 3, 0)
    by_id = {r["id"]: r["probs"] for r in read_jsonl(out["predictions"])}
    got = list(read_jsonl(tmp_path / "out.jsonl"))
    assert [r["id"] for r in got] == [p.id for p in pairs]
    assert all(r["probabilities"] == pytest.approx(by_id[r["id"]], abs=1e-6) for r in got)


def test_an_unknown_kind_of_kept_model_is_an_error_naming_the_known_ones(tmp_path):
    """A card of a kind no keeper declares (here: the test-only kind, not registered) is neither kept nor loaded."""
    card = {"dataset": "clinifact", "system": "discriminative", "kind": "prior", "model": "test:prior", "labels": ["a", "b"]}
    known = (r"no keeper for a model of kind 'prior' \(an unknown kind, or one not kept for medfc predict\); "
             r"the kinds kept are encoder, tfidf, gbm, frozen, joint, pipeline, lora, ensemble$")
    with pytest.raises(ValueError, match=known):
        keep_fitted(None, tmp_path / "kept", card)
    with pytest.raises(ValueError, match=known):
        load_fitted(tmp_path, {"format": 1, **card})
    with pytest.raises(ValueError, match="a kept lora model is not loaded whole; medfc predict applies it"):
        load_fitted(tmp_path, {"format": 1, **card, "kind": "lora"})


def test_no_comparison_with_a_kinds_name_is_left_in_the_kept_models():
    """medfc.experiments.final.kept (and medfc predict) look a kind up in the keepers (``keepers().get(kind)``,
    ``KEPT_PREDICTORS.get``), never test for it: neither a kind's name compared (``== "tfidf"``, ``in ("lora",
    "pipeline")``) nor a kind compared with anything (``kind == JOINT_KIND``, ``card["kind"] == ...``, ``kind in
    SKLEARN_KINDS``)."""
    names = "|".join(re.escape(n) for n in {*(cls.kind for cls in MODEL_CONFIGS), *keepers()})
    named = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=|(not\s+)?in\b)|\(\s*["']({names})["']\s*,""")
    kind = re.compile(r"""(?<!for )\bkind\b["'\]]*\s*(==|!=|(not\s+)?in\b)|(==|!=)\s*\w*_KIND\b""")
    files = [Path(kept_module.__file__), Path(predict_module.__file__), Path(predict_module.__file__).with_name("predict_inputs.py")]
    found = [f"{p.name}:{n}: {line.strip()}" for p in files for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if named.search(line) or kind.search(line)]
    assert found == []
    old = ['if kind == "tfidf":', 'elif kind in SKLEARN_KINDS:', 'elif kind not in ("lora", "pipeline"):', 'if card["kind"] == JOINT_KIND:',
           'elif card["kind"] == "lora":', "elif kind == JOINT_KIND:"]
    assert all(named.search(line) or kind.search(line) for line in old), "the check sees the comparisons kept.py had"
    assert not kind.search("for kind, entry in MODEL_KINDS.items()")
