"""What the workflow runs, planned from the validated config: pure functions of the config dict, no
Snakemake (workflow/rules/common.smk builds one :class:`Plan` and the rules call it).

A :class:`Plan` gives the targets of ``rule all``, the run matrix of every table (HealthFC: lang × model ×
system × fold; CliniFact: model × system), each job's input files that depend on the config and each
job's fully built step options: every layering of training configs (``train`` < ``model_train`` <
``system_train`` < ``smoke``; the pipeline's selector < ``evidence_train`` < ``smoke``) is done here, once.
A rule names the plan's function of its name, which carries its record (:mod:`medfc.plan.jobs`):
``PLAN.options_of(HealthFCPlan.healthfc_experiment)``, ``inputs_of``, ``prompts_of``, ``threads_of`` and
``resources_of``; by rule name, ``Plan.options(rule, wildcards)``, ``Plan.inputs``, ``Plan.prompts`` and
``Plan.job_resources`` give the same (:attr:`Plan.job_table`: every record, built once). :func:`medfc.plan.checks.check_plan` runs the plan's checks,
in one order, the last of which builds every planned job's options once
(:meth:`Plan.build_jobs`, one loop over the table), so that a mistake found while building them stops the run at once;
:func:`medfc.plan.config_errors.plan_for` is the one entry point (schema, defaults, plan, checks), each mistake
one line naming the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, TypeVar

from medfc.common.options import Options
from medfc.medsnip.sources import answer_source
from medfc.plan import cluster, jobs, prerequisites
from medfc.plan.datasets import DatasetsPlan
from medfc.plan.examples import ExamplesPlan
from medfc.plan.experiments import HEALTHFC_WILDCARDS, ExperimentsPlan, HealthFCPlan
from medfc.plan.jobs import Config, JobSpec, Wildcards
from medfc.plan.layout import PAPERS, Layout
from medfc.plan.medsnip import MEDSNIP_TITLES, MEDSNIP_WILDCARDS, MedsnipPlan
from medfc.plan.models import ModelsPlan, layered
from medfc.plan.part import PARTS
from medfc.plan.run import RunPlan, job_specs
from medfc.plan.tables import TABLES, TablesPlan

__all__ = ["HEALTHFC_WILDCARDS", "MEDSNIP_TITLES", "MEDSNIP_WILDCARDS", "PAPERS", "TABLES", "JobSpec", "Layout", "Plan", "job_specs",
           "layered"]

T = TypeVar("T")


class Plan:
    """The plan of one validated config (``config`` is read, never changed), in parts (:mod:`medfc.plan.part`):
    ``models``, ``datasets``, ``healthfc`` (HealthFC's experiments), ``experiments`` (the pairs datasets', the
    ensembles' and the final models), ``tables``, ``examples`` and ``medsnip``."""

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

    def part_for(self, function: Callable[..., object]) -> object:
        """The part whose class holds ``function`` (a record names ``HealthFCPlan.healthfc_runs``), else the plan itself
        (a function of the whole plan)."""
        parts = (getattr(self, name) for name in PARTS)
        return next((part for part in parts if getattr(type(part), getattr(function, "__name__", ""), None) is function), self)

    def stage_enabled(self, name: str) -> bool:
        return bool(self.config["stages"].get(name, False))

    @cached_property
    def job_table(self) -> dict[str, JobSpec]:
        """rule → its record (:func:`medfc.plan.run.job_specs`), built once per plan."""
        return job_specs()

    def job_spec(self, rule: str) -> JobSpec:
        """One rule's record; a rule not in the table is a ValueError naming it."""
        return jobs.job_spec(self.job_table, rule)

    def local_rules(self) -> list[str]:
        """The rules a cluster run keeps where Snakemake runs (:mod:`medfc.plan.cluster`)."""
        return cluster.local_rules(self.config)

    # ------------------------------------------------------------------------------------- jobs
    # what the rules ask, each naming the plan's function that builds its jobs' options (medfc.plan.jobs.job)
    def options_of(self, function: Callable[..., object]) -> Callable[[Wildcards], dict[str, object]]:
        """A rule's ``options`` param: each job's :meth:`options`."""
        rule = jobs.spec_of(function).rule
        return lambda w: self.options(rule, w)

    def inputs_of(self, function: Callable[..., object]) -> Callable[[Wildcards], Any]:
        """A rule's ``unpack``: each job's :meth:`inputs`."""
        rule = jobs.spec_of(function).rule
        return lambda w: self.inputs(rule, w)

    def prompts_of(self, function: Callable[..., object]) -> Callable[[Wildcards], dict[str, str]]:
        """A rule's ``prompts`` param: each job's :meth:`prompts`."""
        rule = jobs.spec_of(function).rule
        return lambda w: self.prompts(rule, w)

    def threads_of(self, function: Callable[..., object]) -> Callable[[Wildcards], int]:
        """A rule's ``threads``: each job's (:meth:`job_resources`)."""
        rule = jobs.spec_of(function).rule
        return lambda w: self.job_resources(rule, w)["threads"]

    def resources_of(self, function: Callable[..., object]) -> dict[str, Callable[[Wildcards], int]]:
        """A rule's ``resources`` (``**``): each job's ``mem_mb``, ``runtime`` and ``gpu`` (:meth:`job_resources`)."""
        rule = jobs.spec_of(function).rule
        return {key: (lambda w, key=key: self.job_resources(rule, w)[key]) for key in ("mem_mb", "runtime", "gpu")}

    def job_options(self, rule: str, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]:
        """One job's typed options (the object its step receives), built by its rule's record, once per rule and
        wildcards (:func:`medfc.plan.jobs.typed_options`)."""
        return self.spec_options(self.job_spec(rule), wildcards)

    def spec_options(self, spec: JobSpec, wildcards: Wildcards | None = None) -> Options | Mapping[str, object]:
        """:meth:`job_options` by the rule's record (``spec``), kept per rule and wildcards."""
        return self._per_job("_job_options", spec.rule, wildcards, lambda: jobs.typed_options(self, spec, wildcards))

    def _per_job(self, store: str, rule: str, wildcards: Wildcards | None, build: Callable[[], T]) -> T:
        """What ``build`` gives for one job of ``rule``, built once per rule and wildcards and kept in ``store``."""
        key = (rule, tuple(sorted(jobs.wildcard_dict(wildcards).items())))
        kept = self.__dict__.setdefault(store, {})
        if key not in kept:
            kept[key] = build()
        return kept[key]

    def planned_jobs(self) -> list[tuple[JobSpec, dict[str, str]]]:
        """(record, wildcards) of every job the config plans whose options read the config (:func:`medfc.plan.jobs.planned_jobs`)."""
        return list(jobs.planned_jobs(self, self.job_table))

    def options(self, rule: str, wildcards: Wildcards | None = None) -> dict[str, object]:
        """One job's options as its rule's ``options`` param: :meth:`job_options` serialised
        (:func:`medfc.plan.jobs.serialised`), which the job builds the same object from."""
        return jobs.serialised(self.job_options(rule, wildcards))

    def inputs(self, rule: str, wildcards: Wildcards | None = None) -> Any:
        """One job's inputs that depend on the config (the rule's ``unpack``), built by its rule's record."""
        return jobs.build(self, self.job_spec(rule), "inputs", wildcards)

    def prompts(self, rule: str, wildcards: Wildcards | None = None) -> dict[str, str]:
        """``{prompt: sha256}`` of the prompts one job reads (the rule's ``prompts`` param: editing one reruns it)."""
        return jobs.build(self, self.job_spec(rule), "prompts", wildcards)

    def job_resources(self, rule: str, wildcards: Wildcards | None = None) -> dict[str, int]:
        """One job's ``{gpu, threads, mem_mb, runtime}`` (its rule's record: by its model's kind and size,
        :mod:`medfc.plan.resources`), once per rule and wildcards: each rule's ``threads:`` and ``resources:`` ask for it."""
        return self._per_job("_job_resources", rule, wildcards, lambda: jobs.job_resources(self, self.job_table, rule, wildcards))

    def healthfc_data_planned(self) -> bool:
        """Whether the run builds the HealthFC dataset: its stage, a HealthFC experiment or MedSNIP on HealthFC."""
        return (self.stage_enabled("healthfc") or bool(self.stage_enabled("experiments") and self.healthfc.healthfc_runs())
                or (self.stage_enabled("medsnip") and any(answer_source(d).healthfc_dataset for d in self.medsnip.medsnip_datasets())))

    def clinifact_data_planned(self) -> bool:
        """Whether the run builds (or imports) the CliniFact pairs: its stage or a CliniFact experiment."""
        return self.stage_enabled("clinifact") or bool(self.stage_enabled("experiments") and self.experiments.clinifact_runs())

    def missing_prerequisites(self) -> list[str]:
        """What the planned rules need from outside the config and lack, one line each (:mod:`medfc.plan.prerequisites`)."""
        return prerequisites.missing_prerequisites(self)

    def cuda_problem(self) -> str | None:
        """A planned job set to ``device: cuda`` on a machine whose torch sees no CUDA (checked on a local run)."""
        return prerequisites.cuda_problem(self)

    # ---------------------------------------------------------------------------------- targets
    def targets(self) -> list[str]:
        """The files of ``rule all``."""
        targets: list[str] = []
        res = self.layout.under
        if self.stage_enabled("healthfc"):
            if self.datasets.healthfc_mode != "release":
                targets += [res("healthfc/parsed/report.json"), res("healthfc/translated/report.json")]
            targets += [res(f) for f in (
                "healthfc/dataset/dataset_card.md",
                "healthfc/dataset/README.md",
                "healthfc/folds/folds.csv",
                "healthfc/stats/table2.csv",
                "healthfc/stats/fig1_claims_per_year.png",
                "healthfc/stats/fig2_top_topics.png",
                "healthfc/stats/fig3_level_by_verdict.png",
            )]
            if self.datasets.healthfc_mode == "crawl+release":
                targets.append(res("healthfc/diff/diff.md"))
        if self.stage_enabled("clinifact"):
            stats = res("clinifact/stats")
            targets += [f"{stats}/table6_labels.csv", f"{stats}/table4_words.csv", f"{stats}/fig2_disease_classes.png", f"{stats}/figS1_years.png"]
            if self.config["clinifact"]["pairs_source"] == "rebuild":
                targets += [res("clinifact/pairs/dataset_card.md"), res("clinifact/pairs/README.md")]
            if self.datasets.clinifact_diff_enabled():
                targets.append(res("clinifact/diff/diff.md"))
        targets += self.datasets.dataset_targets()
        if self.stage_enabled("experiments"):
            targets += self.tables.experiment_targets()
        return targets + self.examples.example_targets() + self.medsnip.medsnip_targets() + [f"{self.layout.provenance}/software.yml", res("main.tex")]

    def named_targets(self) -> dict[str, list[str]]:
        """What users ask for by name (``snakemake --cores 4 datasets``, ``tables``, ``figures``): the rebuilt
        datasets (cards, folds, splits), every table (statistics, experiments, MedSNIP; CSV beside its Markdown
        and TeX) and every figure of :meth:`targets`."""
        res = self.layout.under
        datasets: list[str] = []
        if self.stage_enabled("healthfc"):
            datasets += [res("healthfc/dataset/dataset_card.md"), res("healthfc/dataset/README.md"), res("healthfc/folds/folds.csv")]
        if self.stage_enabled("clinifact") or self.stage_enabled("experiments"):
            datasets += [f"{self.experiments.clinifact_pairs_dir}/{s}_set.csv" for s in ("train", "validation", "test")]
            if self.config["clinifact"]["pairs_source"] == "rebuild":
                datasets.append(res("clinifact/pairs/dataset_card.md"))
            if self.stage_enabled("clinifact") and self.config["clinifact"]["pairs_source"] == "rebuild":
                datasets.append(res("clinifact/pairs/README.md"))
        datasets += self.datasets.dataset_targets()
        every = self.targets()
        figures = [t for t in every if t.endswith(".png")]
        tables = [t for t in every if t.endswith(".csv") and (t.startswith(f"{self.layout.tables}/") or "/stats/table" in t
                                                             or t.startswith(f"{self.layout.medsnip}/"))]
        return {"datasets": datasets, "tables": tables, "figures": figures}

    # ----------------------------------------------------------------------------------- checks
    def build_jobs(self) -> None:
        """Build, once, every planned job's config-dependent inputs, options and prompts, one loop over the job
        table (:func:`medfc.plan.jobs.build_all`), so that a mistake only they find stops the run here, as one line,
        not as a traceback while Snakemake builds its DAG. Raises the plan's ValueError naming the key."""
        jobs.build_all(self, self.job_table)
