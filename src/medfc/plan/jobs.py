"""The plan's jobs: each rule's record (:class:`JobSpec`), attached by the decorator :func:`job` to the function of
the plan that builds one of its jobs' options and carries the rule's name. The rules name that function
(``params: options=PLAN.options_of(HealthFCPlan.healthfc_experiment)``, ``unpack(PLAN.inputs_of(...))``, ...), so an
editor goes from a rule to its function, and from there to its record, in one step each. The functions live in the
plan's parts (:class:`Part`), each reading the others' and the plan's through the plan.

A job's function builds its options: the typed object itself, or a mapping that the record's ``options_class``
types (:func:`typed_options`); the rule's ``options`` param is that object serialised (``Plan.options``), from
which the job builds the same object again. A light module (no torch, no pandas)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from medfc.common.options import Options
from medfc.plan.layout import Layout

Wildcards = Mapping[str, str]
Config = dict[str, Any]  # a validated config, its defaults filled in
JobPlan = Any  # a medfc.plan.Plan (not imported: it is built from the modules that name it)
Planned = Callable[[Any], Iterable[dict[str, str]]]  # the plan → the wildcards of each job of the rule it plans
OptionsClass = type[Options] | Callable[[Wildcards], type[Options]]  # a rule's options class, or one job's from its wildcards
Placement = Literal["compute", "model", "network", "light"]  # where a rule's jobs run on a cluster (medfc.plan.cluster)
#: the plan's attributes holding its parts (:class:`Part`), in the order it builds them
PARTS = ("models", "datasets", "healthfc", "experiments", "tables", "examples", "medsnip", "run")


@functools.cache
def parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    """The names ``function`` takes after its first (the plan, or its part): the wildcards it reads, and ``rule``."""
    return tuple(inspect.signature(getattr(function, "__func__", function)).parameters)[1:]


def one_job(when: Callable[[JobPlan], bool]) -> Planned:
    """A rule without wildcards: its one job, when ``when(plan)``."""
    return lambda plan: [{}] if when(plan) else []


@dataclass(frozen=True)
class JobSpec:
    """One rule's jobs. ``function`` builds one job's options and names the rule; it takes the wildcards it reads by
    name, and so do ``inputs`` (the rule's ``unpack``), ``prompts`` (``{prompt: sha256}``) and ``resources``
    (``{gpu, threads, mem_mb, runtime}``), each called on the same part of the plan. ``planned``: the wildcards of
    each job the config plans, built before the DAG (``checked`` False: only when Snakemake plans the job).
    ``options_class`` types what the function builds when that is a mapping. ``placement`` (:mod:`medfc.plan.cluster`):
    ``compute`` (always a cluster job), ``model`` (a cluster job when ``local_model(config)``), ``network`` (where
    Snakemake runs unless the compute nodes are online) or ``light`` (where Snakemake runs)."""

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
            raise ValueError(f"{self.rule}: a rule placed 'model', and only such a rule, says whether it runs a local "
                             "model (local_model)")

    @property
    def rule(self) -> str:
        return self.function.__name__


F = TypeVar("F", bound=Callable[..., Any])


def job(placement: Placement, planned: Planned, **facets: Any) -> Callable[[F], F]:
    """Declares the decorated function the builder of one job's options of the rule of its name (a :class:`JobSpec`)."""
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


def unique(jobs: Iterable[Mapping[str, object]]) -> list[dict[str, str]]:
    """Each job's wildcards once, as Snakemake gives them (strings), in order."""
    strings = [{k: str(v) for k, v in job.items()} for job in jobs]
    return list({tuple(w.items()): w for w in strings}.values())


def wildcard_dict(wildcards: Wildcards | None) -> dict[str, str]:
    """A Snakemake ``Wildcards``, a mapping or None, as a dict."""
    return {} if wildcards is None else dict(wildcards.items())


def build(plan: JobPlan, spec: JobSpec, facet: str, wildcards: Wildcards | None = None) -> Any:
    """One job's ``facet`` (``options``: its function's; ``inputs``, ``prompts``, ``resources``): {} where it has none.
    The function takes the job's wildcards by name (``rule``: the job's rule; ``wildcards``: all of them), called on
    the part whose class holds the rule's function (else on the plan itself)."""
    fn = spec.function if facet == "options" else getattr(spec, facet)
    if fn is None:
        return {}
    w = wildcard_dict(wildcards)
    given = {**w, "rule": spec.rule, "wildcards": w}
    parts = (getattr(plan, name) for name in PARTS)
    part = next((p for p in parts if getattr(type(p), spec.rule, None) is spec.function), plan)
    return fn(part, **{name: given[name] for name in parameters(fn)})


def typed_options(plan: JobPlan, spec: JobSpec, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]:
    """One job's options as its step takes them: what the function builds, typed by ``options_class`` when that is a
    mapping (a missing, unknown or mistyped key: the OptionsError naming it)."""
    w = wildcard_dict(wildcards)
    built = build(plan, spec, "options", w)
    cls = spec.options_class
    if isinstance(built, Options) or cls is None:
        return built
    if not isinstance(cls, type):
        cls = cls(w)
    return cls.from_mapping(built, where=f"{spec.rule}[{', '.join(f'{k}={v}' for k, v in w.items())}]" if w else spec.rule)


class Part:
    """One part of a plan: it reads the others and the plan through the plan (``self.models.model_name(...)``)."""

    def __init__(self, plan: JobPlan) -> None:
        self.plan = plan
        self.config: Config = plan.config
        self.layout: Layout = plan.layout

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "plan":
            raise AttributeError(name)
        return getattr(self.plan, name)

    def papers_inputs(self) -> dict[str, str]:
        """The inputs of a job that reads only the papers' numbers (its table or statistics put ours beside them)."""
        return {"papers": self.models.papers}
