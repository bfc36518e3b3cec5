"""Workflow steps of the scoring stage (workflow/rules/scoring.smk): one scores JSON per prediction file;
unscorable records are skipped with a counted reason (``report``, and ``skipped`` in the scores)."""

from __future__ import annotations

import logging

from medfc.common.io import write_json
from medfc.common.stepfiles import StepFiles
from medfc.common.report import SkipReport
from medfc.scoring.options import PairsScoreOptions, HealthFCScoreOptions
from medfc.scoring.predictions import read_predictions, score_pairs, score_healthfc, sentence_counts

log = logging.getLogger(__name__)


def _write(scores: dict[str, object], report: SkipReport, outputs: StepFiles) -> dict[str, object]:
    scores["skipped"] = {"n": len(report.skipped), "by_reason": report.reasons()}
    write_json(outputs["scores"], scores)
    report.write(outputs["report"])
    log.info("scores written to %s (%d records skipped)", outputs["scores"], len(report.skipped))
    return scores


def healthfc(inputs: StepFiles, outputs: StepFiles, options: HealthFCScoreOptions) -> dict[str, object]:
    """``predictions`` (+ the ``dataset``: each claim's candidate sentences) → ``scores`` (JSON) + ``report``."""
    report = SkipReport(f"scoring.healthfc.{options.system}")
    records = read_predictions(inputs["predictions"], report)
    scores = score_healthfc(records, options.system, labels=options.labels, evidence=options.evidence, abstain=options.abstain,
                            n_sentences=sentence_counts(inputs["dataset"], options.lang))
    return _write(scores, report, outputs)


def pairs(inputs: StepFiles, outputs: StepFiles, options: PairsScoreOptions) -> dict[str, object]:
    """A pairs dataset's ``predictions`` → ``scores`` (JSON, test split) + ``report``."""
    report = SkipReport(f"scoring.{options.dataset}.{options.system}")
    return _write(score_pairs(read_predictions(inputs["predictions"], report), options.system, dataset=options.dataset,
                              classes=options.classes, n_resamples=options.n_resamples, seed=options.seed), report, outputs)
