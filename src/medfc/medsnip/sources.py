"""The registry of MedSNIP's answer sources (:class:`AnswerSource`): the plan, the prepare step and the scoring
look a source up, never compare its name. Each has its section ``medsnip.datasets.<name>`` in the schema.
A light module (read when Snakemake plans the DAG); a loader is imported when a job reads answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from medfc.common.registry import load, lookup
from medfc.common.report import SkipReport
from medfc.medsnip.records import Answer

Loader = Callable[[str, SkipReport, object], list[Answer]]  # (the answers' file, the step's report, its PrepareOptions) → answers


@dataclass(frozen=True)
class AnswerSource:
    """One source of answers. ``loader``: ``"module:function"``, ``(path, report, options) → answers``.
    ``healthfc_dataset``: its answers are the workflow's HealthFC dataset (built as needed), else the file its
    section's ``path`` names. ``rewrites``: its claims may be rewritten as the statements they assert (its section's
    ``rewrite_claims``). ``human_units``: it ships human units, the modes ``human_atoms`` and ``human_snippets``
    (its section's ``human_units``). ``given_atoms``: the group mode may take its own atoms (``medsnip.atoms_from``).
    ``own_level``: scored at its section's ``level`` against its ``baseline_mode`` (else per answer, against
    atoms). ``unlabelled_nei``: its answers without a label are NOT ENOUGH INFO claims, verified but never scored.
    ``hub``: its section's ``path`` may be null, and its answers are then read from its file on the Hugging Face Hub
    at the commit and SHA-256 its section's ``hf`` pins, downloaded where Snakemake runs (the rule ``medsnip_fetch``)."""

    name: str
    title: str
    loader: str
    healthfc_dataset: bool = False
    rewrites: bool = False
    human_units: bool = False
    given_atoms: bool = False
    own_level: bool = False
    unlabelled_nei: bool = False
    hub: bool = False

    def rewrites_claims(self, section: Mapping[str, object]) -> bool:
        """Whether its claims are rewritten, by its section ``medsnip.datasets.<name>`` (a source that allows it)."""
        return self.rewrites and bool(section["rewrite_claims"])

    def load(self) -> Loader:
        """Its loader, imported now."""
        return load(self.loader)


ANSWER_SOURCES: dict[str, AnswerSource] = {
    s.name: s for s in (
        AnswerSource("healthfc", "HealthFC", "medfc.medsnip.answers:healthfc_source", healthfc_dataset=True, rewrites=True,
                     unlabelled_nei=True),
        AnswerSource("bench", "MedSNIP-Bench", "medfc.medsnip.answers:bench_source", human_units=True, given_atoms=True,
                     own_level=True),
        AnswerSource("medhallu", "MedHallu", "medfc.medsnip.answers:medhallu_source", hub=True),
    )
}


def answer_source(name: str) -> AnswerSource:
    """The source called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(ANSWER_SOURCES, name, "MedSNIP answer source")


def enabled_sources(datasets: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The sources whose section of ``medsnip.datasets`` is enabled, in the registry's order."""
    return [name for name in ANSWER_SOURCES if datasets[name]["enabled"]]


def source_names() -> tuple[str, ...]:
    return tuple(ANSWER_SOURCES)
