"""Workflow steps of the papers' example tables (workflow/rules/examples.smk): HealthFC Tables 1 and 4, CliniFact
Tables 5 and 7 (:mod:`medfc.tables.examples`), each written as CSV, Markdown, LaTeX and HTML on one stem.
"""

from __future__ import annotations

import logging
from pathlib import Path

from medfc.common.io import input_paths, read_json, read_jsonl, table_stem, write_table
from medfc.common.stepfiles import StepFiles
from medfc.tables import examples
from medfc.tables.options import WrongClaimsOptions, ExampleClaimsOptions, ExamplePairsOptions

log = logging.getLogger(__name__)

SCALE_NOTES = {"smoke": "A smoke-scale run (training capped by experiments.smoke): its errors show that the pipeline runs, nothing about the models.",
               "cpu": "A run of the CPU recipe on real data (experiments.scale cpu).", "paper": ""}


def _write(artifact: examples.Artifact, outputs: StepFiles) -> dict[str, int]:
    stem = table_stem(outputs)
    formats = ("csv", "md", "tex", "html") if "html" in outputs else ("csv", "md", "tex")
    write_table(artifact.frame(), stem, caption=artifact.caption, formats=formats, latex=artifact.latex)
    log.info("%s: %d rows", stem.name, len(artifact.rows))
    return {"rows": len(artifact.rows)}


def _pairs(path: str) -> list[dict[str, str]]:
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")


def healthfc_table1(inputs: StepFiles, outputs: StepFiles, options: ExampleClaimsOptions) -> dict[str, int]:
    """HealthFC Table 1: a supported and a refuted claim with their article's snippet, from the rebuilt dataset."""
    records = list(read_jsonl(inputs["dataset"]))
    return _write(examples.healthfc_examples(records, options.words, options.lang), outputs)


def healthfc_table4(inputs: StepFiles, outputs: StepFiles, options: WrongClaimsOptions) -> dict[str, int]:
    """HealthFC Table 4: the wrong claims of the row of best veracity F1, from every fold's scores and predictions."""
    scores, predictions = input_paths(inputs, "scores"), input_paths(inputs, "predictions")
    if not len(scores) == len(predictions) == len(options.entries):
        raise ValueError(f"healthfc_table4: {len(options.entries)} entries but {len(scores)} scores and {len(predictions)} predictions")
    claims = {str(r["id"]): {lang: str(r.get(f"claim_{lang}") or "") for lang in ("en", "de")} for r in read_jsonl(inputs["dataset"])}
    entries = list(options.entries)
    art = examples.healthfc_errors([(e, read_json(p)) for e, p in zip(entries, scores)],
                                   [(e, list(read_jsonl(p))) for e, p in zip(entries, predictions)],
                                   claims, options.shown, options.words, SCALE_NOTES[options.scale])
    return _write(art, outputs)


def clinifact_table5(inputs: StepFiles, outputs: StepFiles, options: ExamplePairsOptions) -> dict[str, int]:
    """CliniFact Table 5: one pair per label from the splits' pairs (``pairs``: test, validation, train)."""
    splits = [(Path(p).name.removesuffix("_set.csv"), _pairs(p)) for p in input_paths(inputs, "pairs")]
    return _write(examples.clinifact_examples(splits, options.words), outputs)


def clinifact_table7(inputs: StepFiles, outputs: StepFiles, options: ExamplePairsOptions) -> dict[str, int]:
    """CliniFact Table 7: the generative models' prompt, its template and one filled example."""
    return _write(examples.clinifact_prompt(_pairs(inputs["pairs"]), options.words, options.split), outputs)
