"""The options of the scoring steps (:mod:`medfc.scoring.steps`), in a light module (no numpy) the plan reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from medfc.common.options import Options


@dataclass(frozen=True)
class EvidenceScoring(Options):
    """The ``scoring`` keys of the evidence scores (only the evidence-selecting systems depend on them)."""

    lambdas: tuple[float, ...]
    reported_lambda: float
    max_pred_evidence: int


@dataclass(frozen=True)
class HealthFCScoreOptions(Options):
    """A HealthFC run: its system, language, the ``labels`` its system predicts and the ``scoring`` keys its scores
    depend on (``evidence``: null but for the evidence-selecting systems, so those keys never rerun the others)."""

    system: str
    lang: Literal["en", "de"]
    labels: tuple[str, ...]
    abstain: Literal["drop", "as_false", "as_true"]
    evidence: EvidenceScoring | None


@dataclass(frozen=True)
class PairsScoreOptions(Options):
    """A pairs dataset's run (CliniFact's or a declared dataset's), its test split scored; ``n_resamples`` and
    ``seed`` (``scoring.bootstrap``) make the bootstrap intervals."""

    dataset: str
    classes: tuple[str, ...]
    system: str
    n_resamples: int
    seed: int
