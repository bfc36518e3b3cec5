"""The whole job table (:mod:`medfc.plan.jobs`): every stage's records, and the run's own two (its software
record and its index)."""

from __future__ import annotations


from medfc.common import provenance
from medfc.common.run_index import IndexOptions
from medfc.plan import jobs
from medfc.plan.datasets import dataset_jobs
from medfc.plan.examples import example_jobs
from medfc.plan.experiments import experiment_jobs
from medfc.plan.jobs import JobPlan, JobSpec, always, call, one_job
from medfc.plan.medsnip import medsnip_jobs
from medfc.plan.tables import report_jobs
from medfc.tables.options import DocumentOptions


def provenance_options(plan: JobPlan) -> dict[str, object]:
    """The software of the run's results (rule provenance: its params, so a change reruns it)."""
    return {"software": provenance.software()}


def index_options(plan: JobPlan) -> dict[str, object]:
    """The run's index (rule index): its folder, its provenance records, the index job's own log and timing."""
    return {"results": plan.layout.results, "provenance": plan.layout.provenance,
            "own": [f"{plan.layout.logs}/index.log", f"{plan.layout.timings}/index.tsv"]}


def targets(plan: JobPlan) -> list[str]:
    return plan.targets()


def document_inputs(plan: JobPlan) -> dict[str, list[str]]:
    """``main.tex``'s: the LaTeX of every table the run makes (each table target's ``.tex`` beside its ``.csv``)
    and the PDF of every figure (beside its ``.png``)."""
    named = plan.named_targets()
    return {"tables": [t[: -len(".csv")] + ".tex" for t in named["tables"]],
            "figures": [f[: -len(".png")] + ".pdf" for f in named["figures"]]}


def document_options(plan: JobPlan) -> dict[str, object]:
    scale = plan.config["experiments"]["scale"]
    return {"title": f"medfc: the tables and figures of {plan.layout.results} ({scale} scale)"}


def run_jobs() -> list[JobSpec]:
    """The run's own records: its software (built only when Snakemake plans the job) and its index."""
    return [JobSpec("provenance", "light", options=call(provenance_options), planned=one_job(always), checked=False),
            JobSpec("index", "light", options=call(index_options), options_class=IndexOptions, inputs=call(targets),
                    planned=one_job(always)),
            JobSpec("main_tex", "light", options=call(document_options), options_class=DocumentOptions,
                    inputs=call(document_inputs), planned=one_job(always))]


def job_specs() -> dict[str, JobSpec]:
    """rule → its record, every stage's (a :class:`medfc.plan.Plan` builds it once, :attr:`~medfc.plan.Plan.job_table`)."""
    return jobs.table_of([*dataset_jobs(), *experiment_jobs(), *report_jobs(), *example_jobs(), *medsnip_jobs(), *run_jobs()])
