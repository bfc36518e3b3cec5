"""The discriminative CliniFact baseline (Zhang et al., Sci Data 2025, Table 8).

``[CLS] claim [SEP] title abstract [SEP]`` in at most ``max_length`` (512) tokens; when too long the abstract is
trimmed from its *start* (its end — usually results and conclusions — is kept; the paper's Supplementary Fig.
S2); the title is kept.  Fine-tuned on the train split, the checkpoint with the best validation ``eval_metric``
(macro-F1) is evaluated on the test split; any model kind (:mod:`medfc.experiments.models`: an encoder, TF-IDF,
gradient boosting) runs it.

The pairs, their records and scores and the prediction files every CliniFact system writes are
:mod:`medfc.experiments.clinifact_data`'s; the zero-shot generative system is
:mod:`medfc.experiments.clinifact_zero_shot`, the fine-tuned one :mod:`medfc.experiments.clinifact_finetune`.
A light module (no torch, no LLM clients): a TF-IDF or gradient-boosting job loads neither.
"""

from __future__ import annotations

import logging
import os

from medfc.common.labels import CLINIFACT_LABELS
from medfc.common.report import SkipReport
from medfc.experiments.clinifact_data import load_pairs, pair_example, prediction_record, scores_by_split
from medfc.experiments.examples import Example
from medfc.experiments.kept import keep_fitted
from medfc.experiments.models import build_model
from medfc.experiments.options import CliniFactTrainOptions
from medfc.experiments.records import CliniFactPrediction, RunInfo

log = logging.getLogger(__name__)


def run_discriminative(
    train_csv: str | os.PathLike,
    validation_csv: str | os.PathLike,
    test_csv: str | os.PathLike,
    options: CliniFactTrainOptions,
    *,
    threads: int | None = None,
    report: SkipReport | None = None,
) -> tuple[list[CliniFactPrediction], RunInfo]:
    """Fit the model of ``options.train`` on train, choosing on validation what its kind chooses (an encoder's
    best checkpoint: in ``checkpoint_dir``, or in memory without one), predict ``predict_splits``."""
    report = report or SkipReport("clinifact-discriminative")
    splits = {"train": load_pairs(train_csv, report), "validation": load_pairs(validation_csv, report), "test": load_pairs(test_csv, report)}
    model = build_model(options.train, threads)

    def examples(split: str) -> list[Example]:
        return [pair_example(p, options.include_title) for p in splits[split]]

    fitted = model.fit(examples("train"), CLINIFACT_LABELS, examples("validation"), checkpoint_dir=options.checkpoint_dir, trim="left", desc="clinifact")
    if options.checkpoint_dir is not None:  # kept for medfc predict (medfc.experiments.kept)
        keep_fitted(fitted, options.checkpoint_dir, {
            "dataset": "clinifact", "system": "discriminative", "kind": options.train.kind, "model": options.train.model,
            "labels": list(CLINIFACT_LABELS), "config": options.train.as_dict(), "include_title": options.include_title, "trim": "left",
            "input_fields": ["claim", "abstract"], "optional_fields": ["title"]})
    records: list[CliniFactPrediction] = []
    for split in options.predict_splits:
        probs = fitted.probs(examples(split), desc=f"clinifact/{split}")
        records.extend(prediction_record(p, split, "discriminative", CLINIFACT_LABELS, pr) for p, pr in zip(splits[split], probs))
    info: RunInfo = {
        "system": "discriminative",
        "config": model.config.as_dict(),
        "train": fitted.result.as_dict(),
        "encode": fitted.encode_stats.as_dict(),
        "sizes": {k: len(v) for k, v in splits.items()},
        "scores": scores_by_split(records, options.predict_splits),
        "skips": report.as_dict(),
    }
    return records, info

