"""What the workflow runs, planned from the validated config: pure functions of the config dict, no
Snakemake (workflow/rules/common.smk builds one :class:`Plan` and the rules call it).

A :class:`Plan` gives the targets of ``rule all``, the run matrix of every table (HealthFC: lang × model ×
system × fold; CliniFact: model × system), each job's input files that depend on the config and each
job's fully built step options: every layering of training configs (``train`` < ``model_train`` <
``system_train`` < ``smoke``; the pipeline's selector < ``evidence_train`` < ``smoke``) is done here, once.
The rules ask for them through four entry points, ``Plan.options(rule, wildcards)``, ``Plan.inputs``,
``Plan.prompts`` and ``Plan.job_resources``, which look the rule up in the job table (:func:`job_specs`: each
stage's records, :mod:`medfc.plan.jobs`). :meth:`Plan.check` holds the checks across keys that the schema
cannot express, and builds every planned job's options once (:meth:`Plan.build_jobs`, one loop over the
table), so that a mistake found while building them stops the run at once;
:func:`medfc.plan.config_errors.plan_for` is the one entry point (schema, defaults, plan, checks), each mistake
one line naming the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from medfc.common import provenance
from medfc.common.run_index import IndexOptions
from medfc.common.options import Options
from medfc.experiments.aliases import ALIAS_HINT
from medfc.experiments.clinifact_systems import CLINIFACT_SYSTEMS
from medfc.experiments.models import MODEL_KINDS
from medfc.experiments.systems import EVIDENCE_SYSTEMS
from medfc.medsnip.sources import answer_source
from medfc.plan import cluster, jobs, prerequisites
from medfc.plan.datasets import DatasetsPlan, dataset_jobs
from medfc.plan.experiments import HEALTHFC_WILDCARDS, TABLES, ExperimentsPlan, did_you_mean, experiment_jobs, layered
from medfc.plan.jobs import JobSpec, call, one_job
from medfc.plan.layout import PAPERS, Layout
from medfc.plan.medsnip import MEDSNIP_TITLES, MEDSNIP_WILDCARDS, MedsnipPlan, medsnip_jobs

__all__ = ["HEALTHFC_WILDCARDS", "MEDSNIP_TITLES", "MEDSNIP_WILDCARDS", "PAPERS", "TABLES", "JobSpec", "Layout", "Plan", "job_spec", "job_specs",
           "layered"]

T = TypeVar("T")


def job_specs() -> dict[str, JobSpec]:
    """The plan as a table (:mod:`medfc.plan.jobs`): rule → its record, every stage's, built from the registries
    as they are now (a CliniFact system registered later is in it)."""
    provenance_job = JobSpec("provenance", options=call("provenance_options"), planned=one_job(lambda plan: True), checked=False)
    index_job = JobSpec("index", options=call("index_options"), options_class=IndexOptions, inputs=call("targets"),
                        planned=one_job(lambda plan: True))
    return jobs.table_of([*dataset_jobs(), *experiment_jobs(), *medsnip_jobs(), provenance_job, index_job])


def job_spec(rule: str) -> JobSpec:
    """One rule's record; a rule not in the table is a ValueError naming it."""
    return jobs.job_spec(job_specs(), rule)


