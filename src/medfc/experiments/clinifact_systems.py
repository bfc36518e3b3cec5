"""The CliniFact systems, each declared once: a registry of small records
(:class:`CliniFactSystem`) that the plan (the run matrix, each job's options, the config checks, the
prerequisites, the jobs that may run a model, the cluster placement of its rules and its jobs' resources), the
tables and the figure look up, so a system's model list, options, rules, run folder, placement, resources row
and row name are written in one place.

A system either has rules of its own (``discriminative``, ``zero_shot``, ``fine_tuned``: each its rule, score
rule and options method of the plan) or a runner of its own: a function ``run(inputs, options, runtime)`` and
its options class, named by the record (``"module:name"``, imported when a job or the plan's check needs them)
and run by one generic rule pair (:data:`SYSTEM_RULE`, :data:`SYSTEM_SCORE_RULE`, whose ``{system}`` wildcard
takes the names of :func:`wildcard_pattern`) through one step (``experiments.steps:clinifact_system``, options
:class:`CliniFactSystemOptions`), with its options built by one method of the plan
(:meth:`medfc.plan.experiments.ExperimentsPlan.clinifact_runner_options`). Such runners live in
:mod:`medfc.experiments.clinifact_runners`.

The rules (``workflow/rules/experiments.smk``, ``scoring.smk``) name the same rules and folders; a test
(``tests/unit/plan/test_clinifact_systems.py``) keeps them equal to the records and finds no comparison with a
system's name in the plan or the tables. A light module (no torch, no pandas): the workflow reads it when it
plans the DAG.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from medfc.common.options import OneOf, Options, Runtime, Tagged
from medfc.common.registry import load, lookup
from medfc.common.stepfiles import StepFiles
from medfc.experiments.records import CliniFactPrediction, RunInfo

SYSTEM_RULE = "clinifact_system"  # the generic rule: the runs of every system with a runner of its own
SYSTEM_SCORE_RULE = "clinifact_system_score"  # and their scores


@dataclass(frozen=True)
class CliniFactRunnerOptions(Options):
    """The base of a runner's options class: the plan gives every runner its model's name (``model``, the
    alias resolved) beside its section's keys."""

    model: str


# a system's runner: the job's named inputs (its record's ``inputs``: the splits), its options, the job's
# threads and log → its prediction records (each naming its system) and its info; the step writes both
Runner = Callable[[StepFiles, Any, Runtime], tuple[Sequence[CliniFactPrediction], RunInfo]]


