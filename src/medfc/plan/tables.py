"""The tables' and Fig. 3's plan: each experiments table of the run (a record of :data:`TABLE_SPECS`), the two
CliniFact runs Fig. 3 compares and the prediction files the run's error browser reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from medfc.experiments.healthfc.systems import OPEN_DOMAIN_SYSTEMS, TABLE3_SYSTEMS, TABLE5_SYSTEMS
from medfc.plan.experiments import CliniFactRun, HealthFCRun, PairsDataset, healthfc_run_path
from medfc.plan.jobs import Part, job, one_job
from medfc.tables.errors import ErrorsOptions
from medfc.tables.options import TABLE_OPTIONS, DatasetTableOptions, Fig3Options

INNER_CV_ROW = " inner CV"  # a time table's row of a stacked member's inner cross-validation: "<member> inner CV"
Entry = dict[str, Any]  # one row's run, as the table's step reads it (its wildcards, or a CliniFact run's model and system)


class TableRuns(NamedTuple):
    """What one table reads: the name of its input, the runs' files (in its rows' order), and its rows' runs."""

    name: str
    files: list[str]
    entries: list[Entry]


@dataclass(frozen=True)
class TableSpec:
    """One experiments table. ``runs`` gives what it reads; ``options`` what its options add to its rows and the
    scale; ``planned`` whether the run makes it."""

    runs: Callable[[TablesPlan], TableRuns]
    planned: Callable[[TablesPlan], bool]
    options: Callable[[TablesPlan, list[Entry]], dict[str, Any]] = lambda plan, entries: {}


