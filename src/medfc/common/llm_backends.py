"""The LLM backends, one registry: the client each builds (:meth:`LLMBackend.build`) and whether it runs the
model in the job's own process (local) or calls a server. In ``medfc.common`` so the plan reads it without loading
the LLM layer; clients are imported when built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from medfc.common.options import OneOf
from medfc.common.registry import load, lookup


@dataclass(frozen=True)
class LLMBackend:
    name: str
    local: bool  # the model runs in the job's process (else on a server the job calls)
    client: str  # "module:Class" of its client, imported when one is built
    positional: tuple[str, ...] = ()  # keyword arguments its client takes before the model, positionally

    def build(self, model: str, **kwargs: Any) -> Any:
        first = [kwargs.pop(k) for k in self.positional]
        return load(self.client)(*first, model, **kwargs)


LLM_BACKENDS: dict[str, LLMBackend] = {
    b.name: b for b in (
        LLMBackend("transformers", local=True, client="medfc.llm.local:TransformersLM"),
        LLMBackend("openai", local=False, client="medfc.llm.openai:OpenAICompatibleLM", positional=("base_url",)),
    )
}


# an options field naming a backend (the zero-shot scorer's, MedSNIP's LLMs'): checked against the registry when the
# options are built, so a backend registered later is one; the Literal is the type checkers' (the names at import)
BackendName = Annotated[Literal[tuple(LLM_BACKENDS)], OneOf(lambda: tuple(LLM_BACKENDS))]  # type: ignore[valid-type]


def llm_backend(name: str) -> LLMBackend:
    """The backend called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(LLM_BACKENDS, name, "LLM backend")


def runs_locally(name: str | None) -> bool:
    """Whether backend ``name`` runs its model in the job's own process (False for an unknown or missing one)."""
    backend = LLM_BACKENDS.get(name or "")
    return backend is not None and backend.local
