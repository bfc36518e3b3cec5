"""The registry of MedSNIP's answer sources, each with its section ``medsnip.datasets.<name>`` in the schema: the
plan, the prepare step and the scoring look a source up, never compare its name. A light module (read when
Snakemake plans the DAG)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from medfc.common.registry import lookup


@dataclass(frozen=True)
class AnswerSource:
    """One source of answers (what each flag allows is its section's key of the same name, if any)."""

    name: str
    title: str
    loader: str  # "module:function", (path, report, options) → answers
    healthfc_dataset: bool = False  # its answers are the workflow's HealthFC dataset, else the file its path names
    rewrites: bool = False  # its claims may be rewritten as the statements they assert (rewrite_claims)
    human_units: bool = False  # it ships human units: the modes human_atoms and human_snippets
    given_atoms: bool = False  # the group mode may take its own atoms (medsnip.atoms_from)
    own_level: bool = False  # scored at its section's level against its baseline_mode (else per answer, vs atoms)
    unlabelled_nei: bool = False  # its answers without a label are NOT ENOUGH INFO claims, verified, never scored
    hub: bool = False  # path may be null: its file on the Hugging Face Hub at the pinned hf commit (medsnip_fetch)

    def rewrites_claims(self, section: Mapping[str, object]) -> bool:
        """Whether its claims are rewritten, by its section ``medsnip.datasets.<name>`` (a source that allows it)."""
        return self.rewrites and bool(section["rewrite_claims"])


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
