"""The HealthFC systems and the options each one depends on (the labels: :mod:`medfc.common.labels`).

A light module (no torch): the workflow reads it when it plans the DAG, so that the list of systems
and the keys each system's rule passes (and reruns on) are written once, here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from medfc.common.labels import CLINIFACT_LABELS, EVIDENCE_LABELS, LOE_LABELS, VERACITY_LABELS  # noqa: F401 (the labels: medfc.common.labels)
from medfc.common.options import Options

EVIDENCE_SOURCES = ("web", "pubmed", "wikipedia")  # medfc.healthfc.evidence: where open-domain evidence is searched
# evidence retrieved for the claim from a source instead of the article: three classes (Table 5, "Google
# snippets" = retrieved_web) and supported vs refuted on the supported / refuted claims (the open-domain comparison)
RETRIEVED_SYSTEMS = tuple(f"retrieved_{s}" for s in EVIDENCE_SOURCES)
OPEN_DOMAIN_SYSTEMS = tuple(f"open_domain_{s}" for s in EVIDENCE_SOURCES)
ARTICLE_SYSTEMS = ("pipeline", "joint", "oracle", "claims_only", "gold_explanations", "level_of_evidence")
SYSTEMS = ARTICLE_SYSTEMS + RETRIEVED_SYSTEMS + OPEN_DOMAIN_SYSTEMS
EVIDENCE_SYSTEMS = ("pipeline", "joint")  # they select evidence sentences themselves
TABLE3_SYSTEMS = ("pipeline", "joint", "oracle")
TABLE5_SYSTEMS = ("claims_only", *RETRIEVED_SYSTEMS, "gold_explanations", "level_of_evidence")


def evidence_source(system: str) -> str | None:
    """The source a system's retrieved evidence comes from (``retrieved_web`` → ``web``); None for the others."""
    for prefix in ("retrieved_", "open_domain_"):
        if system.startswith(prefix) and system[len(prefix):] in EVIDENCE_SOURCES:
            return system[len(prefix):]
    return None


@dataclass(frozen=True)
class SingleOptions(Options):
    """oracle, claims_only, gold_explanations: one classifier."""

    val_fraction: float


@dataclass(frozen=True)
class LevelOptions(Options):
    """level_of_evidence: one classifier over high / moderate / low on the input ``loe_input``."""

    loe_input: Literal["claim", "claim+evidence", "claim+explanation", "claim+document"]
    val_fraction: float


@dataclass(frozen=True)
class RetrievedOptions(Options):
    """retrieved_<source>, open_domain_<source>: one classifier on ``[claim; SEP; the first
    ``retrieved_top_k`` snippets of the source, in rank order]``."""

    retrieved_top_k: int
    val_fraction: float


@dataclass(frozen=True)
class PipelineOptions(Options):
    """pipeline: an evidence selector (trained with ``evidence_train`` over the training config),
    then a veracity classifier on the selected sentences."""

    threshold: float
    max_evidence: int
    neg_ratio: float | None
    val_fraction: float
    evidence_train: dict[str, Any]


@dataclass(frozen=True)
class JointOptions(Options):
    """joint: one encoder with an evidence head and a label head."""

    threshold: float
    max_evidence: int
    evidence_weight: float
    joint_pool: Literal["gold", "pred"]
    val_fraction: float


SYSTEM_OPTIONS: dict[str, type[Options]] = {
    "pipeline": PipelineOptions,
    "joint": JointOptions,
    "oracle": SingleOptions,
    "claims_only": SingleOptions,
    "gold_explanations": SingleOptions,
    "level_of_evidence": LevelOptions,
    **{s: RetrievedOptions for s in RETRIEVED_SYSTEMS + OPEN_DOMAIN_SYSTEMS},
}


def system_option_keys(system: str) -> list[str]:
    """The ``experiments.healthfc`` keys a system's runs depend on (its rule passes just these)."""
    if system not in SYSTEM_OPTIONS:
        raise ValueError(f"unknown HealthFC system {system!r}; known: {SYSTEMS}")
    return [f.name for f in fields(SYSTEM_OPTIONS[system])]
