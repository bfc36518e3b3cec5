"""The plan as a table of job specs: one small record (:class:`JobSpec`) per rule of the workflow: its wildcard
axes, where its jobs run (``placement``), the functions that build one job's config-dependent inputs, options,
prompts and resources from its wildcards, and which jobs of it the config plans.

Each stage declares its rules' records beside the functions they name (:func:`medfc.plan.datasets.dataset_jobs`,
:func:`medfc.plan.experiments.experiment_jobs`, :func:`medfc.plan.tables.report_jobs`,
:func:`medfc.plan.medsnip.medsnip_jobs`); :func:`medfc.plan.table.job_specs` is the whole table, which a
:class:`medfc.plan.Plan` builds once. The rules ask it through the plan's entry points:
``params: options=lambda w: PLAN.options("<rule>", w)``, ``input: unpack(lambda w: PLAN.inputs("<rule>", w))``,
``prompts=lambda w: PLAN.prompts("<rule>", w)`` and ``threads:`` / ``resources:`` through
``PLAN.job_resources("<rule>", w)``: the rule's record names the function, by reference (:func:`call`), so an
editor goes from the record to the code in one step. :meth:`medfc.plan.Plan.build_jobs` is one loop over the
table and its planned jobs (:func:`build_all`), so a config mistake that only a job's options find stops the plan
before Snakemake builds its DAG.

A record's ``options`` builds one job's options: the typed object itself, or the config's mapping that its
``options_class`` (the class its rule's step is annotated with, ``tests/unit/plan/test_jobs.py``) types
(:func:`typed_options`). :meth:`medfc.plan.Plan.job_options` keeps that object; the rule's ``options`` param is it
serialised once (:meth:`~medfc.common.options.Options.to_mapping` with sorted keys, what Snakemake compares between
runs), from which the job builds the same object again (:func:`medfc.cli.step_arguments`; a test keeps the two
equal for every planned job of the shipped configs). A light module (no torch, no pandas): the workflow reads it
when it plans the DAG.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from medfc.common.options import Options

Wildcards = Mapping[str, str]
Config = dict[str, Any]  # a validated config, its defaults filled in
Build = Callable[[Any, Wildcards], Any]  # (the plan, one job's wildcards) → its inputs, options, prompts or resources
Planned = Callable[[Any], Iterable[dict[str, str]]]  # the plan → the wildcards of each job of the rule it plans
OptionsClass = type[Options] | Callable[[Wildcards], type[Options]]  # a rule's options class, or one job's from its wildcards
Placement = Literal["compute", "model", "network", "light"]  # where a rule's jobs run on a cluster (medfc.plan.cluster)


class JobPlan(Protocol):
    """The plan (:class:`medfc.plan.Plan`) as the modules below it name it: every function of the job table is
    handed the whole plan; typed here by its config and the options it keeps per job, so that no module of the
    table imports the class built from it."""

    config: Config

    def spec_options(self, spec: JobSpec, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]: ...

    def part_for(self, function: Callable[..., Any]) -> Any: ...


@dataclass(frozen=True)
class PlanCall:
    """``function(part, *args, *(wildcards[a] for a in axes))``: ``function`` a method of one of the plan's parts (called on
    that part), or a function of the whole plan (called on it)."""

    function: Callable[..., Any]
    axes: tuple[str, ...] = ()
    args: tuple[object, ...] = ()

    def __call__(self, plan: JobPlan, wildcards: Wildcards) -> Any:
        return self.function(plan.part_for(self.function), *self.args, *(wildcards[a] for a in self.axes))


def call(function: Callable[..., Any], *axes: str, args: tuple[object, ...] = ()) -> PlanCall:
    """A record's builder: ``function`` called with the plan, ``args``, then the job's wildcards named by ``axes``."""
    return PlanCall(function, axes, args)


def one_job(when: Callable[[JobPlan], bool]) -> Planned:
    """A rule without wildcards: its one job, when ``when(plan)``."""
    return lambda plan: [{}] if when(plan) else []


def always(plan: JobPlan) -> bool:
    return True


def no_options(plan: JobPlan) -> dict[str, object]:
    """The options of a rule whose step reads none."""
    return {}


def section(*keys: str) -> PlanCall:
    """A record's ``options``: the config's section at ``keys`` as it stands (``section("clinifact", "claims")``)."""
    return call(config_section, args=keys)


def config_section(plan: JobPlan, *keys: str) -> object:
    node: object = plan.config
    for key in keys:
        node = node[key]  # type: ignore[index]
    return node


@dataclass(frozen=True)
class JobSpec:
    """One rule's jobs. ``wildcards``: the rule's wildcards, in its paths' order; ``options``, ``inputs``
    (the inputs that depend on the config: the rule's ``unpack``), ``prompts`` (``{prompt: sha256}`` of the
    prompts its jobs read) and ``resources`` (``{gpu, threads, mem_mb, runtime}``: None where its rule fixes
    them) each build one job's from its wildcards. ``planned``: the wildcards of each job the config plans,
    whose inputs, options and prompts :meth:`medfc.plan.Plan.build_jobs` builds before the DAG (``checked``
    False: options that read no config, such as the software a run records, are built only when Snakemake
    plans the job). ``options_class``: the class of its step's options, which types what ``options`` builds when
    that is a mapping (None: ``options`` builds the typed object itself, or the step takes a plain mapping).
    ``placement``: where a cluster run runs its jobs (:mod:`medfc.plan.cluster`): ``compute`` (training, always a
    cluster job), ``model`` (a cluster job when ``local_model(config)`` says one of its models runs in the job's
    own process, else where Snakemake runs), ``network`` (it calls the network: where Snakemake runs unless the
    compute nodes are online) or ``light`` (seconds of work, where Snakemake runs)."""

    rule: str
    placement: Placement
    wildcards: tuple[str, ...] = ()
    options: Build | None = None
    options_class: OptionsClass | None = None
    inputs: Build | None = None
    prompts: Build | None = None
    resources: Build | None = None
    planned: Planned = lambda plan: []
    checked: bool = True
    local_model: Callable[[Config], bool] | None = None

    def __post_init__(self) -> None:
        if (self.placement == "model") != (self.local_model is not None):
            raise ValueError(f"{self.rule}: a rule placed 'model', and only such a rule, says whether it runs a local model (local_model)")


def unique(jobs: Iterable[Mapping[str, object]]) -> list[dict[str, str]]:
    """Each job's wildcards once, as Snakemake gives them (strings), in order."""
    seen: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    for job in jobs:
        w = {k: str(v) for k, v in job.items()}
        seen.setdefault(tuple(w.items()), w)
    return list(seen.values())


