"""What the experiments write: a prediction record per claim, a job's ``info.json`` and a kept model's card
(typing only)."""

from __future__ import annotations

from typing import TypedDict

from medfc.common.jsontypes import JSONObject


class HealthFCPrediction(TypedDict):
    """One test claim of a HealthFC run (:func:`medfc.experiments.healthfc.runs.run_fold`)."""

    id: str
    fold: int
    system: str
    lang: str
    label: str  # the gold label (the system's: veracity, or its level of evidence)
    pred_label: str
    probs: dict[str, float]  # every label of the system, rounded to 6 places
    evidence_ids: list[int]  # the gold evidence sentences
    pred_evidence_ids: list[int] | None  # the sentences a pipeline or the joint encoder selected (else None)
    evidence: list[str]  # the evidence texts the system read
    gold_evidence: list[str]


class PairPrediction(TypedDict):
    """One pair of a pairs dataset's run (:func:`medfc.experiments.pairs.prediction_record`)."""

    id: str
    split: str
    system: str
    label: str | None  # the gold label (None: a pair without one)
    pred_label: str | None  # None: no answer option was scored (a generative system)
    probs: dict[str, float | None]


class PredictedRow(TypedDict, total=False):
    """One line of ``medfc predict``'s output; ``evidence_ids`` only from a pipeline or joint system."""

    id: str
    label: str
    probabilities: dict[str, float]
    evidence_ids: list[int]


# a job's info.json as it is built and written: what the run did (its config, sizes, scores, skips, provenance)
RunInfo = dict[str, object]
# a kept model's card as written (:func:`medfc.experiments.final.kept.keep_fitted`) ...
CardFields = dict[str, object]
# ... and as read back from its JSON (:func:`medfc.experiments.final.kept.read_card`)
ModelCard = JSONObject
