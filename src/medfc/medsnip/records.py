"""The records the MedSNIP steps write and read back, one JSON line each: answers (``prepare``), units
(``decompose``) and verdicts (``verify``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import NotRequired, TypedDict

from medfc.common.jsontypes import JSONValue

USAGE_KEYS = ("calls", "prompt_tokens", "completion_tokens")  # an LLM call's usage, in every record and info


class Atom(TypedDict):
    """An atom of a MedSNIP-Bench answer with its physician label (TRUE / FALSE)."""

    index: int
    text: str
    label: str


class Snippet(TypedDict):
    """A human snippet of a MedSNIP-Bench answer: its atoms (indices) and its three labels."""

    snippet_id: str
    index: int
    text: str
    atoms: list[int]
    pattern: str
    labels: dict[str, str]  # TRUE / FALSE by atomic, general, contextual
    is_ambiguous: bool
    notes: str


class Answer(TypedDict):
    """An answer to decompose and verify (module docstring of :mod:`medfc.medsnip.answers`)."""

    answer_id: str
    source: str  # an answer source's name (medfc.medsnip.options.ANSWER_SOURCES): bench | healthfc | medhallu
    query: str
    text: str
    subset: str
    label: str | None  # TRUE / FALSE (None: a HealthFC NOT ENOUGH INFO claim)
    split: JSONValue
    shared_context: dict[str, JSONValue]
    atoms: NotRequired[list[Atom]]  # bench only
    snippets: NotRequired[list[Snippet]]  # bench only
    row_id: NotRequired[str]  # medhallu: the row both answers of a question come from
    kind: NotRequired[str]  # medhallu: ground_truth | hallucinated
    difficulty: NotRequired[JSONValue]  # medhallu: the row's difficulty level
    hallucination_category: NotRequired[JSONValue]  # medhallu, the hallucinated answer: its category
    claim: NotRequired[str]  # healthfc only: the claim as asked


class UnitFields(TypedDict):
    """What a unit and each verdict on it hold of the unit (:data:`medfc.medsnip.verify.UNIT_FIELDS`)."""

    unit_id: str
    answer_id: str
    mode: str
    index: int
    text: str
    pattern: str | None
    source_atoms: list[int]  # 1-based atom indices of its answer
    source_sentences: list[int]  # 0-based sentence indices
    labels: dict[str, str]  # the gold labels of a human unit (physician; atomic, general, contextual)
    fallback: bool
    atoms_from: str | None


class Unit(UnitFields):
    """A verification unit (:func:`medfc.medsnip.decompose._unit`)."""

    spans: list[list[int]]  # character offsets of its sentences in the answer text
    notes: str


class Evidence(TypedDict):
    """One search of the retrieval verifier and its hits (``error``: the search failed)."""

    round: int
    source: str
    query: str
    hits: list[dict[str, str]]  # title, text, url (title and text cut to medsnip.retrieval's lengths)
    error: NotRequired[str]


class Verdict(UnitFields):
    """A verifier's verdict on one unit (:func:`medfc.medsnip.verify._base` and the verifier's fields)."""

    verifier: str
    verifier_kind: str
    verdict: str | None  # TRUE / FALSE, None when it abstained, failed or was unreadable
    confidence: float | None
    gated: bool
    abstained: bool
    cap_hit: bool
    forced_final: bool
    malformed: bool
    unparsed: bool
    failed: bool
    error: str | None
    rounds: int
    evidence: list[Evidence]
    raw: str
    usage: NotRequired[dict[str, int]]  # its calls, prompt_tokens, completion_tokens
    cached: NotRequired[bool]


def usage_total(usages: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The calls and tokens of several items' usages summed."""
    total: Counter = Counter()
    for u in usages:
        total.update(u)
    return {k: int(total.get(k, 0)) for k in USAGE_KEYS}
