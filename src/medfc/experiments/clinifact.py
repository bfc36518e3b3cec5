"""CliniFact baselines (Zhang et al., Sci Data 2025, Table 8): the pairs, the discriminative system and the
prediction files every CliniFact system writes.

Labels: the release codes 1 = evidence, 0 = inconclusive, 2 = not enough information, named here
``CLINIFACT_LABELS = ["evidence", "inconclusive", "NEI"]`` (:mod:`medfc.common.labels`).

Discriminative
    ``[CLS] claim [SEP] title abstract [SEP]`` in at most ``max_length`` (512) tokens; when too long
    the abstract is trimmed from its *start* (its end — usually results and conclusions — is kept;
    the paper's Supplementary Fig. S2); the title is kept.  Fine-tuned on the train split, the
    checkpoint with the best validation ``eval_metric`` (macro-F1) is evaluated on the test split; any
    model kind (:mod:`medfc.experiments.models`: an encoder, TF-IDF, gradient boosting) runs it.

The zero-shot generative system is :mod:`medfc.experiments.clinifact_zero_shot`, the fine-tuned one
:mod:`medfc.experiments.clinifact_finetune`. A light module (no torch, no LLM clients): a TF-IDF or
gradient-boosting job loads neither.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
import numpy as np
import pandas as pd

from medfc.common.io import write_json, write_jsonl
from medfc.common.labels import CLINIFACT_CODES, CLINIFACT_LABELS
from medfc.common.report import SkipReport
from medfc.experiments.examples import Example
from medfc.experiments.kept import keep_fitted
from medfc.experiments.metrics import validation_scores
from medfc.experiments.models import build_model
from medfc.experiments.options import CliniFactTrainOptions
from medfc.experiments.records import CliniFactPrediction, RunInfo

log = logging.getLogger(__name__)

CODE_TO_LABEL = CLINIFACT_CODES


# ------------------------------------------------------------------------------------------- data


@dataclass
class Pair:
    id: str
    claim: str
    title: str
    abstract: str
    label: str | None


def load_pairs(path: str | os.PathLike, report: SkipReport | None = None) -> list[Pair]:
    """Claim–abstract pairs from a CliniFact split CSV (the release's 22-column format).

    The id is the ``index`` column (``nctId:PMID`` when absent).  Rows without a claim or abstract,
    or with a label outside 0/1/2, are skipped with a reason.
    """
    report = report or SkipReport("clinifact-pairs")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = {"claim", "article_abstract", "label"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    pairs, seen = [], set()
    for row_no, row in enumerate(df.to_dict("records")):
        pid = str(row.get("index") or "").strip() or f"{row.get('nctId', '')}:{row.get('PMID', '')}:{row_no}"
        if pid in seen:
            report.skip(pid, "duplicate_id")
            continue
        if not row["claim"].strip():
            report.skip(pid, "missing_claim")
            continue
        if not row["article_abstract"].strip():
            report.skip(pid, "missing_abstract")
            continue
        try:
            label = CODE_TO_LABEL[int(float(row["label"]))]
        except (KeyError, ValueError):
            report.skip(pid, "unknown_label", row["label"])
            continue
        seen.add(pid)
        pairs.append(Pair(pid, row["claim"].strip(), str(row.get("article_title") or "").strip(), row["article_abstract"].strip(), label))
        report.count("pairs")
    return pairs


def pair_example(p: Pair, include_title: bool = True) -> Example:
    return Example(p.claim, p.abstract, p.label, prefix_b=p.title if include_title and p.title else None)


def prediction_record(p: Pair, split: str, system: str, labels: Sequence[str], probs: np.ndarray | None) -> CliniFactPrediction:
    pred: str | None
    prob_map: dict[str, float | None]
    if probs is None:
        pred, prob_map = None, {lab: None for lab in labels}
    else:
        pred = labels[int(np.argmax(probs))]
        prob_map = {lab: round(float(x), 6) for lab, x in zip(labels, probs)}
    return {"id": p.id, "split": split, "system": system, "label": p.label, "pred_label": pred, "probs": prob_map}


def _scores(records: Sequence[CliniFactPrediction]) -> dict[str, float]:
    return validation_scores([r["label"] for r in records], [r["pred_label"] for r in records], CLINIFACT_LABELS) if records else {}


# -------------------------------------------------------------------------------- discriminative


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
        "scores": {s: _scores([r for r in records if r["split"] == s]) for s in options.predict_splits},
        "skips": report.as_dict(),
    }
    return records, info


def write_predictions(predictions: str | os.PathLike, info_path: str | os.PathLike | None, records: Sequence[CliniFactPrediction], info: RunInfo) -> None:
    write_jsonl(predictions, records)
    if info_path is not None:
        write_json(info_path, info)
