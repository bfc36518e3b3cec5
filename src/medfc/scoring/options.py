"""The options of the scoring steps (:mod:`medfc.scoring.steps`), in a light module (no numpy): the plan builds
them when Snakemake plans the DAG (:meth:`medfc.plan.Plan.job_options`) and the job receives what it serialised."""

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
    """The run's ``system`` and ``lang``, the ``labels`` its system predicts (its record's, given by the plan) and
    the ``scoring`` keys its scores depend on: ``evidence`` for the evidence-selecting systems (null for the
    others, so those keys never rerun them)."""

    system: str
    lang: Literal["en", "de"]
    labels: tuple[str, ...]
    abstain: Literal["drop", "as_false", "as_true"]
    evidence: EvidenceScoring | None


@dataclass(frozen=True)
class PairsScoreOptions(Options):
    """A pairs dataset's run (CliniFact's or a declared dataset's): the dataset, its classes, the system
    (``discriminative``, ``zero_shot``, ``fine_tuned``); the test split is scored. ``n_resamples`` and ``seed``
    (``scoring.bootstrap``) make the bootstrap intervals of accuracy and macro-F1."""

    dataset: str
    classes: tuple[str, ...]
    system: str
    n_resamples: int
    seed: int
