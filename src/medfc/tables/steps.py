"""Workflow steps of the tables stage: the experiments' tables (rule ``table``, one job per table, from the ``scores``
or ``predictions`` of its ``options.entries``, as CSV, Markdown and the paper's LaTeX on one stem), the papers' example
tables (workflow/rules/examples.smk, also as HTML) and CliniFact Fig. 3 (workflow/rules/figures.smk)."""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from medfc.common.io import input_paths, read_json, read_jsonl, table_stem, write_table
from medfc.common.papers import read_paper_numbers
from medfc.common.latex import LatexTable
from medfc.common.stepfiles import StepFiles
from medfc.tables import clinifact, examples, fig3, healthfc
from medfc.tables.common import Entry, clinifact_name, grouped
from medfc.tables.options import (DatasetTableOptions, ExampleClaimsOptions, ExamplePairsOptions, Fig3Options,
                                  SignificanceOptions, TableOptions, TimesOptions, WrongClaimsOptions)

log = logging.getLogger(__name__)


SCALES = {"smoke": "Our numbers are SMOKE-SIZED (training capped by experiments.smoke): they show that the pipeline runs, nothing about the models.",
          "cpu": "Our numbers come from the CPU recipe on real data (experiments.scale cpu).",
          "paper": "Our numbers come from the papers' models and hyperparameters (experiments.scale paper)."}


def _caption(title: str, scale: str) -> str:
    return f"{title} {SCALES[scale]} Rows with source 'paper' are the paper's own numbers, each for the model it names."


def _write(df: pd.DataFrame, outputs: StepFiles, caption: str, latex: LatexTable | None = None) -> dict[str, int]:
    stem = table_stem(outputs)
    write_table(df, stem, caption=caption, formats=("csv", "md", "tex", "html") if "html" in outputs else ("csv", "md", "tex"), latex=latex)
    log.info("%s: %d rows", stem.name, len(df))
    return {"rows": len(df)}