def wildcard_dict(wildcards: Wildcards | None) -> dict[str, str]:
    """A Snakemake ``Wildcards``, a mapping or None, as a dict of the wildcards' names and values."""
    if wildcards is None:
        return {}
    return dict(wildcards.items())


def table_of(specs: Iterable[JobSpec]) -> dict[str, JobSpec]:
    """rule → its record; a rule declared twice is a ValueError."""
    specs = list(specs)
    table = {s.rule: s for s in specs}
    if len(table) != len(specs):
        raise ValueError(f"rules declared twice in the job table: {sorted({s.rule for s in specs if sum(t.rule == s.rule for t in specs) > 1})}")
    return table


def job_spec(table: Mapping[str, JobSpec], rule: str) -> JobSpec:
    try:
        return table[rule]
    except KeyError:
        raise ValueError(f"{rule} is not a rule of the plan's job table (medfc.plan.jobs)") from None


def build(plan: JobPlan, spec: JobSpec, part: str, wildcards: Wildcards | None = None) -> Any:
    """One job's ``part`` (``options``, ``inputs``, ``prompts``) from its rule's record: {} where it has none."""
    fn = getattr(spec, part)
    return {} if fn is None else fn(plan, wildcard_dict(wildcards))


def typed_options(plan: JobPlan, spec: JobSpec, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]:
    """One job's options as its step takes them: what the record's ``options`` builds, typed by its
    ``options_class`` when that is a mapping (a missing, unknown or mistyped key: the OptionsError naming it)."""
    w = wildcard_dict(wildcards)
    built = build(plan, spec, "options", w)
    cls = spec.options_class
    if isinstance(built, Options) or cls is None:
        return built
    if not isinstance(cls, type):
        cls = cls(w)
    return cls.from_mapping(built, where=f"{spec.rule}[{', '.join(f'{k}={v}' for k, v in w.items())}]" if w else spec.rule)


def serialised(options: Options | Mapping[str, object]) -> dict[str, object]:
    """A job's options as its rule's ``options`` param: the typed object's mapping with sorted keys (JSON-like:
    what the job builds the same object from, and what Snakemake compares with the last run's)."""
    return options.to_mapping(sort_keys=True) if isinstance(options, Options) else dict(options)


def job_resources(plan: JobPlan, table: Mapping[str, JobSpec], rule: str, wildcards: Wildcards | None = None) -> dict[str, int]:
    """``{gpu, threads, mem_mb, runtime}`` of one job of ``rule``, from its record."""
    spec = table.get(rule)
    fn = spec.resources if spec is not None else None
    if fn is None:
        covered = [s.rule for s in table.values() if s.resources is not None]
        raise ValueError(f"{rule} has fixed resources in its rule (medfc.plan.jobs: {', '.join(covered)} ask the plan)")
    return fn(plan, wildcard_dict(wildcards))


def planned_jobs(plan: JobPlan, table: Mapping[str, JobSpec]) -> Iterable[tuple[JobSpec, dict[str, str]]]:
    """(record, wildcards) of every job the config plans, rule by rule in the table's order."""
    for spec in table.values():
        if spec.checked:
            for wildcards in spec.planned(plan):
                yield spec, wildcards


def build_all(plan: JobPlan, table: Mapping[str, JobSpec]) -> None:
    """Build, once, every planned job's inputs, typed options and prompts (each record's ``planned`` jobs;
    the plan keeps the options, :meth:`medfc.plan.Plan.job_options`)."""
    for spec, wildcards in planned_jobs(plan, table):
        plan.spec_options(spec, wildcards)
        for fn in (spec.inputs, spec.prompts):
            if fn is not None:
                fn(plan, wildcards)
