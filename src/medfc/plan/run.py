"""The run's own jobs (its software record, its index and its LaTeX document), and every job's record
(:func:`job_specs`)."""

from __future__ import annotations

from medfc.common import provenance as _provenance
from medfc.common.run_index import IndexOptions
from medfc.plan.datasets import DatasetsPlan
from medfc.plan.examples import ExamplesPlan
from medfc.plan.experiments import ExperimentsPlan, HealthFCPlan
from medfc.plan.jobs import JobSpec, Part, job, one_job
from medfc.plan.medsnip import MedsnipPlan
from medfc.plan.tables import TablesPlan
from medfc.tables.options import DocumentOptions

_every_run = one_job(lambda plan: True)


class RunPlan(Part):
    @job("light", _every_run, checked=False)
    def provenance(self) -> dict[str, object]:
        """The software of the run's results (its params, so a change reruns it)."""
        return {"software": _provenance.software()}

    @job("light", _every_run, options_class=IndexOptions)
    def index(self) -> dict[str, object]:
        """The run's index: its folder, its provenance records, the index job's own log and timing."""
        return {"results": self.layout.results, "provenance": self.layout.provenance,
                "own": [f"{self.layout.logs}/index.log", f"{self.layout.timings}/index.tsv"]}

    @job("light", _every_run, options_class=DocumentOptions)
    def main_tex(self) -> dict[str, object]:
        scale = self.config["experiments"]["scale"]
        return {"title": f"medfc: the tables and figures of {self.layout.results} ({scale} scale)"}


def job_specs() -> dict[str, JobSpec]:
    """rule → its record, each part's in definition order, the run's own last; a rule declared twice is a ValueError."""
    parts = (DatasetsPlan, HealthFCPlan, ExperimentsPlan, TablesPlan, ExamplesPlan, MedsnipPlan, RunPlan)
    specs = [v.job for part in parts for v in vars(part).values() if isinstance(getattr(v, "job", None), JobSpec)]
    table = {s.rule: s for s in specs}
    if len(table) != len(specs):
        rules = [s.rule for s in specs]
        raise ValueError(f"rules declared twice in the job table: {sorted({r for r in rules if rules.count(r) > 1})}")
    return table
