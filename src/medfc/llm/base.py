"""The one client interface every LLM backend implements (:class:`LLMClient`), and the call accounting
(:class:`Ledger`: calls, cache hits, failures, tokens and malformed/repaired answers per *purpose*)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from medfc.common.redact import redact

Message = Mapping[str, str]
Conversation = Sequence[Message]

LEDGER_KEYS = ("calls", "cache_hits", "failed", "prompt_tokens", "completion_tokens", "usage_missing", "malformed", "repaired")
#: counters a ledger shows only when one of its calls has them (a run whose calls have none shows no such column)
LEDGER_EXTRA_KEYS = ("truncated",)


class LLMEndpointError(RuntimeError):
    """An endpoint that refused the request (a status no retry can mend) or whose answer no retry can mend
    (another model, no logprobs, content that is not text): the step stops at once. The message (redacted) names
    the URL, the status (200 for an unusable answer), the model and the key's environment variable, never its value."""

    def __init__(self, message: str, *, url: str, status: int | None, model: str, api_key_env: str = ""):
        super().__init__(redact(message))
        self.url = redact(url)
        self.status = status
        self.model = model
        self.api_key_env = api_key_env


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters of one chat call (greedy when ``temperature`` is 0)."""

    max_tokens: int
    temperature: float
    json_mode: bool


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

    @property
    def truncated(self) -> bool:
        """The answer stopped at ``max_tokens`` (``finish_reason: "length"``): kept as an answer, counted."""
        return self.finish_reason == "length"


@dataclass(frozen=True)
class Prices:
    """US dollars per million prompt (input) and completion (output) tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


class Ledger:
    """Per-purpose counters of calls and tokens."""

    def __init__(self) -> None:
        self.by_purpose: dict[str, Counter] = defaultdict(Counter)

    def record(self, purpose: str, completion: Completion) -> None:
        self.by_purpose[purpose].update({
            "calls": 1, "cache_hits": int(completion.cached), "failed": int(not completion.ok),
            "prompt_tokens": int(completion.prompt_tokens), "completion_tokens": int(completion.completion_tokens),
            "usage_missing": int(not completion.usage_known), **({"truncated": 1} if completion.truncated else {})})

    def count(self, purpose: str, key: str, n: int = 1) -> None:
        self.by_purpose[purpose][key] += n

    def keys(self) -> tuple[str, ...]:
        """:data:`LEDGER_KEYS`, and each of :data:`LEDGER_EXTRA_KEYS` that a call of this ledger has."""
        extra = tuple(k for k in LEDGER_EXTRA_KEYS if any(c.get(k) for c in self.by_purpose.values()))
        return LEDGER_KEYS + extra

    def total(self) -> dict[str, int]:
        out: Counter = sum(self.by_purpose.values(), Counter())
        return {k: int(out.get(k, 0)) for k in self.keys()}

    def as_dict(self, prices: Prices | None = None) -> dict[str, dict[str, int | float]]:
        """Purpose (and ``total``) → counter → count; with ``prices`` also ``cost_usd``."""
        keys = self.keys()
        out: dict[str, dict[str, int | float]] = {p: {k: int(c.get(k, 0)) for k in keys} for p, c in sorted(self.by_purpose.items())}
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