@dataclass(frozen=True)
class CliniFactSystem:
    """One CliniFact system.

    ``name`` is its model list's key (``models.clinifact.<name>``) and the ``system`` of its runs, their
    predictions and scores. ``options`` names the :class:`medfc.plan.Plan` method that builds one model's
    options (the ``options`` param of ``rule``), from ``experiments.clinifact.<section>`` and its overrides
    ``experiments.clinifact.model_<section>[model]``; ``inputs`` names the one that gives a job's input files
    (the splits it reads). ``rule`` makes a run's predictions, ``score_rule`` scores them and ``ensemble_rule``
    combines an ensemble's members' predictions (None: the system runs no ensembles; an ensemble's name is a
    model of its own); ``inner_cv_rule`` makes a stacked ensemble's
    members' out-of-fold predictions (:mod:`medfc.experiments.stacking`). ``folder`` is its runs' folder under
    ``<experiments>/clinifact`` (``""``: a run's folder lies there directly); ``title`` names it in messages
    and ``suffix`` is what its rows in the tables and Fig. 3 add to the model's alias (the paper's row names,
    ``llama3-70b (zero-shot)``). ``asks_llm``: its options are an LLM client's (backend, endpoint, key
    variable), whose key is checked before the run (:mod:`medfc.plan.prerequisites`).

    Where its jobs run and what they ask for (:mod:`medfc.plan.cluster`, :mod:`medfc.plan.resources`):
    ``placement`` ``compute`` makes ``rule`` (and ``inner_cv_rule``) a training rule, always a cluster job;
    ``model`` makes it a rule that runs a model, a cluster job only when one of its planned models runs in the
    job's process (its section's ``backend``, with the model's overrides: an ``asks_llm`` system's), else it
    runs where Snakemake runs; its score and ensemble rules are light rules. ``resources`` is how a job of
    ``rule`` picks its ``experiments.resources`` row: ``model_kind``, its model's kind's row (``tfidf``,
    ``gbm``, ``frozen``, ``encoder`` or ``encoder_large``), or a sized row of a causal LM (``llm``,
    ``lora``: ``<row>_large`` for a large model), ``server`` instead when its backend calls a server.

    A system with a runner of its own names it (``runner``: ``"package.module:run"``, a :data:`Runner`) and its
    options class (``options_class``, derived from :class:`CliniFactRunnerOptions`), both imported only when
    asked, and leaves ``options``, ``rule`` and ``score_rule`` to the generic ones: its runs are the generic
    rule's jobs (:data:`SYSTEM_RULE`, a training rule: ``placement`` ``compute``; no ensembles, no inner
    cross-validation), in the folder ``<experiments>/clinifact/<name>``, its section is
    ``experiments.clinifact.<name>`` unless ``section`` names another, and the plan adds to its options the
    paths it asks for: ``cache`` (its options' ``cache_dir``, ``<cache_dir>/<cache>`` where its section's is
    null or absent) and ``save_dir`` (``<experiments.checkpoint_dir>/clinifact/<name>/<model>``)."""

    name: str
    title: str
    options: str | None = None
    section: str = ""
    rule: str = SYSTEM_RULE
    score_rule: str = SYSTEM_SCORE_RULE
    folder: str = ""
    suffix: str = ""
    ensemble_rule: str | None = None
    inner_cv_rule: str | None = None
    inputs: str = "clinifact_split_inputs"
    asks_llm: bool = False
    placement: Literal["compute", "model"] = "compute"
    resources: str = "model_kind"
    runner: str | None = None
    options_class: str | None = None
    cache: str | None = None
    save_dir: bool = False

    def __post_init__(self) -> None:
        where = f"CliniFact system {self.name!r}"
        generic = {self.rule, self.score_rule} & {SYSTEM_RULE, SYSTEM_SCORE_RULE}
        if self.runner is None:
            if self.options is None or not self.section or generic:
                raise ValueError(f"{where}: a system without a runner names its options method, its section, its rule and its score rule")
            if self.options_class or self.cache or self.save_dir:
                raise ValueError(f"{where}: options_class, cache and save_dir are a runner's (its options method builds the rest)")
            return
        problems = [text for bad, text in (
            (not self.options_class, "names its options class (options_class)"),
            (self.options is not None, "has its options built by the generic method (options: None)"),
            ((self.rule, self.score_rule) != (SYSTEM_RULE, SYSTEM_SCORE_RULE), f"runs through the rules {SYSTEM_RULE} and {SYSTEM_SCORE_RULE}"),
            (self.placement != "compute", "is placed compute (the generic rule is a training rule)"),
            (bool(self.ensemble_rule or self.inner_cv_rule), "runs no ensembles and no inner cross-validation"),
            (self.folder not in ("", self.name), f"writes its runs in the folder {self.name!r}"),
        ) if bad]
        if problems:
            raise ValueError(f"{where}: a system with a runner of its own " + "; ".join(problems))
        object.__setattr__(self, "folder", self.name)
        object.__setattr__(self, "section", self.section or self.name)

    @property
    def models_key(self) -> str:
        """Its model list in the config."""
        return f"models.clinifact.{self.name}"

    @property
    def overrides(self) -> str:
        """``experiments.clinifact.<overrides>``: one model's keys over ``section``."""
        return f"model_{self.section}"

    def run_dir(self, experiments: str, model: str) -> str:
        """One run's folder: ``<experiments>/clinifact[/<folder>]/<model>``."""
        return "/".join(part for part in (f"{experiments}/clinifact", self.folder, model) if part)

    def run_spec(self) -> str:
        """Its runner's ``"package.module:run"`` (a system with a runner of its own)."""
        if self.runner is None:
            raise ValueError(f"the CliniFact system {self.name!r} has no runner: its rule {self.rule} runs its own step")
        return self.runner

    def run_function(self) -> Runner:
        """Its runner, imported now."""
        return load(self.run_spec())

    def options_type(self) -> type[CliniFactRunnerOptions]:
        """Its runner's options class, imported now."""
        if self.options_class is None:
            raise ValueError(f"the CliniFact system {self.name!r} has no runner, so no runner's options class")
        cls = load(self.options_class)
        if not (isinstance(cls, type) and issubclass(cls, CliniFactRunnerOptions)):
            raise ValueError(f"{self.options_class}: a runner's options class derives from CliniFactRunnerOptions")
        return cls


