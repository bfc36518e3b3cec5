"""The registry of MedSNIP's verifier kinds (``medsnip.verifiers[i].kind``): the plan, the verify step and the
verifier look a kind up, never compare its name. A light module (read when Snakemake plans the DAG)."""

from __future__ import annotations

from dataclasses import dataclass

from medfc.common.registry import lookup

# the retrieval loop's prompts by their role in it (medfc.medsnip.verify)
RAG_PROMPTS = {"turn": "medsnip/rag_turn", "final": "medsnip/rag_final", "repair": "llm/json_repair"}


@dataclass(frozen=True)
class VerifierKind:
    """One kind of verifier."""

    name: str
    prompts: tuple[str, ...]  # the prompt files it reads (in the rule's params: editing one reruns its jobs)
    full_context: bool = False  # a single call showing the unit's question and answer beside it (context)
    retrieves: bool = False  # the retrieval loop: medsnip.retrieval's searchers; verdicts gated at confidence >= tau

    @property
    def prompt(self) -> str:
        """A single-call kind's one prompt."""
        (only,) = self.prompts
        return only


VERIFIER_KINDS: dict[str, VerifierKind] = {
    k.name: k for k in (
        VerifierKind("claim_only", ("medsnip/verify_claim_only",)),
        VerifierKind("full_context", ("medsnip/verify_full_context",), full_context=True),
        VerifierKind("retrieval", tuple(sorted(RAG_PROMPTS.values())), retrieves=True),
    )
}


def verifier_kind(name: str) -> VerifierKind:
    """The kind called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(VERIFIER_KINDS, name, "MedSNIP verifier kind")


def kind_names() -> tuple[str, ...]:
    return tuple(VERIFIER_KINDS)