class TablesPlan(Part):
    def table_runs(self, table: str) -> TableRuns:
        return TABLE_SPECS[table].runs(self)

    def table_inputs(self, table: str) -> dict[str, object]:
        runs = self.table_runs(table)
        if runs.name != "scores":
            return {runs.name: runs.files}
        # a paper's table: the papers' numbers, and what each stacked run chose (its info.json beside its scores)
        infos = [f"{f.rsplit('/', 1)[0]}/info.json" for f, e in zip(runs.files, runs.entries) if self.models.is_stacked(str(e["model"]))]
        return {runs.name: runs.files, "papers": self.models.papers, **({"infos": infos} if infos else {})}

    @job("light", lambda plan: [{"table": t} for t in planned_tables(plan)],
         options_class=lambda w: TABLE_OPTIONS[w["table"]], inputs=table_inputs)
    def table(self, table: str) -> dict[str, object]:
        entries = self.table_runs(table).entries
        return {"entries": entries, "scale": self.config["experiments"]["scale"], **TABLE_SPECS[table].options(self, entries)}

    def dataset_table_inputs(self, dataset: str) -> dict[str, object]:
        runs = self.experiments.pairs_runs(dataset)
        return {"scores": [f"{r['dir']}/scores.json" for r in runs],
                "infos": [f"{r['dir']}/info.json" for r in runs if self.models.is_stacked(r["model"])]}

    @job("light", lambda plan: [{"dataset": d} for d in plan.datasets.dataset_names()  # those with runs
                                if plan.stage_enabled("experiments") and plan.experiments.pairs_runs(d)],
         options_class=DatasetTableOptions, inputs=dataset_table_inputs)
    def dataset_table(self, dataset: str) -> dict[str, object]:
        return {"dataset": dataset, "title": self.experiments.pairs_dataset(dataset).title,
                "entries": self.experiments.run_entries(self.experiments.pairs_runs(dataset)),
                "scale": self.config["experiments"]["scale"]}

    def _fig3_picks(self) -> tuple[list[tuple[dict[str, str], CliniFactRun]], list[str]]:
        """(the run ``experiments.clinifact.fig3_pair`` names, the run Fig. 3 shows for it) for each run shown, and the
        notes: a named run not in the plan gives way to the first planned run of its system, else of another system."""
        runs = self.experiments.clinifact_runs()
        picks: list[tuple[dict[str, str], CliniFactRun]] = []
        notes: list[str] = []
        for want in self.config["experiments"]["clinifact"]["fig3_pair"]:
            free = [r for r in runs if r not in [p for _, p in picks]]
            exact = [r for r in free if r["model"] == want["model"] and r["system"] == want["system"]]
            pick = (exact or [r for r in free if r["system"] == want["system"]] or free or [None])[0]
            if pick is None:
                notes.append(f"Fig. 3: {want['model']} ({want['system']}) is not run and no other run is left to show")
                continue
            if not exact:
                notes.append(f"Fig. 3: {want['model']} ({want['system']}) is not run; {pick['model']} ({pick['system']}) is shown instead")
            picks.append((want, pick))
        return picks, notes

    def clinifact_fig3_inputs(self) -> dict[str, object]:
        inputs: dict[str, Any] = {"predictions": [f"{r['dir']}/predictions.jsonl" for _, r in self._fig3_picks()[0]],
                                  "test": self.experiments.pairs_split_inputs("clinifact")["test"],
                                  "papers": self.models.papers}
        if self.config["experiments"]["clinifact"]["disease_panel"]:
            inputs["studies"] = self.layout.under("clinifact/studies/studies.jsonl.gz")
        return inputs

    @job("light", one_job(lambda plan: plan.stage_enabled("experiments") and bool(plan.experiments.clinifact_runs())),
         options_class=Fig3Options, inputs=clinifact_fig3_inputs)
    def clinifact_fig3(self) -> dict[str, object]:
        picks, notes = self._fig3_picks()
        entries: list[dict[str, object]] = []
        for want, r in picks:
            entry: dict[str, object] = {"model": r["model"], "system": r["system"]}
            if (want["model"], want["system"]) != (r["model"], r["system"]):
                entry["stands_for"] = {"model": want["model"], "system": want["system"]}
            entries.append(entry)
        return {"entries": entries,
                "excluded_branches": self.config["clinifact"]["stats"]["excluded_branches"], "notes": notes}

    def error_browser_inputs(self) -> dict[str, object]:
        """Every HealthFC run's predictions with the dataset, and each pairs dataset's runs' with its test split."""
        inputs: dict[str, object] = {}
        if runs := self.healthfc.healthfc_runs():
            inputs["healthfc"] = [f"{self.healthfc.healthfc_run_dir(r)}/predictions.jsonl" for r in runs]
            inputs["dataset"] = self.layout.healthfc_dataset
        for ds, runs in self._error_pairs():
            inputs[f"pairs_{ds.name}"] = [f"{r['dir']}/predictions.jsonl" for r in runs]
            inputs[f"pairs_{ds.name}_test"] = ds.splits["test"]
        return inputs

    def error_browser_planned(self) -> bool:
        return self.stage_enabled("experiments") and bool(self.healthfc.healthfc_runs() or self._error_pairs())

    def _error_pairs(self) -> list[tuple[PairsDataset, list[CliniFactRun]]]:
        return [(ds, runs) for ds in self.experiments.pairs_datasets().values() if (runs := ds.all_runs())]

    @job("light", one_job(lambda plan: plan.tables.error_browser_planned()), options_class=ErrorsOptions,
         inputs=error_browser_inputs)
    def error_browser(self) -> dict[str, object]:
        sections = [{"title": f"{ds.title} (test split)", "data": ds.data,
                     "entries": self.experiments.run_entries(runs)} for ds, runs in self._error_pairs()]
        return {"healthfc": [dict(r) for r in self.healthfc.healthfc_runs()], "pairs": sections,
                "scale": self.config["experiments"]["scale"]}


def healthfc_table_runs(plan: TablesPlan, systems: tuple[str, ...] | list[str], name: str, file: str) -> TableRuns:
    runs = plan.healthfc.healthfc_runs(systems)
    return TableRuns(name, [f"{plan.healthfc.healthfc_run_dir(r)}/{file}" for r in runs], [dict(r) for r in runs])


def clinifact_table_runs(plan: TablesPlan, name: str, file: str) -> TableRuns:
    return TableRuns(name, [f"{r['dir']}/{file}" for r in plan.experiments.clinifact_runs()], plan.experiments.clinifact_table_entries())


def healthfc_time_runs(plan: TablesPlan) -> TableRuns:
    """Every HealthFC run's timing, then a row per stacked member's inner cross-validation (``<member> inner CV``)."""
    runs: list[HealthFCRun] = plan.healthfc.healthfc_runs()
    inner = plan.healthfc.healthfc_inner_runs()
    timings = plan.layout.experiment_timings
    files = [f"{timings}/{healthfc_run_path(**r)}.tsv" for r in runs]
    files += [f"{timings}/inner_cv/{healthfc_run_path(**r)}.tsv" for r in inner]
    return TableRuns("benchmarks", files, [dict(r) for r in runs] + [{**r, "model": f"{r['model']}{INNER_CV_ROW}"} for r in inner])