class Plan(DatasetsPlan, ExperimentsPlan, MedsnipPlan):
    """The plan of one validated config (``config`` is read, never changed)."""

    def local_rules(self) -> list[str]:
        """The rules a cluster run keeps where Snakemake runs (:mod:`medfc.plan.cluster`)."""
        return cluster.local_rules(self.config)

    def stage_enabled(self, name: str) -> bool:
        return bool(self.config["stages"].get(name, False))

    # ------------------------------------------------------------------------------------- jobs
    # what the rules ask, one entry point each: the record of the rule in the job table (medfc.plan.jobs)
    def job_options(self, rule: str, wildcards: Any = None) -> Options | Mapping[str, Any]:
        """One job's typed options (the object its step receives), built by its rule's record, once per rule and
        wildcards (:func:`medfc.plan.jobs.typed_options`)."""
        return self.spec_options(job_spec(rule), wildcards)

    def spec_options(self, spec: JobSpec, wildcards: Any = None) -> Options | Mapping[str, Any]:
        """:meth:`job_options` by the rule's record (``spec``), kept per rule and wildcards."""
        return self._per_job("_job_options", spec.rule, wildcards, lambda: jobs.typed_options(self, spec, wildcards))

    def _per_job(self, store: str, rule: str, wildcards: Any, build: Callable[[], T]) -> T:
        """What ``build`` gives for one job of ``rule``, built once per rule and wildcards and kept in ``store``."""
        key = (rule, tuple(sorted(jobs.wildcard_dict(wildcards).items())))
        kept = self.__dict__.setdefault(store, {})
        if key not in kept:
            kept[key] = build()
        return kept[key]

    def planned_jobs(self) -> list[tuple[JobSpec, dict[str, str]]]:
        """(record, wildcards) of every job the config plans whose options read the config (:func:`medfc.plan.jobs.planned_jobs`)."""
        return list(jobs.planned_jobs(self, job_specs()))

    def options(self, rule: str, wildcards: Any = None) -> dict[str, Any]:
        """One job's options as its rule's ``options`` param: :meth:`job_options` serialised
        (:func:`medfc.plan.jobs.serialised`), which the job builds the same object from."""
        return jobs.serialised(self.job_options(rule, wildcards))

    def inputs(self, rule: str, wildcards: Any = None) -> Any:
        """One job's inputs that depend on the config (the rule's ``unpack``), built by its rule's record."""
        return jobs.build(self, job_spec(rule), "inputs", wildcards)

    def prompts(self, rule: str, wildcards: Any = None) -> dict[str, str]:
        """``{prompt: sha256}`` of the prompts one job reads (the rule's ``prompts`` param: editing one reruns it)."""
        return jobs.build(self, job_spec(rule), "prompts", wildcards)

    def job_resources(self, rule: str, wildcards: Any = None) -> dict[str, int]:
        """One job's ``{gpu, threads, mem_mb, runtime}`` (its rule's record: by its model's kind and size,
        :mod:`medfc.plan.resources`), once per rule and wildcards: each rule's ``threads:`` and ``resources:`` ask for it."""
        return self._per_job("_job_resources", rule, wildcards, lambda: jobs.job_resources(self, job_specs(), rule, wildcards))

    def provenance_options(self) -> dict[str, Any]:
        """The software of the run's results (rule provenance: its params, so a change reruns it)."""
        return {"software": provenance.software()}

    def index_options(self) -> dict[str, Any]:
        """The run's index (rule index): its folder, its provenance records, the index job's own log and timing."""
        return {"results": self.layout.results, "provenance": self.layout.provenance,
                "own": [f"{self.layout.logs}/index.log", f"{self.layout.timings}/index.tsv"]}

    def healthfc_data_planned(self) -> bool:
        """Whether the run builds the HealthFC dataset: its stage, a HealthFC experiment or MedSNIP on HealthFC."""
        return (self.stage_enabled("healthfc") or bool(self.stage_enabled("experiments") and self.healthfc_runs())
                or (self.stage_enabled("medsnip") and any(answer_source(d).healthfc_dataset for d in self.medsnip_datasets())))

    def clinifact_data_planned(self) -> bool:
        """Whether the run builds (or imports) the CliniFact pairs: its stage or a CliniFact experiment."""
        return self.stage_enabled("clinifact") or bool(self.stage_enabled("experiments") and self.clinifact_runs())

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
            if self.healthfc_mode != "release":
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
            if self.healthfc_mode == "crawl+release":
                targets.append(res("healthfc/diff/diff.md"))
        if self.stage_enabled("clinifact"):
            stats = res("clinifact/stats")
            targets += [f"{stats}/table6_labels.csv", f"{stats}/table4_words.csv", f"{stats}/fig2_disease_classes.png", f"{stats}/figS1_years.png"]
            if self.config["clinifact"]["pairs_source"] == "rebuild":
                targets += [res("clinifact/pairs/dataset_card.md"), res("clinifact/pairs/README.md")]
            if self.clinifact_diff_enabled():
                targets.append(res("clinifact/diff/diff.md"))
        if self.stage_enabled("experiments"):
            targets += self.experiment_targets()
        return targets + self.medsnip_targets() + [f"{self.layout.provenance}/software.yml"]

    def named_targets(self) -> dict[str, list[str]]:
        """What users ask for by name (``snakemake --cores 4 datasets``, ``tables``, ``figures``): the rebuilt
        datasets (cards, folds, splits), every table (statistics, experiments, MedSNIP; CSV beside its Markdown
        and TeX) and every figure of :meth:`targets`."""
        res = self.layout.under
        datasets: list[str] = []
        if self.stage_enabled("healthfc"):
            datasets += [res("healthfc/dataset/dataset_card.md"), res("healthfc/dataset/README.md"), res("healthfc/folds/folds.csv")]
        if self.stage_enabled("clinifact") or self.stage_enabled("experiments"):
            datasets += [f"{self.clinifact_pairs_dir}/{s}_set.csv" for s in ("train", "validation", "test")]
            if self.config["clinifact"]["pairs_source"] == "rebuild":
                datasets.append(res("clinifact/pairs/dataset_card.md"))
            if self.stage_enabled("clinifact") and self.config["clinifact"]["pairs_source"] == "rebuild":
                datasets.append(res("clinifact/pairs/README.md"))
        every = self.targets()
        figures = [t for t in every if t.endswith(".png")]
        tables = [t for t in every if t.endswith(".csv") and (t.startswith(f"{self.layout.tables}/") or "/stats/table" in t
                                                             or t.startswith(f"{self.layout.medsnip}/"))]
        return {"datasets": datasets, "tables": tables, "figures": figures}

    # ----------------------------------------------------------------------------------- checks
    def check(self) -> None:
        """Settings the schema allows one by one but not together: stop at once, naming the keys."""
        config = self.config
        if self.healthfc_mode == "release" and self.stage_enabled("experiments"):
            chosen = [s for s in EVIDENCE_SYSTEMS if s in self.healthfc_systems_run()]  # the systems that select sentences
            if chosen:
                selecting = " and ".join(EVIDENCE_SYSTEMS)
                raise ValueError(
                    f"config: healthfc.dataset.mode is 'release', so the evidence-selection systems {selecting} "
                    "would only have the gold sentences to choose from and their evidence scores would be meaningless; "
                    f"experiments.healthfc.systems (or .lang_systems) includes {' and '.join(chosen)}. Remove {selecting} "
                    "from experiments.healthfc.systems (e.g. [oracle, claims_only, gold_explanations, level_of_evidence]) "
                    "or use healthfc.dataset.mode crawl+release."
                )
        if self.stage_enabled("experiments"):
            for lang in config["experiments"]["healthfc"]["langs"]:
                if not config["models"]["healthfc"][lang]:
                    raise ValueError(
                        f"config: models.healthfc.{lang} is empty but experiments.healthfc.langs includes {lang}, so its HealthFC "
                        f"experiments would silently vanish: name its models, or leave {lang} out of experiments.healthfc.langs "
                        "(langs: [] runs no HealthFC experiments)")
        for key, names in [*((f"models.healthfc.{lang}", config["models"]["healthfc"][lang]) for lang in ("en", "de")),
                           *((spec.models_key, config["models"]["clinifact"][name]) for name, spec in CLINIFACT_SYSTEMS.items())]:
            for name in names:
                if name not in self.aliases and not self.is_ensemble(name):
                    hint = did_you_mean(name, [*self.aliases, *self.ensembles])
                    raise ValueError(f"config: {key}: {name!r} names no model{hint} (models.aliases: {', '.join(sorted(self.aliases))}; "
                                     f"models.ensembles: {', '.join(sorted(self.ensembles)) or 'none'}){ALIAS_HINT}")
        both = sorted(set(self.aliases) & set(self.ensembles))
        if both:
            raise ValueError(f"config: {both} are both models.aliases and models.ensembles: an ensemble needs a name of its own")
        for name, ens in self.ensembles.items():
            unknown = [m for m in ens["members"] if m not in self.aliases]
            if unknown:
                raise ValueError(f"config: models.ensembles.{name}.members {unknown} are not in models.aliases")
        # each model kind serves the datasets its options class declares (its datasets and limits: medfc.experiments.options)
        for dataset, key, names in [("healthfc", "models.healthfc", [*config["models"]["healthfc"]["en"], *config["models"]["healthfc"]["de"]]),
                                    *(("clinifact", spec.models_key, config["models"]["clinifact"][n]) for n, spec in CLINIFACT_SYSTEMS.items())]:
            refused: dict[type, set[str]] = {}
            for m in names:
                for cls in {self.model_class(x) for x in self.ensembles.get(m, {}).get("members", [m])}:
                    if dataset not in cls.datasets:
                        refused.setdefault(cls, set()).add(m)
                    if config["experiments"]["keep_checkpoints"] and cls.kind in MODEL_KINDS and MODEL_KINDS[cls.kind].kept is None:
                        raise ValueError(f"config: experiments.keep_checkpoints is true but {key} uses {m!r}, of the model kind {cls.kind}, "
                                         "which has no keeper (medfc.experiments.models.MODEL_KINDS): its runs would train and then fail "
                                         "to keep it; set experiments.keep_checkpoints: false or leave it out")
            for cls, used in refused.items():
                raise ValueError(f"config: {key} uses {sorted(used)}, {cls.limits}")
        self.check_model_options()
        if self.stage_enabled("experiments"):
            self.check_offline_models()
        smoke = {k: v for k, v in config["experiments"]["smoke"].items() if v is not None}
        if self.stage_enabled("experiments") and smoke and config["experiments"]["scale"] != "smoke":
            raise ValueError(
                f"config: experiments.smoke caps training ({smoke}), so the tables' numbers are smoke-sized, but "
                f"experiments.scale is {config['experiments']['scale']!r}: set experiments.scale: smoke, or lift the caps "
                "(experiments.smoke: {max_steps: null, max_examples: null})."
            )
        if self.stage_enabled("medsnip"):
            self.check_medsnip()
        self.build_jobs()

    def build_jobs(self) -> None:
        """Build, once, every planned job's config-dependent inputs, options and prompts, one loop over the job
        table (:func:`job_specs`, :func:`medfc.plan.jobs.build_all`), so that a mistake only they find (a model alias that names no
        model, a missing mirror or release, a bad override of one model's section) stops the run here, as one
        line, not as a traceback while Snakemake builds its DAG. Raises the plan's ValueError naming the key."""
        jobs.build_all(self, job_specs())
