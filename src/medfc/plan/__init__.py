"""What the workflow runs, planned from the validated config: pure functions of the config dict, no Snakemake
(workflow/rules/common.smk builds one :class:`Plan` and the rules call it).

A :class:`Plan` gives the wildcards of every planned job (``rule all`` fills each rule's outputs with them) and each
job's config-dependent inputs, prompts, resources and fully built options (every layering of training configs is
done here, once), through the plan's function a rule names (:mod:`medfc.plan.jobs`) or by rule name
(:meth:`Plan.options`, ...). :func:`medfc.config.validate.plan_for` is the one entry point (schema, defaults, plan,
checks)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property, partialmethod
from typing import Any, TypeVar

from medfc.common.options import Options
from medfc.medsnip.options import answer_source
from medfc.plan import cluster, jobs
from medfc.plan.datasets import DatasetsPlan
from medfc.plan.examples import ExamplesPlan
from medfc.plan.experiments import HEALTHFC_WILDCARDS, ExperimentsPlan, HealthFCPlan
from medfc.plan.jobs import Config, JobSpec, Wildcards
from medfc.plan.layout import Layout
from medfc.plan.medsnip import MEDSNIP_TITLES, MEDSNIP_WILDCARDS, MedsnipPlan
from medfc.plan.models import ModelsPlan
from medfc.plan.run import RunPlan, job_specs
from medfc.plan.tables import TABLES, TablesPlan

__all__ = ["HEALTHFC_WILDCARDS", "MEDSNIP_TITLES", "MEDSNIP_WILDCARDS", "TABLES", "Plan", "job_specs"]

T = TypeVar("T")


class Plan:
    """The plan of one validated config (read, never changed), in parts (:data:`medfc.plan.jobs.PARTS`)."""

    def __init__(self, config: Config, base_dir: str | None = None):
        """``base_dir``: the workflow's checkout, where its shipped files are when the run's directory lacks them."""
        self.config = config
        self.layout = Layout(config["results_dir"])
        self.models = ModelsPlan(self, base_dir)
        self.datasets = DatasetsPlan(self)
        self.healthfc = HealthFCPlan(self)
        self.experiments = ExperimentsPlan(self)
        self.tables = TablesPlan(self)
        self.examples = ExamplesPlan(self)
        self.medsnip = MedsnipPlan(self)
        self.run = RunPlan(self)

    def stage_enabled(self, name: str) -> bool:
        return bool(self.config["stages"].get(name, False))

    @cached_property
    def job_table(self) -> dict[str, JobSpec]:
        """rule → its record (:func:`medfc.plan.run.job_specs`), built once per plan."""
        return job_specs()

    def job_spec(self, rule: str) -> JobSpec:
        """One rule's record; a rule not in the table is a ValueError naming it."""
        try:
            return self.job_table[rule]
        except KeyError:
            raise ValueError(f"{rule} is not a rule of the plan's job table (medfc.plan.jobs)") from None

    def local_rules(self) -> list[str]:
        """The rules a cluster run keeps where Snakemake runs (:mod:`medfc.plan.cluster`)."""
        return cluster.local_rules(self.config)

    # ------------------------------------------------------------------------------------- jobs
    def _per_job_of(self, facet: str, function: Callable[..., object], key: str | None = None) -> Callable[..., Any]:
        """What a rule asks of each of its jobs (``facet``: :meth:`options`, :meth:`inputs`...; ``key``: one value of
        it), the rule named by the plan's function that builds its jobs' options (medfc.plan.jobs.job)."""
        rule, get = jobs.spec_of(function).rule, getattr(self, facet)
        return (lambda w: get(rule, w)) if key is None else (lambda w: get(rule, w)[key])

    options_of = partialmethod(_per_job_of, "options")
    inputs_of = partialmethod(_per_job_of, "inputs")
    prompts_of = partialmethod(_per_job_of, "prompts")
    threads_of = partialmethod(_per_job_of, "job_resources", key="threads")

    def resources_of(self, function: Callable[..., object]) -> dict[str, Callable[[Wildcards], int]]:
        """A rule's ``resources`` (``**``): each job's ``mem_mb``, ``runtime`` and ``gpu``."""
        return {key: self._per_job_of("job_resources", function, key) for key in ("mem_mb", "runtime", "gpu")}

    def job_options(self, rule: str, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]:
        """One job's typed options (the object its step receives), built once per rule and wildcards."""
        spec = self.job_spec(rule)
        return self._per_job("_job_options", rule, wildcards, lambda: jobs.typed_options(self, spec, wildcards))

    def _per_job(self, store: str, rule: str, wildcards: Wildcards | None, build: Callable[[], T]) -> T:
        """What ``build`` gives for one job of ``rule``, built once per rule and wildcards and kept in ``store``."""
        key = (rule, tuple(sorted(jobs.wildcard_dict(wildcards).items())))
        kept = self.__dict__.setdefault(store, {})
        if key not in kept:
            kept[key] = build()
        return kept[key]

    def planned_wildcards(self) -> dict[str, list[dict[str, str]]]:
        """rule → the wildcards of each of its planned jobs (``rule all`` fills the rule's outputs with them)."""
        return {rule: list(spec.planned(self)) for rule, spec in self.job_table.items()}

    def planned_jobs(self) -> list[tuple[JobSpec, dict[str, str]]]:
        """(record, wildcards) of every job the config plans whose options read the config, in the table's order."""
        table = self.job_table
        return [(table[rule], w) for rule, planned in self.planned_wildcards().items() if table[rule].checked
                for w in planned]

    def options(self, rule: str, wildcards: Wildcards | None = None) -> dict[str, object]:
        """One job's options as its rule's ``options`` param: :meth:`job_options` serialised, an options object's keys
        sorted (what Snakemake compares with the last run's)."""
        options = self.job_options(rule, wildcards)
        return options.to_mapping(sort_keys=True) if isinstance(options, Options) else dict(options)

    def inputs(self, rule: str, wildcards: Wildcards | None = None) -> Any:
        """One job's inputs that depend on the config (the rule's ``unpack``)."""
        return jobs.build(self, self.job_spec(rule), "inputs", wildcards)

    def prompts(self, rule: str, wildcards: Wildcards | None = None) -> dict[str, str]:
        """``{prompt: sha256}`` of the prompts one job reads (the rule's ``prompts`` param: editing one reruns it)."""
        return jobs.build(self, self.job_spec(rule), "prompts", wildcards)

    def job_resources(self, rule: str, wildcards: Wildcards | None = None) -> dict[str, int]:
        """One job's ``{gpu, threads, mem_mb, runtime}`` (:mod:`medfc.plan.resources`), once per rule and wildcards."""
        spec = self.job_table.get(rule)
        if spec is None or spec.resources is None:
            covered = [s.rule for s in self.job_table.values() if s.resources is not None]
            raise ValueError(f"{rule} has fixed resources in its rule (medfc.plan.jobs: {', '.join(covered)} ask the "
                             "plan)")
        return self._per_job("_job_resources", rule, wildcards, lambda: jobs.build(self, spec, "resources", wildcards))

    def healthfc_data_planned(self) -> bool:
        """Whether the run builds the HealthFC dataset: its stage, a HealthFC experiment or MedSNIP on HealthFC."""
        return (self.stage_enabled("healthfc") or bool(self.stage_enabled("experiments") and self.healthfc.healthfc_runs())
                or (self.stage_enabled("medsnip")
                    and any(answer_source(d).healthfc_dataset for d in self.medsnip.medsnip_datasets())))

    def clinifact_data_planned(self) -> bool:
        """Whether the run builds (or imports) the CliniFact pairs: its stage or a CliniFact experiment."""
        return self.stage_enabled("clinifact") or bool(self.stage_enabled("experiments") and self.experiments.clinifact_runs())

    # ----------------------------------------------------------------------------------- checks
    def build_jobs(self) -> None:
        """Build, once, every planned job's config-dependent inputs, options and prompts, so that a mistake only they
        find stops the run here, as one line, not while Snakemake builds its DAG."""
        for spec, wildcards in self.planned_jobs():
            self.job_options(spec.rule, wildcards)
            jobs.build(self, spec, "inputs", wildcards)
            jobs.build(self, spec, "prompts", wildcards)
