"""Typed, frozen options of the MedSNIP steps, no defaults (they live in the schema's ``medsnip`` section). Each
class's ``_check`` holds the cross-field checks, which :meth:`Options.from_mapping` runs naming the dotted key. And
the registries the options name: the answer sources (each with its section ``medsnip.datasets.<name>``) and the
verifier kinds (``medsnip.verifiers[i].kind``); the plan, the steps, the verifier and the scoring look a source or
a kind up, never compare its name. A light module (read when Snakemake plans the DAG)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, get_args

from medfc.common.llm_backends import BackendName, runs_locally
from medfc.common.options import OneOf, Options, OptionsError
from medfc.common.pinning import COMMIT
from medfc.common.registry import lookup

Mode = Literal["atoms", "group", "direct", "human_atoms", "human_snippets"]
Verifier = Literal["claim_only", "full_context", "retrieval"]
Aggregation = Literal["or_false", "and_false", "threshold_k", "majority", "first"]
SearchSource = Literal["pubmed", "bm25", "web"]
Gold = Literal["atomic", "general", "contextual"]

MODES = get_args(Mode)
LLM_MODES = ("atoms", "group", "direct")  # the modes a decomposer LLM makes (the others are the bench's own units)
HUMAN_MODES = ("human_atoms", "human_snippets")  # a source's own human units (an answer source with human_units)
GIVEN_ATOM_MODES = ("group",)  # the modes that may take a source's own atoms (medsnip.atoms_from: given)


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
        AnswerSource("healthfc", "HealthFC", "medfc.medsnip.answers:healthfc_source", healthfc_dataset=True,
                     rewrites=True, unlabelled_nei=True),
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


@dataclass(frozen=True)
class LLMOptions(Options):
    """One LLM (the config's ``medsnip.llm`` with a role's overrides)."""

    backend: BackendName  # a name of medfc.common.llm_backends.LLM_BACKENDS
    model: str  # a local directory / hub name (transformers) or the served model name (openai)
    base_url: str
    api_key_env: str
    max_tokens: int
    temperature: float
    json_mode: bool
    batch_size: int
    device: str
    precision: Literal["auto", "bf16", "fp16", "fp32"]
    requests_per_second: float
    timeout_s: float
    max_retries: int
    http_cache_dir: str  # "" = no HTTP cache
    price_input_per_mtok: float
    price_output_per_mtok: float
    max_failed_share: float  # items (units, answers, claims) whose call may fail for the step to go on (0: none)

    def _check(self, where: str) -> None:
        if not self.model.strip():
            raise OptionsError(f"{where}.model: empty: name the model (a served model name, a model directory or hub name)")
        if not runs_locally(self.backend) and not self.base_url:  # a server's backend (openai) needs its endpoint
            raise OptionsError(f"{where}.base_url: empty for the {self.backend} backend")


@dataclass(frozen=True)
class PrepareOptions(Options):
    source: Annotated[str, OneOf(ANSWER_SOURCES.keys)]  # a registered answer source (ANSWER_SOURCES)
    splits: tuple[str, ...]  # bench: splits kept (empty = all)
    rewrite_claims: bool  # healthfc: the claim question rewritten as the statement it asserts
    limit: int  # 0 = every answer
    llm: LLMOptions | None  # the rewriter (healthfc with rewrite_claims)
    prompt_dir: str
    unit_cache_dir: str  # "" = no cache

    def _check(self, where: str) -> None:
        if self.rewrite_claims and not answer_source(self.source).rewrites:
            raise OptionsError(f"{where}.rewrite_claims: the answers of {self.source} are not rewritten")
        if self.rewrite_claims and self.llm is None:
            raise OptionsError(f"{where}.llm: required when rewrite_claims is true")


@dataclass(frozen=True)
class DecomposeOptions(Options):
    mode: Mode
    atoms_from: Literal["extract", "given"]  # group mode: the decomposer's atoms | the answer's own (the bench's)
    fallback_whole_text: bool  # an answer whose decomposition stays malformed becomes one unit
    llm: LLMOptions | None  # the decomposer (atoms, group, direct)
    prompt_dir: str
    unit_cache_dir: str

    def _check(self, where: str) -> None:
        if self.mode in LLM_MODES and self.llm is None:
            raise OptionsError(f"{where}.llm: required for mode {self.mode}")


@dataclass(frozen=True)
class PubMedSearchOptions(Options):
    cache_dir: str
    email: str
    eutils_url: str
    api_key_env: str
    requests_per_second: float


@dataclass(frozen=True)
class BM25Options(Options):
    passages: str  # JSONL of passages; "" = no local index
    text_field: str
    title_field: str
    id_field: str
    url_field: str


@dataclass(frozen=True)
class WebSearchOptions(Options):
    url: str  # a Serper-compatible search endpoint
    api_key_env: str
    http_cache_dir: str


@dataclass(frozen=True)
class RetrievalOptions(Options):
    max_rounds: int
    reprompt_below: float
    hits_per_search: int
    title_chars: int
    text_chars: int
    sources: tuple[SearchSource, ...]
    search_cache_dir: str
    pubmed: PubMedSearchOptions
    bm25: BM25Options
    web: WebSearchOptions

    def _check(self, where: str) -> None:
        if "pubmed" in self.sources and not self.pubmed.email and not os.environ.get("NCBI_EMAIL"):
            raise OptionsError(f"{where}.pubmed.email: empty and NCBI_EMAIL unset; NCBI asks every PubMed request to carry a contact e-mail")
        if "bm25" in self.sources and not self.bm25.passages:
            raise OptionsError(f"{where}.bm25.passages: empty while bm25 is a source")


@dataclass(frozen=True)
class VerifyOptions(Options):
    verifier: Annotated[Verifier, OneOf(VERIFIER_KINDS.keys)]  # a registered verifier kind (VERIFIER_KINDS)
    name: str  # the verifier's name in tables, e.g. "gpt-oss-20b"
    unparsed: Literal["false", "abstain"]  # a single-call answer neither true nor false: FALSE (the paper) | abstain
    llm: LLMOptions
    prompt_dir: str
    unit_cache_dir: str
    retrieval: RetrievalOptions | None  # the retrieval verifier's settings (null for the others)

    def _check(self, where: str) -> None:
        if verifier_kind(self.verifier).retrieves and self.retrieval is None:
            raise OptionsError(f"{where}.retrieval: required for the {self.verifier} verifier")


@dataclass(frozen=True)
class ScoreOptions(Options):
    level: Literal["answer", "unit"]  # answer: units aggregated to answers | unit: MedSNIP-Bench units vs unit gold
    aggregation: Aggregation
    threshold_k: int
    tau: float  # retrieval verifier: TRUE/FALSE accepted only at confidence >= tau
    unit_gold: Gold  # bench snippets
    projection: Literal["drop_mixed", "and", "majority"]  # bench gold of automatic units
    baseline_mode: Mode  # the arm every other mode is compared with
    n_resamples: int
    seed: int
    cluster_bootstrap: Literal["union", "sorted_intersection"]  # unit-level Δ: union of clusters | the repository's sorted intersection
    ci_level: float
    pattern_gold: Gold  # gold of the per-pattern analysis
    pattern_ci: Literal["bca", "percentile"]  # interval of the flat per-pattern samples
    fidelity_embedding_model: str  # boundary fidelity's cosine: "" the offline all-MiniLM-L6-v2, "none" off, else a model
    rouge_stemmer: bool  # boundary fidelity's ROUGE-L: Porter-stem tokens of more than three characters


@dataclass(frozen=True)
class FetchOptions(Options):
    """A dataset's file on the Hugging Face Hub (``medsnip.datasets.<dataset>.hf``) and the ``cache_dir`` it is
    downloaded into once (by ``medsnip_fetch``)."""

    dataset: Annotated[str, OneOf(ANSWER_SOURCES.keys)]
    repo: str  # <owner>/<name> of the dataset's repository
    config: str  # the configuration (its folder in the repository)
    revision: str  # the commit read (40 hex digits)
    sha256: str | None  # the file's pinned SHA-256 (None: any file, its hash recorded)
    endpoint: str  # the Hub's address
    cache_dir: str

    def _check(self, where: str) -> None:
        if not COMMIT.match(self.revision):
            raise OptionsError(f"{where}.revision: {self.revision!r} is not a commit (40 lower-case hex digits)")

    @property
    def file(self) -> str:
        """The file of the configuration's ``train`` split: the Hub keeps each configuration of a dataset without a
        loading script as Parquet files under its folder (here one split of one shard)."""
        return f"{self.config}/train-00000-of-00001.parquet"

    @property
    def url(self) -> str:
        from medfc.common.sources import hub_url

        return hub_url(self.endpoint, self.repo, self.revision, self.file)

    @property
    def cache_path(self) -> Path:
        """Where the downloaded file is kept: under ``<cache_dir>/medsnip/hub``."""
        from medfc.common.sources import url_cache_path

        return url_cache_path(self.url, Path(self.cache_dir) / "medsnip" / "hub")


@dataclass(frozen=True)
class TableOptions(Options):
    title: str  # the dataset's name in the caption, e.g. "HealthFC"
    dataset: str  # its answer source's name: the paper's rows of it are read under that name (medsnip.datasets.<dataset>)


@dataclass(frozen=True)
class StructureOptions(Options):
    """MedSNIP Table 3: the datasets of the ``answers`` inputs, their titles, the ``units`` inputs' dataset and mode."""

    datasets: tuple[str, ...]
    titles: dict[str, str]
    units: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class TauOptions(Options):
    """MedSNIP Table 6 of one dataset: its title, the thresholds swept and the dataset's scoring."""

    title: str
    taus: tuple[float, ...]
    score: ScoreOptions
