"""What the experiments read and write: the example every model kind learns from (a text pair with its gold label)
and a HealthFC claim as the systems see it; a prediction record per claim, a job's ``info.json`` and a kept model's
card (standard library and typing only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medfc.common.jsontypes import JSONObject


@dataclass
class Example:
    """One classification example: text (pair) and gold label name (``None`` when unknown)."""

    text_a: str
    text_b: str | None = None
    label: str | None = None
    prefix_b: str | None = None  # kept in front of text_b, never trimmed (e.g. a title)


@dataclass
class Claim:
    """A HealthFC claim in one language, with its article's sentences and the gold evidence's indices."""

    id: str
    claim: str
    label: str
    evidence_level: str
    explanation: str
    sentences: list[str]
    evidence_ids: list[int]

    @property
    def gold_evidence(self) -> list[str]:
        return [self.sentences[i] for i in self.evidence_ids]


def join_sentences(sentences: Sequence[str]) -> str:
    """Sentences as one text: each stripped, empty ones left out, one space between."""
    return " ".join(s.strip() for s in sentences if s and s.strip())


# One test claim of a HealthFC run (:func:`medfc.experiments.healthfc.runs.run_fold`): id, fold, system, lang, label
# (the system's gold label), pred_label, probs (every label of the system, rounded to 6 places), evidence_ids (the
# gold sentences), pred_evidence_ids (those a pipeline or the joint encoder selected, else None), evidence (the texts
# the system read) and gold_evidence.
HealthFCPrediction = dict[str, Any]
# One pair of a pairs dataset's run (:func:`medfc.experiments.pairs.prediction_record`): id, split, system, label (None:
# a pair without one), pred_label (None: no answer option scored) and probs.
PairPrediction = dict[str, Any]
# One line of ``medfc predict``'s output: id, label, probabilities and, from a pipeline or joint system, evidence_ids.
PredictedRow = dict[str, Any]
# a job's info.json as it is built and written: what the run did (its config, sizes, scores, skips, provenance)
RunInfo = dict[str, object]
# a kept model's card as written (:func:`medfc.experiments.final.kept.keep_fitted`) ...
CardFields = dict[str, object]
# ... and as read back from its JSON (:func:`medfc.experiments.final.kept.read_card`)
ModelCard = JSONObject