CLINIFACT_SYSTEMS: dict[str, CliniFactSystem] = {
    s.name: s for s in (
        CliniFactSystem("discriminative", options="clinifact_experiment_options", section="train", rule="clinifact_experiment",
                        score_rule="clinifact_score", title="discriminative", ensemble_rule="clinifact_ensemble",
                        inner_cv_rule="clinifact_inner_cv"),
        CliniFactSystem("zero_shot", options="clinifact_zero_shot_options", section="zero_shot", rule="clinifact_zero_shot",
                        score_rule="clinifact_zero_shot_score", title="zero-shot", folder="zero_shot", suffix=" (zero-shot)",
                        inputs="clinifact_zero_shot_inputs", asks_llm=True, placement="model", resources="llm"),
        CliniFactSystem("fine_tuned", options="clinifact_fine_tune_options", section="fine_tune", rule="clinifact_fine_tune",
                        score_rule="clinifact_fine_tune_score", title="fine-tuned", folder="fine_tuned", suffix=" (fine-tuned)",
                        resources="lora"),
    )
}

CLINIFACT_SYSTEM_NAMES = tuple(CLINIFACT_SYSTEMS)  # in the order of the run matrix and the tables' rows
DEFAULT_SYSTEM = "discriminative"  # the system of an entry or a paper's row that names none


def clinifact_system(name: str) -> CliniFactSystem:
    """The system called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(CLINIFACT_SYSTEMS, name, "CliniFact system")


def ensembling_system() -> CliniFactSystem:
    """The system whose models may be ensembles (the one record with an ``ensemble_rule``)."""
    found = [s for s in CLINIFACT_SYSTEMS.values() if s.ensemble_rule]
    if len(found) != 1:
        raise ValueError(f"{len(found)} CliniFact systems run ensembles; the ensemble rules' paths have room for one")
    return found[0]


def row_suffixes() -> dict[str, str]:
    """system → what its rows add to the model's alias (the systems whose rows add something)."""
    return {s.name: s.suffix for s in CLINIFACT_SYSTEMS.values() if s.suffix}


def system_of_row(row: str) -> str:
    """The system of a table row named ``row`` (a paper's row, ``Llama3-70B (fine-tuned)``): the first system
    whose suffix (without its leading space) it contains, else :data:`DEFAULT_SYSTEM`."""
    return next((name for name, suffix in row_suffixes().items() if suffix.strip() in row), DEFAULT_SYSTEM)


def runner_systems() -> list[CliniFactSystem]:
    """The systems with a runner of their own (the generic rules' jobs), in the registry's order."""
    return [s for s in CLINIFACT_SYSTEMS.values() if s.runner is not None]


def wildcard_pattern() -> str:
    """The regular expression of the generic rules' ``{system}`` wildcard: the names of :func:`runner_systems`,
    or a pattern that matches nothing while there are none (the rules are there, with no jobs)."""
    return "|".join(re.escape(s.name) for s in runner_systems()) or "(?!)"


def runner_of(name: str) -> str:
    """The runner (``"package.module:run"``) of the system called ``name``: the generic rule's jobs' step
    version covers its code (:func:`medfc.common.codeversion.versioned`)."""
    return clinifact_system(name).run_spec()


def record_of_rule(rule: str, system: str | None = None) -> CliniFactSystem | None:
    """The record whose jobs ``rule`` runs or scores: the system ``system`` for the generic rules (their jobs'
    ``{system}``), else the record that names ``rule`` (None: no system's rule)."""
    if rule in (SYSTEM_RULE, SYSTEM_SCORE_RULE):
        if system is None:
            raise ValueError(f"{rule} runs every system with a runner of its own: name the job's system")
        return clinifact_system(system)
    return next((s for s in CLINIFACT_SYSTEMS.values() if rule in (s.rule, s.score_rule)), None)


# the generic step's system (one with a runner, read from the registry when its options are built) and its options
RunnerSystemName = Annotated[str, OneOf(lambda: [s.name for s in runner_systems()])]
RunnerOptions = Annotated[CliniFactRunnerOptions, Tagged("system", choose=lambda name: clinifact_system(name).options_type())]


@dataclass(frozen=True)
class CliniFactSystemOptions(Options):
    """The options of the generic step (``experiments.steps:clinifact_system``): the system, one of
    :func:`runner_systems`, and its runner's options, of the class its record names."""

    system: RunnerSystemName
    options: RunnerOptions
