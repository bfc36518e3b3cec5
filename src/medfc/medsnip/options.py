"""Typed, frozen options of the MedSNIP steps, built from the validated config.

Every field is required: defaults live in the workflow's config schema only (see
docs/medsnip_config_draft.yaml). :func:`build_options` turns a mapping into the dataclass,
recursively, and raises naming the first missing or unknown key with its dotted path.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

MODES = ("atoms", "group", "direct", "human_atoms", "human_snippets")
LLM_MODES = ("atoms", "group", "direct")
VERIFIERS = ("claim_only", "full_context", "retrieval")
AGGREGATIONS = ("or_false", "and_false", "threshold_k", "majority", "first")
SEARCH_SOURCES = ("pubmed", "bm25", "web")


class OptionsError(ValueError):
    """A missing, unknown or invalid option, named by its dotted path."""


@dataclass(frozen=True)
class LLMOptions:
    backend: str  # transformers | openai
    model: str
    base_url: str
    api_key_env: str
    max_tokens: int
    temperature: float
    json_mode: bool
    batch_size: int
    device: str
    precision: str
    requests_per_second: float
    timeout_s: float
    max_retries: int
    http_cache_dir: str
    price_input_per_mtok: float
    price_output_per_mtok: float

    def check(self, where: str) -> None:
        if self.backend not in ("transformers", "openai"):
            raise OptionsError(f"{where}.backend: {self.backend!r} is not transformers | openai")
        if not self.model:
            raise OptionsError(f"{where}.model: empty")
        if self.backend == "openai" and not self.base_url:
            raise OptionsError(f"{where}.base_url: empty for the openai backend")


@dataclass(frozen=True)
class PrepareOptions:
    source: str  # healthfc | bench
    splits: tuple[str, ...]  # bench: splits kept (empty = all)
    rewrite_claims: bool  # healthfc: the claim question rewritten as the statement it asserts
    limit: int  # 0 = every answer
    llm: LLMOptions | None
    prompt_dir: str
    unit_cache_dir: str

    def check(self, where: str = "prepare") -> None:
        if self.source not in ("healthfc", "bench"):
            raise OptionsError(f"{where}.source: {self.source!r} is not healthfc | bench")
        if self.source == "healthfc" and self.rewrite_claims:
            if self.llm is None:
                raise OptionsError(f"{where}.llm: required when rewrite_claims is true")
            self.llm.check(f"{where}.llm")


@dataclass(frozen=True)
class DecomposeOptions:
    mode: str  # atoms | group | direct | human_atoms | human_snippets
    atoms_from: str  # group mode: extract (the decomposer's atoms) | given (the answer's own atoms, e.g. the bench's)
    fallback_whole_text: bool  # an answer whose decomposition stays malformed becomes one unit
    llm: LLMOptions | None
    prompt_dir: str
    unit_cache_dir: str

    def check(self, where: str = "decompose") -> None:
        if self.mode not in MODES:
            raise OptionsError(f"{where}.mode: {self.mode!r} is not one of {MODES}")
        if self.atoms_from not in ("extract", "given"):
            raise OptionsError(f"{where}.atoms_from: {self.atoms_from!r} is not extract | given")
        if self.mode in LLM_MODES:
            if self.llm is None:
                raise OptionsError(f"{where}.llm: required for mode {self.mode}")
            self.llm.check(f"{where}.llm")


@dataclass(frozen=True)
class PubMedSearchOptions:
    cache_dir: str
    email: str
    api_key_env: str
    requests_per_second: float


@dataclass(frozen=True)
class BM25Options:
    passages: str  # JSONL of passages; "" = no local index
    text_field: str
    title_field: str
    id_field: str
    url_field: str


@dataclass(frozen=True)
class WebSearchOptions:
    url: str  # a Serper-compatible search endpoint
    api_key_env: str
    http_cache_dir: str


@dataclass(frozen=True)
class RetrievalOptions:
    max_rounds: int
    reprompt_below: float
    hits_per_search: int
    title_chars: int
    text_chars: int
    sources: tuple[str, ...]
    search_cache_dir: str
    pubmed: PubMedSearchOptions
    bm25: BM25Options
    web: WebSearchOptions

    def check(self, where: str) -> None:
        bad = [s for s in self.sources if s not in SEARCH_SOURCES]
        if bad or not self.sources:
            raise OptionsError(f"{where}.sources: {list(self.sources)} must be a non-empty subset of {SEARCH_SOURCES}")
        if "bm25" in self.sources and not self.bm25.passages:
            raise OptionsError(f"{where}.bm25.passages: empty while bm25 is a source")
        if self.max_rounds < 1:
            raise OptionsError(f"{where}.max_rounds: must be at least 1")


@dataclass(frozen=True)
class VerifyOptions:
    verifier: str  # claim_only | full_context | retrieval
    name: str  # the verifier's name in tables, e.g. "gpt-oss-20b"
    unparsed: str  # a single-call answer that is neither true nor false: "false" (the paper) | "abstain"
    llm: LLMOptions
    prompt_dir: str
    unit_cache_dir: str
    retrieval: RetrievalOptions | None

    def check(self, where: str = "verify") -> None:
        if self.verifier not in VERIFIERS:
            raise OptionsError(f"{where}.verifier: {self.verifier!r} is not one of {VERIFIERS}")
        if self.unparsed not in ("false", "abstain"):
            raise OptionsError(f"{where}.unparsed: {self.unparsed!r} is not false | abstain")
        self.llm.check(f"{where}.llm")
        if self.verifier == "retrieval":
            if self.retrieval is None:
                raise OptionsError(f"{where}.retrieval: required for the retrieval verifier")
            self.retrieval.check(f"{where}.retrieval")


@dataclass(frozen=True)
class ScoreOptions:
    level: str  # answer (aggregate units to answers) | unit (MedSNIP-Bench: units against unit gold)
    aggregation: str  # or_false | and_false | threshold_k | majority | first
    threshold_k: int
    tau: float  # retrieval verifier: TRUE/FALSE accepted only at confidence >= tau
    unit_gold: str  # bench snippets: atomic | general | contextual
    projection: str  # bench auto snippets: drop_mixed | and | majority
    baseline_mode: str  # the arm every other mode is compared with (atoms)
    n_resamples: int
    seed: int
    ci_level: float
    pattern_gold: str  # per-pattern analysis gold: atomic | general | contextual
    pattern_ci: str  # bca | percentile (flat per-pattern samples)

    def check(self, where: str = "score") -> None:
        if self.level not in ("answer", "unit"):
            raise OptionsError(f"{where}.level: {self.level!r} is not answer | unit")
        if self.aggregation not in AGGREGATIONS:
            raise OptionsError(f"{where}.aggregation: {self.aggregation!r} is not one of {AGGREGATIONS}")
        for key in ("unit_gold", "pattern_gold"):
            if getattr(self, key) not in ("atomic", "general", "contextual"):
                raise OptionsError(f"{where}.{key}: not atomic | general | contextual")
        if self.projection not in ("drop_mixed", "and", "majority"):
            raise OptionsError(f"{where}.projection: {self.projection!r} is not drop_mixed | and | majority")
        if self.pattern_ci not in ("bca", "percentile"):
            raise OptionsError(f"{where}.pattern_ci: {self.pattern_ci!r} is not bca | percentile")
        if not 0.0 <= self.tau <= 1.0 or not 0.0 < self.ci_level < 1.0 or self.n_resamples < 1 or self.threshold_k < 1:
            raise OptionsError(f"{where}: tau in [0, 1], ci_level in (0, 1), n_resamples >= 1, threshold_k >= 1")


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            if type(None) in args:
                return None
            raise OptionsError(f"{where}: may not be null")
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, where)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise OptionsError(f"{where}: expected a mapping, got {type(value).__name__}")
        return build_options(tp, value, where)
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise OptionsError(f"{where}: expected a list")
        return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            raise OptionsError(f"{where}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionsError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OptionsError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise OptionsError(f"{where}: expected a string, got {value!r}")
        return value
    return value


def build_options(cls: type[T], data: Mapping[str, Any], where: str = "") -> T:
    """``cls(**data)`` with nested dataclasses built too; every field required, no unknown keys."""
    hints = typing.get_type_hints(cls)
    fields = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    prefix = f"{where}." if where else ""
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise OptionsError(f"unknown option {prefix}{unknown[0]}")
    missing = [f for f in fields if f not in data]
    if missing:
        raise OptionsError(f"missing option {prefix}{missing[0]}")
    obj = cls(**{f: _convert(hints[f], data[f], prefix + f) for f in fields})
    check = getattr(obj, "check", None)
    if callable(check) and not where:
        check()
    return obj
