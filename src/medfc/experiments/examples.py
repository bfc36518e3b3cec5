"""What the experiments read: a HealthFC claim as the systems see it, and the example (a text pair with its gold
label) every model kind learns from (standard library only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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

