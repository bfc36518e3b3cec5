"""The plan's jobs: each rule's record (:class:`JobSpec`), attached by the decorator :func:`job` to the function of
the plan that builds one of its jobs' options and carries its name. A record says where the rule's jobs run
(``placement``), which functions build one job's config-dependent inputs, prompts and resources, and which jobs
the config plans.

The rules name that function: ``params: options=PLAN.options_of(HealthFCPlan.healthfc_experiment)``,
``input: unpack(PLAN.inputs_of(...))``, ``prompts=PLAN.prompts_of(...)``, ``threads: PLAN.threads_of(...)`` and
``resources: **PLAN.resources_of(...)``, so an editor goes from a rule to its function in one step, and from
there to the record's other functions in one more. :func:`medfc.plan.run.job_specs` collects every record;
:meth:`medfc.plan.Plan.build_jobs` is one loop over them and their planned jobs (:func:`build_all`), so a config
mistake that only a job's options find stops the plan before Snakemake builds its DAG.

A job's function builds its options: the typed object itself, or the config's mapping that the record's
``options_class`` (the class its rule's step is annotated with, ``tests/unit/plan/test_jobs.py``) types
(:func:`typed_options`). :meth:`medfc.plan.Plan.job_options` keeps that object; the rule's ``options`` param is it
serialised once (:meth:`~medfc.common.options.Options.to_mapping` with sorted keys, what Snakemake compares between
runs), from which the job builds the same object again (:func:`medfc.cli.step_arguments`). A light module (no
torch, no pandas): the workflow reads it when it plans the DAG.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from medfc.common.options import Options

Wildcards = Mapping[str, str]
Config = dict[str, Any]  # a validated config, its defaults filled in
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


def parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    """The names ``function`` takes after its first (the plan, or its part): the wildcards it reads, and ``rule``."""
    return _parameters(getattr(function, "__func__", function))


@functools.cache
def _parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    return tuple(inspect.signature(function).parameters)[1:]


def invoke(function: Callable[..., Any], part: object, wildcards: Wildcards, rule: str) -> Any:
    """``function(part, **its wildcards)``: each parameter after the first is the job's wildcard of that name
    (``rule``: the job's rule; ``wildcards``: all of them)."""
    given = {"rule": rule, "wildcards": wildcards}
    return function(part, **{name: given[name] if name in given else wildcards[name] for name in parameters(function)})


def one_job(when: Callable[[JobPlan], bool]) -> Planned:
    """A rule without wildcards: its one job, when ``when(plan)``."""
    return lambda plan: [{}] if when(plan) else []


def always(plan: JobPlan) -> bool:
    return True


@dataclass(frozen=True)
class JobSpec:
    """One rule's jobs, attached by :func:`job` to the plan's function that builds one job's options, whose name is
    the rule's (the rule names that function: ``PLAN.options_of(HealthFCPlan.healthfc_experiment)``). It takes
    the wildcards it reads by name; so do ``inputs`` (the inputs that depend on the config: the rule's
    ``unpack``), ``prompts`` (``{prompt: sha256}`` of the prompts its jobs read) and ``resources``
    (``{gpu, threads, mem_mb, runtime}``), each called on the same part of the plan. ``planned``: the wildcards of
    each job the config plans, whose inputs, options and prompts :meth:`medfc.plan.Plan.build_jobs` builds before
    the DAG (``checked`` False: options that read no config, such as the software a run records, are built only
    when Snakemake plans the job). ``options_class``: the class of its step's options, which types what the
    function builds when that is a mapping (None: it builds the typed object itself, or the step takes a plain
    mapping). ``placement``: where a cluster run runs its jobs (:mod:`medfc.plan.cluster`): ``compute`` (training,
    always a cluster job), ``model`` (a cluster job when ``local_model(config)`` says one of its models runs in
    the job's own process, else where Snakemake runs), ``network`` (it calls the network: where Snakemake runs
    unless the compute nodes are online) or ``light`` (seconds of work, where Snakemake runs)."""

    function: Callable[..., Any]
    placement: Placement
    planned: Planned
    options_class: OptionsClass | None = None
    inputs: Callable[..., Any] | None = None
    prompts: Callable[..., Any] | None = None
    resources: Callable[..., dict[str, int]] | None = None
    checked: bool = True
    local_model: Callable[[Config], bool] | None = None

    def __post_init__(self) -> None:
        if (self.placement == "model") != (self.local_model is not None):
            raise ValueError(f"{self.rule}: a rule placed 'model', and only such a rule, says whether it runs a local model (local_model)")

    @property
    def rule(self) -> str:
        return self.function.__name__


F = TypeVar("F", bound=Callable[..., Any])


def job(placement: Placement, planned: Planned, **facets: Any) -> Callable[[F], F]:
    """Declares the decorated function (of a part of the plan, or of the whole plan) the builder of one job's options
    of the rule of its name, with that rule's :class:`JobSpec` (``placement``, ``planned`` and its other fields)."""
    def declare(function: F) -> F:
        function.job = JobSpec(function, placement, planned, **facets)  # type: ignore[attr-defined]
        return function
    return declare


def spec_of(function: Callable[..., Any]) -> JobSpec:
    """The record :func:`job` attached to ``function``; a function without one is a ValueError naming it."""
    spec = getattr(function, "job", None)
    if not isinstance(spec, JobSpec):
        raise ValueError(f"{getattr(function, '__qualname__', function)} builds no job's options (medfc.plan.jobs.job)")
    return spec


def specs_of(*holders: object) -> list[JobSpec]:
    """The records of the functions of ``holders`` (classes, modules), in their order and each one's definition order."""
    return [v.job for holder in holders for v in vars(holder).values() if isinstance(getattr(v, "job", None), JobSpec)]


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


def build(plan: JobPlan, spec: JobSpec, facet: str, wildcards: Wildcards | None = None) -> Any:
    """One job's ``facet`` (``options``: its function's; ``inputs``, ``prompts``, ``resources``) from its rule's record:
    {} where it has none."""
    fn = spec.function if facet == "options" else getattr(spec, facet)
    return {} if fn is None else invoke(fn, plan.part_for(spec.function), wildcard_dict(wildcards), spec.rule)


def typed_options(plan: JobPlan, spec: JobSpec, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]:
    """One job's options as its step takes them: what the record's function builds, typed by its
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
    if spec is None or spec.resources is None:
        covered = [s.rule for s in table.values() if s.resources is not None]
        raise ValueError(f"{rule} has fixed resources in its rule (medfc.plan.jobs: {', '.join(covered)} ask the plan)")
    return build(plan, spec, "resources", wildcards)


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
        build(plan, spec, "inputs", wildcards)
        build(plan, spec, "prompts", wildcards)
