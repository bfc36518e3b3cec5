"""The one client interface every LLM backend implements, and the call accounting.

* :class:`GenerationParams` — what a chat call asks for (max tokens, temperature, JSON mode).
* :class:`Completion` — one answer with its prompt and completion tokens, whether it came from a
  cache, and the error of a call that failed for good (the text is then empty; nothing raises).
* :class:`Ledger` — counts every call per *purpose* (``decompose``, ``verify``, ...): calls, cache
  hits, failed calls, prompt and completion tokens, malformed and repaired structured answers, so a
  step can report calls, tokens and cost.
* :class:`LLMClient` — ``chat(conversations, params, purpose)`` for a batch of conversations, and
  ``score_options(prompts, options)`` (summed log-probability of each option after each plain
  prompt; used by the CliniFact zero-shot baseline). ``identity()`` names the model and backend for
  cache keys; it never contains a credential.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Message = Mapping[str, str]
Conversation = Sequence[Message]

LEDGER_KEYS = ("calls", "cache_hits", "failed", "prompt_tokens", "completion_tokens", "usage_missing", "malformed", "repaired")


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters of one chat call (greedy when ``temperature`` is 0)."""

    max_tokens: int
    temperature: float
    json_mode: bool

    def as_dict(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature, "json_mode": self.json_mode}


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False
    finish_reason: str | None = None
    error: str | None = None
    usage_known: bool = True

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Prices:
    """US dollars per million prompt (input) and completion (output) tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


class Ledger:
    """Per-purpose counters of calls and tokens (see module docstring)."""

    def __init__(self) -> None:
        self.by_purpose: dict[str, Counter] = defaultdict(Counter)

    def record(self, purpose: str, completion: Completion) -> None:
        c = self.by_purpose[purpose]
        c["calls"] += 1
        c["cache_hits"] += int(completion.cached)
        c["failed"] += int(not completion.ok)
        c["prompt_tokens"] += int(completion.prompt_tokens)
        c["completion_tokens"] += int(completion.completion_tokens)
        c["usage_missing"] += int(not completion.usage_known)

    def count(self, purpose: str, key: str, n: int = 1) -> None:
        self.by_purpose[purpose][key] += n

    def total(self) -> dict[str, int]:
        out: Counter = Counter()
        for c in self.by_purpose.values():
            out.update(c)
        return {k: int(out.get(k, 0)) for k in LEDGER_KEYS}

    def as_dict(self, prices: Prices | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {p: {k: int(c.get(k, 0)) for k in LEDGER_KEYS} for p, c in sorted(self.by_purpose.items())}
        out["total"] = self.total()
        if prices is not None:
            for v in out.values():
                v["cost_usd"] = prices.cost(v["prompt_tokens"], v["completion_tokens"])
        return out


class LLMClient(ABC):
    """A chat model behind one interface; every call lands in ``ledger``."""

    backend: str = ""

    def __init__(self, model: str, ledger: Ledger | None = None) -> None:
        self.model = model
        self.ledger = ledger if ledger is not None else Ledger()

    def identity(self) -> dict[str, str]:
        """What names this model in a cache key (backend and model; never a credential)."""
        return {"backend": self.backend, "model": self.model}

    def chat(self, conversations: Sequence[Conversation], params: GenerationParams, purpose: str = "chat") -> list[Completion]:
        """One completion per conversation, in order; failed calls come back with ``error`` set."""
        if not conversations:
            return []
        outs = self._chat([list(c) for c in conversations], params)
        if len(outs) != len(conversations):
            raise RuntimeError(f"{type(self).__name__} returned {len(outs)} answers for {len(conversations)} conversations")
        for o in outs:
            self.ledger.record(purpose, o)
        return outs

    @abstractmethod
    def _chat(self, conversations: list[list[Message]], params: GenerationParams) -> list[Completion]:
        ...

    def score_options(self, prompts: Sequence[str], options: Sequence[str], batch_size: int = 1) -> np.ndarray:
        """``[len(prompts), len(options)]`` log-probabilities of each option after each prompt."""
        raise NotImplementedError(f"{type(self).__name__} cannot score options")

    # the CliniFact zero-shot baseline's name for it
    def score(self, prompts: Sequence[str], options: Sequence[str], batch_size: int = 1) -> np.ndarray:
        return self.score_options(prompts, options, batch_size)