def clinifact_time_runs(plan: TablesPlan) -> TableRuns:
    inner = plan.experiments.pairs_inner_models("clinifact")
    runs: list[CliniFactRun] = plan.experiments.clinifact_runs()
    files = [r["benchmark"] for r in runs] + [f"{plan.layout.experiment_timings}/inner_cv/clinifact/{m}.tsv" for m in inner]
    return TableRuns("benchmarks", files, plan.experiments.clinifact_table_entries() + [{"model": f"{m}{INNER_CV_ROW}", "system": "discriminative"}
                                                                             for m in inner])


def time_options(plan: TablesPlan, entries: list[Entry]) -> dict[str, object]:
    """A time table's: an ensemble's row counts its members' jobs too, a stack's their inner cross-validation."""
    return {"ensembles": {m: plan.models.ensemble_members(m) + [f"{x}{INNER_CV_ROW}" for x in plan.models.ensemble_members(m) if plan.models.is_stacked(m)]
                          for m in dict.fromkeys(e["model"] for e in entries) if plan.models.is_ensemble(m)}}


def significance_options(plan: TablesPlan, entries: list[Entry]) -> dict[str, object]:
    sc = plan.config["scoring"]
    return {"comparisons": plan.healthfc.healthfc_compared_systems()[0], "abstain": sc["abstain"], **sc["bootstrap"]}


def _healthfc_table(systems: tuple[str, ...]) -> TableSpec:
    """Table 3, Table 5 or the open-domain table: the scores of its systems' runs (planned when one runs)."""
    return TableSpec(runs=lambda plan: healthfc_table_runs(plan, systems, "scores", "scores.json"),
                     planned=lambda plan: bool({r["system"] for r in plan.healthfc.healthfc_runs()} & set(systems)))


# CliniFact's Table 8 and what we score beyond it: every CliniFact run's scores
CLINIFACT_SCORES = TableSpec(runs=lambda plan: clinifact_table_runs(plan, "scores", "scores.json"),
                             planned=lambda plan: bool(plan.experiments.clinifact_runs()))
# every experiments table, in the order of the run's main.tex
TABLE_SPECS: dict[str, TableSpec] = {
    "healthfc_table3": _healthfc_table(TABLE3_SYSTEMS),
    "healthfc_table3_extra": _healthfc_table(TABLE3_SYSTEMS),  # what we score beyond the paper's columns
    "healthfc_table5": _healthfc_table(TABLE5_SYSTEMS),
    "healthfc_table5_extra": _healthfc_table(TABLE5_SYSTEMS),
    "healthfc_open_domain": _healthfc_table(OPEN_DOMAIN_SYSTEMS),
    "healthfc_significance": TableSpec(
        runs=lambda plan: healthfc_table_runs(plan, plan.healthfc.healthfc_compared_systems()[1], "predictions", "predictions.jsonl"),
        planned=lambda plan: bool(plan.healthfc.healthfc_runs() and plan.healthfc.healthfc_compared_systems()[0]), options=significance_options),
    "clinifact_table8": CLINIFACT_SCORES,
    "clinifact_table8_extra": CLINIFACT_SCORES,
    "clinifact_significance": TableSpec(runs=lambda plan: clinifact_table_runs(plan, "predictions", "predictions.jsonl"),
                                        planned=lambda plan: len(plan.experiments.clinifact_runs()) > 1),
    "healthfc_times": TableSpec(runs=healthfc_time_runs, options=time_options,
                                planned=lambda plan: bool(plan.config["experiments"]["time_tables"] and plan.healthfc.healthfc_runs())),
    "clinifact_times": TableSpec(runs=clinifact_time_runs, options=time_options,
                                 planned=lambda plan: bool(plan.config["experiments"]["time_tables"] and plan.experiments.clinifact_runs())),
}
TABLES = tuple(TABLE_SPECS)


def planned_tables(plan: TablesPlan) -> list[str]:
    """The experiments tables the run makes (none without the experiments stage)."""
    return [t for t, spec in TABLE_SPECS.items() if spec.planned(plan)] if plan.stage_enabled("experiments") else []
