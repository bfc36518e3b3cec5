"""What every CliniFact system reads and writes: the claim–abstract pairs of a split, the example a pair
becomes for a discriminative model, one prediction record per pair, the scores of a run's records per split
and the prediction files.

Labels: the release codes 1 = evidence, 0 = inconclusive, 2 = not enough information, named here
``CLINIFACT_LABELS = ["evidence", "inconclusive", "NEI"]`` (:mod:`medfc.common.labels`).

The systems' runners (:mod:`medfc.experiments.clinifact` discriminative,
:mod:`~medfc.experiments.clinifact_zero_shot` and :mod:`~medfc.experiments.clinifact_finetune`) import this module and none of each other. A light module (pandas
and numpy; no torch, no LLM clients).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from medfc.common.io import write_json, write_jsonl
from medfc.common.labels import CLINIFACT_CODES, CLINIFACT_LABELS
from medfc.common.report import SkipReport
from medfc.experiments.examples import Example
from medfc.experiments.metrics import validation_scores
from medfc.experiments.records import CliniFactPrediction, RunInfo

CODE_TO_LABEL = CLINIFACT_CODES


@dataclass
class Pair:
    """One claim–abstract pair of a split: its id, the claim, the publication's title and abstract, its gold
    label (``None`` for a pair without one, as ``medfc predict`` reads new claims)."""

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
    """The text pair a discriminative model reads: the claim, then the abstract with the title before it
    (``include_title``, when the pair has one)."""
    return Example(p.claim, p.abstract, p.label, prefix_b=p.title if include_title and p.title else None)


def prediction_record(p: Pair, split: str, system: str, labels: Sequence[str], probs: np.ndarray | None) -> CliniFactPrediction:
    """The record of one pair: its gold label, the label of the highest probability and every label's
    probability rounded to 6 places; ``probs`` ``None`` (a generative system that scored no option) gives no
    prediction and ``None`` for each probability."""
    pred: str | None
    prob_map: dict[str, float | None]
    if probs is None:
        pred, prob_map = None, {lab: None for lab in labels}
    else:
        pred = labels[int(np.argmax(probs))]
        prob_map = {lab: round(float(x), 6) for lab, x in zip(labels, probs)}
    return {"id": p.id, "split": split, "system": system, "label": p.label, "pred_label": pred, "probs": prob_map}


def record_scores(records: Sequence[CliniFactPrediction]) -> dict[str, float]:
    """The validation scores (:func:`medfc.experiments.metrics.validation_scores`) of ``records`` over
    ``CLINIFACT_LABELS``; ``{}`` for none."""
    return validation_scores([r["label"] for r in records], [r["pred_label"] for r in records], CLINIFACT_LABELS) if records else {}


def scores_by_split(records: Sequence[CliniFactPrediction], splits: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each split of ``splits`` → :func:`record_scores` of its records (a run's info ``scores``)."""
    return {s: record_scores([r for r in records if r["split"] == s]) for s in splits}


def write_predictions(predictions: str | os.PathLike, info_path: str | os.PathLike | None, records: Sequence[CliniFactPrediction], info: RunInfo) -> None:
    """A run's ``predictions.jsonl`` (one record a line) and, when ``info_path`` is given, its ``info.json``."""
    write_jsonl(predictions, records)
    if info_path is not None:
        write_json(info_path, info)