def healthfc_table3(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """HealthFC Table 3 from the pipeline / joint / oracle ``scores``."""
    df, latex = healthfc.table3(input_paths(inputs, "scores"), options.entries, read_paper_numbers(inputs["papers"]),
                                options.scale, input_paths(inputs, "infos"))
    return _write(df, outputs, _caption("HealthFC Table 3: evidence selection and veracity prediction, macro P/R/F1 (%), mean ± std over folds. "
                                      "FF1: false-class F1 over the supported / refuted claims with a TRUE / FALSE prediction "
                                      "(scoring.abstain); FF1 coverage: the share of them it scores.", options.scale),
                  latex)


def healthfc_table3_extra(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """Table 3's companion: FEVER, AVeriTeC and false-class F1 of our rows."""
    df, latex = healthfc.table3_extra(input_paths(inputs, "scores"), options.entries, options.scale)
    return _write(df, outputs, latex.caption + " " + SCALES[options.scale], latex)


def healthfc_table5(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """HealthFC Table 5 from the claims-only / gold-explanations / level-of-evidence ``scores``."""
    df, latex = healthfc.table5(input_paths(inputs, "scores"), options.entries, read_paper_numbers(inputs["papers"]),
                                options.scale, input_paths(inputs, "infos"))
    return _write(df, outputs, _caption("HealthFC Table 5: claims only, retrieved evidence (retrieved_web: Google snippets), gold explanations, "
                                      "level of evidence; macro P/R/F1 (%), mean ± std over folds.", options.scale),
                  latex)


def healthfc_table5_extra(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """Table 5's companion: accuracy and the claims scored of our rows."""
    df, latex = healthfc.table5_extra(input_paths(inputs, "scores"), options.entries, options.scale)
    return _write(df, outputs, latex.caption + " " + SCALES[options.scale], latex)


def healthfc_open_domain(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """The HealthFC open-domain comparison from the open_domain_<source> ``scores``."""
    df, latex = healthfc.open_domain(input_paths(inputs, "scores"), options.entries,
                                     read_paper_numbers(inputs["papers"]), options.scale)
    return _write(df, outputs, _caption("HealthFC open-domain verification: supported vs refuted claims with evidence retrieved from "
                                      "each source; macro P/R/F1 (%) over the two classes, mean ± std over folds.", options.scale),
                  latex)


def healthfc_significance(inputs: StepFiles, outputs: StepFiles, options: SignificanceOptions) -> dict[str, int]:
    """McNemar–Bowker and the MedSNIP paired bootstrap between the configured pairs of HealthFC systems."""
    df = healthfc.significance(input_paths(inputs, "predictions"), options.entries, options.comparisons, metric=options.metric,
                               n_resamples=options.n_resamples, seed=options.seed, abstain=options.abstain)
    return _write(df, outputs, "HealthFC: McNemar–Bowker and MedSNIP paired bootstrap (95% CI of Δ) between systems, folds pooled. "
                  + SCALES[options.scale], healthfc.significance_latex(df, options.scale))


def clinifact_table8(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """CliniFact Table 8 from every model's ``scores``."""
    df, latex = clinifact.table8(input_paths(inputs, "scores"), options.entries, read_paper_numbers(inputs["papers"]),
                                 options.scale, input_paths(inputs, "infos"))
    return _write(df, outputs, _caption("CliniFact Table 8: test accuracy and macro P/R/F1 (%).", options.scale), latex)


def clinifact_table8_extra(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """Table 8's companion: the pairs scored and the macro-F1 interval of our rows."""
    df, latex = clinifact.table8_extra(input_paths(inputs, "scores"), options.entries, options.scale)
    return _write(df, outputs, latex.caption + " " + SCALES[options.scale], latex)


def clinifact_significance(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> dict[str, int]:
    """McNemar–Bowker between every pair of CliniFact systems on the same test pairs."""
    df = clinifact.significance(input_paths(inputs, "predictions"), options.entries)
    return _write(df, outputs, "CliniFact: McNemar–Bowker between systems on the test pairs. " + SCALES[options.scale],
                  clinifact.significance_latex(df, options.scale))


def dataset_table(inputs: StepFiles, outputs: StepFiles, options: DatasetTableOptions) -> dict[str, int]:
    """A declared dataset's table from every model's ``scores``."""
    df, latex = clinifact.dataset_table(input_paths(inputs, "scores"), options.entries, options.dataset, options.title,
                                        options.scale, input_paths(inputs, "infos"))
    return _write(df, outputs, latex.caption + " " + SCALES[options.scale], latex)


TIMES_CAPTION = ("Wall and CPU seconds of each row's jobs (Snakemake's benchmark files, <results_dir>/timings/experiments), summed "
                 "over folds; an ensemble's wall s and CPU s include its members' jobs (own: the averaging alone). The times "
                 "depend on the machine and on what else ran; a rerun changes them.")


def _benchmark(path: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a job's benchmark file (its columns ``s`` and ``cpu_time``); NaN for a value
    Snakemake could not measure."""
    with open(path, encoding="utf-8", newline="") as fh:
        row = next(csv.DictReader(fh, delimiter="\t"), None) or {}

    def num(key: str) -> float:
        try:
            return float(row.get(key, "NA"))
        except ValueError:
            return math.nan

    return num("s"), num("cpu_time")


def _seconds(x: float) -> float | str:
    return "" if math.isnan(x) else round(x, 1)


def _times(benchmarks: Sequence[str], entries: Sequence[Entry], ensembles: Mapping[str, Sequence[str]],
           keys: Sequence[str], name: Callable[[Entry], object] = lambda e: e["model"]) -> pd.DataFrame:
    """One row per ``keys`` of the entries: its jobs, their wall and CPU seconds summed over folds, with an
    ensemble's members' jobs and alone (``own``)."""
    groups = grouped(entries, benchmarks, keys)
    own = {k: (len(items), *(sum(x) for x in zip(*(_benchmark(f) for _, f in items)))) for k, items in groups.items()}
    model = list(keys).index("model")
    rows = []
    for k, items in groups.items():
        jobs, wall, cpu = own[k]
        members = list(ensembles.get(k[model], []))
        parts = [own.get(k[:model] + (m,) + k[model + 1:], (0, math.nan, math.nan)) for m in members]
        rows.append({**dict(zip(keys, k)), "model": name(items[0][0]), "jobs": jobs,
                     "wall s": _seconds(wall + sum(p[1] for p in parts)), "CPU s": _seconds(cpu + sum(p[2] for p in parts)),
                     "own wall s": _seconds(wall), "own CPU s": _seconds(cpu), "members": ", ".join(members)})
    columns = [*keys, "jobs", "wall s", "CPU s", "own wall s", "own CPU s", "members"]
    return pd.DataFrame(rows, columns=columns).astype(object)


def healthfc_times(inputs: StepFiles, outputs: StepFiles, options: TimesOptions) -> dict[str, int]:
    """How long each HealthFC row took, from its jobs' ``benchmarks``."""
    df = _times(input_paths(inputs, "benchmarks"), options.entries, options.ensembles, ("lang", "model", "system"))
    return _write(df, outputs, f"HealthFC: time per row. {TIMES_CAPTION} {SCALES[options.scale]}")


def clinifact_times(inputs: StepFiles, outputs: StepFiles, options: TimesOptions) -> dict[str, int]:
    """How long each CliniFact row of Table 8 took, from its jobs' ``benchmarks``."""
    df = _times(input_paths(inputs, "benchmarks"), options.entries, options.ensembles, ("model", "system"),
                name=clinifact_name)
    return _write(df, outputs, f"CliniFact: time per row of Table 8. {TIMES_CAPTION} {SCALES[options.scale]}")


SCALE_NOTES = {"smoke": "A smoke-scale run (training capped by experiments.smoke): its errors show that the pipeline "
                        "runs, nothing about the models.",
               "cpu": "A run of the CPU recipe on real data (experiments.scale cpu).", "paper": ""}


def _write_example(table: examples.Table, outputs: StepFiles) -> dict[str, int]:
    return _write(table[0], outputs, table[1].caption, table[1])


def _pairs(path: str) -> list[dict[str, str]]:
    return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")


def healthfc_table1(inputs: StepFiles, outputs: StepFiles, options: ExampleClaimsOptions) -> dict[str, int]:
    """HealthFC Table 1: a supported and a refuted claim with their article's snippet, from the rebuilt dataset."""
    records = list(read_jsonl(inputs["dataset"]))
    return _write_example(examples.healthfc_examples(records, options.words, options.lang), outputs)


def healthfc_table4(inputs: StepFiles, outputs: StepFiles, options: WrongClaimsOptions) -> dict[str, int]:
    """HealthFC Table 4: the wrong claims of the row of best veracity F1, from every fold's scores and predictions."""
    scores, predictions = input_paths(inputs, "scores"), input_paths(inputs, "predictions")
    if not len(scores) == len(predictions) == len(options.entries):
        raise ValueError(f"healthfc_table4: {len(options.entries)} entries but {len(scores)} scores and "
                         f"{len(predictions)} predictions")
    claims = {str(r["id"]): {lang: str(r.get(f"claim_{lang}") or "") for lang in ("en", "de")}
              for r in read_jsonl(inputs["dataset"])}
    art = examples.healthfc_errors([(e, read_json(p)) for e, p in zip(options.entries, scores)],
                                   [(e, list(read_jsonl(p))) for e, p in zip(options.entries, predictions)],
                                   claims, options.shown, options.words, SCALE_NOTES[options.scale])
    return _write_example(art, outputs)


def clinifact_table5(inputs: StepFiles, outputs: StepFiles, options: ExamplePairsOptions) -> dict[str, int]:
    """CliniFact Table 5: one pair per label from the splits' pairs (``pairs``: test, validation, train)."""
    splits = [(Path(p).name.removesuffix("_set.csv"), _pairs(p)) for p in input_paths(inputs, "pairs")]
    return _write_example(examples.clinifact_examples(splits, options.words), outputs)


def clinifact_table7(inputs: StepFiles, outputs: StepFiles, options: ExamplePairsOptions) -> dict[str, int]:
    """CliniFact Table 7: the generative models' prompt, its template and one filled example."""
    return _write_example(examples.clinifact_prompt(_pairs(inputs["pairs"]), options.words, options.split), outputs)


def clinifact_fig3(inputs: StepFiles, outputs: StepFiles, options: Fig3Options) -> dict[str, object]:
    """``predictions`` (one per model), the ``test`` split, the optional ``studies`` (disease classes)
    and ``papers`` → ``png`` + ``pdf`` (the figure) and ``csv``/``md``/``tex`` (its numbers)."""
    from medfc.common.plots import WIDTHS  # matplotlib: imported by this step only

    papers = read_paper_numbers(inputs["papers"])
    df, notes = fig3.fig3_table(input_paths(inputs, "predictions"), options.entries, inputs["test"], inputs.get("studies"),
                                options.excluded_branches, fig3.paper_fig3(papers))
    notes = [*options.notes, *notes]
    for note in options.notes:
        log.warning("clinifact_fig3: %s", note)
    fig3.plot_fig3(df, outputs["png"], notes, fig3.legend_names(options.entries, papers))
    caption = (f"CliniFact Fig. 3 data: per class, per test type, per disease class (%); n = 0: no test pair in the group. "
               f"The figure is drawn {WIDTHS[fig3.FIGURE_WIDTH]} in wide (text width).") + ("" if not notes else " " + " ".join(notes))
    write_table(df, table_stem(outputs), caption=caption)
    log.info("clinifact_fig3: %d rows%s", len(df), "; " + "; ".join(notes) if notes else "")
    return {"rows": len(df), "notes": notes}
