"""The one discriminative path of every claim–text–label dataset: CliniFact's pairs, every declared dataset and the
HealthFC systems that read a claim and one text (:func:`fit_predict`: the one fit and prediction of a model on
examples; :func:`run_discriminative`: a dataset's run). A light module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medfc.common.io import read_jsonl, write_json, write_jsonl
from medfc.common.labels import CLINIFACT_LABELS
from medfc.common.report import SkipReport
from medfc.experiments.final.kept import keep_fitted
from medfc.experiments.models.sklearn_common import validation_scores
from medfc.experiments.models.kinds import FittedModel, Model, build_model
from medfc.experiments.models.options import CLINIFACT_PAIRS, SPLITS, PairData, PairsTrainOptions
from medfc.experiments.records import Example, PairPrediction, RunInfo

SYSTEM = "discriminative"  # the system of every run of this path (a dataset's rows, CliniFact's discriminative system)


@dataclass
class Pair:
    """One claim–text pair of a split (``title`` ``""``: none; ``label`` None: a new claim)."""

    id: str
    claim: str
    title: str
    abstract: str
    label: str | None


def _rows(path: str | os.PathLike) -> list[dict[str, str]]:
    """A split file's rows, every value as text: a CSV (any dialect pandas reads), or JSONL."""
    if Path(path).suffix == ".jsonl":
        return [{k: "" if v is None else str(v) for k, v in rec.items()} for rec in read_jsonl(path)]
    import pandas as pd

    return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")


def load_pairs(path: str | os.PathLike, report: SkipReport | None = None, data: PairData = CLINIFACT_PAIRS) -> list[Pair]:
    """The pairs of one split file; bad rows skipped with a reason, a missing field an error."""
    report = report or SkipReport(f"{data.dataset}-pairs")
    rows = _rows(path)
    f = data.fields
    missing = sorted({f["claim"], f["evidence"], f["label"]} - set(rows[0])) if rows else []
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")
    pairs, seen = [], set()
    for row_no, row in enumerate(rows):
        pid = str(row.get(f["id"] or "") or "").strip() or str(row_no)
        if pid in seen:
            report.skip(pid, "duplicate_id")
            continue
        if not row[f["claim"]].strip():
            report.skip(pid, "missing_claim")
            continue
        if not row[f["evidence"]].strip():
            report.skip(pid, "missing_abstract")
            continue
        label = data.label_of(row[f["label"]])
        if label is None:
            report.skip(pid, "unknown_label", row[f["label"]])
            continue
        seen.add(pid)
        title = str(row.get(f["title"] or "") or "").strip() if f.get("title") else ""
        pairs.append(Pair(pid, row[f["claim"]].strip(), title, row[f["evidence"]].strip(), label))
        report.count("pairs")
    return pairs


def pair_example(p: Pair, include_title: bool = True) -> Example:
    """The text pair a discriminative model reads: the claim, then the text (title first)."""
    return Example(p.claim, p.abstract, p.label, prefix_b=p.title if include_title and p.title else None)


def prediction_record(p: Pair, split: str, system: str, labels: Sequence[str], probs: np.ndarray | None) -> PairPrediction:
    """The record of one pair, probabilities rounded to 6 places (``probs`` None: no prediction)."""
    pred = None if probs is None else labels[int(np.argmax(probs))]
    prob_map: dict[str, float | None] = (dict.fromkeys(labels) if probs is None
                                         else {lab: round(float(x), 6) for lab, x in zip(labels, probs)})
    return {"id": p.id, "split": split, "system": system, "label": p.label, "pred_label": pred, "probs": prob_map}


def record_scores(records: Sequence[PairPrediction], classes: Sequence[str] = CLINIFACT_LABELS) -> dict[str, float]:
    """The validation scores of ``records`` over ``classes`` (``{}`` for none)."""
    return validation_scores([r["label"] for r in records], [r["pred_label"] for r in records], list(classes)) if records else {}


def scores_by_split(records: Sequence[PairPrediction], splits: Sequence[str], classes: Sequence[str] = CLINIFACT_LABELS) -> dict[str, dict[str, float]]:
    """Each split of ``splits`` → :func:`record_scores` of its records (a run's info ``scores``)."""
    return {s: record_scores([r for r in records if r["split"] == s], classes) for s in splits}


def write_predictions(predictions: str | os.PathLike, info_path: str | os.PathLike, records: Sequence[PairPrediction],
                      info: RunInfo) -> None:
    """A run's ``predictions.jsonl`` (one record a line) and its ``info.json``."""
    write_jsonl(predictions, records)
    write_json(info_path, info)


def fit_predict(model: Model, labels: Sequence[str], train: Sequence[Example], validation: Sequence[Example],
                predict: Mapping[str, Sequence[Example]], *, checkpoint_dir: str | None, trim: str,
                desc: str) -> tuple[FittedModel, dict[str, np.ndarray]]:
    """``model`` fitted on ``train`` (choosing on ``validation``), and its probabilities of each ``predict`` set."""
    fitted = model.fit(list(train), list(labels), list(validation) or None, checkpoint_dir=checkpoint_dir, trim=trim, desc=desc)
    return fitted, {name: fitted.probs(list(examples), desc=f"{desc}/{name}") for name, examples in predict.items()}


def run_discriminative(files: Mapping[str, str | os.PathLike], options: PairsTrainOptions, *, threads: int | None = None,
                       report: SkipReport | None = None) -> tuple[list[PairPrediction], RunInfo]:
    """Fit ``options.train`` on train and predict ``predict_splits``; kept with a ``checkpoint_dir``."""
    data = options.data
    report = report or SkipReport(f"{data.dataset}-discriminative")
    splits = {s: load_pairs(files[s], report, data) for s in SPLITS}

    def examples(split: str) -> list[Example]:
        return [pair_example(p, options.include_title) for p in splits[split]]

    model = build_model(options.train, threads)
    fitted, probs = fit_predict(model, data.classes, examples("train"), examples("validation"),
                                {s: examples(s) for s in options.predict_splits}, checkpoint_dir=options.checkpoint_dir,
                                trim="left", desc=data.dataset)
    if options.checkpoint_dir is not None:
        keep_fitted(fitted, options.checkpoint_dir, {
            "dataset": data.dataset, "system": SYSTEM, "kind": options.train.kind, "model": options.train.model,
            "labels": list(data.classes), "config": options.train.as_dict(), "include_title": options.include_title, "trim": "left",
            "input_fields": ["claim", "evidence"], "optional_fields": ["title"] if data.fields.get("title") else []})
    records = [prediction_record(p, split, SYSTEM, data.classes, pr) for split in options.predict_splits
               for p, pr in zip(splits[split], probs[split])]
    info: RunInfo = {"system": SYSTEM, "config": model.config.as_dict(), "train": fitted.result.as_dict(),
                     "encode": fitted.encode_stats.as_dict(), "sizes": {k: len(v) for k, v in splits.items()},
                     "scores": scores_by_split(records, options.predict_splits, data.classes), "skips": report.as_dict()}
    return records, info
