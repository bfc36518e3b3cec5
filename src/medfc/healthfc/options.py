"""The options of the HealthFC dataset steps (:mod:`medfc.healthfc.steps`) but the crawl's (those are
:mod:`medfc.healthfc.crawl_options`), in a light module (no pandas, no numpy, no model library): the plan builds them when Snakemake plans the DAG
(:meth:`medfc.plan.Plan.job_options`) and the job receives what it serialised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from medfc.common.options import Options, OptionsError
from medfc.common.search_sources import source_names
from medfc.healthfc.sentences import BaseSplitter


@dataclass(frozen=True)
class TranslateOptions(Options):
    """The ``healthfc.translation`` section as the translation step uses it (its shipped memory files
    and corrections are rule inputs), + ``memory`` (the working store under the cache, written by this
    step alone), ``ct2_cache`` (the ctranslate2 backend's converted models, under the cache) and
    ``splitter`` (``healthfc.sentences.base``)."""

    backend: Literal["marian", "ctranslate2", "deepl"]
    model: str
    model_name: str | None
    device: str
    compute_type: str
    batch_size: int
    max_length: int
    num_beams: int
    progress: bool
    memory: str
    ct2_cache: str
    """Where the ctranslate2 backend keeps its converted models (under the cache dir)."""
    splitter: BaseSplitter

    @property
    def memory_key(self) -> str:
        """The name translations are stored under in the memory (``model_name``, else ``model``)."""
        return self.model_name or self.model


@dataclass(frozen=True)
class ReleaseOptions(Options):
    """``healthfc.release`` + ``cache_dir`` (where a URL source is downloaded once)."""

    source: str | None
    cache_dir: str


@dataclass(frozen=True)
class AlignOptions(Options):
    """``healthfc.align`` + ``splitter`` (``healthfc.sentences.base``)."""

    fuzzy_threshold: float
    min_claim_score: float
    min_contained_chars: int
    splitter: BaseSplitter


@dataclass(frozen=True)
class DatasetOptions(Options):
    """``healthfc.dataset.mode`` + ``splitter`` (``healthfc.sentences.base``)."""

    mode: Literal["crawl+release", "crawl", "release"]
    splitter: BaseSplitter


@dataclass(frozen=True)
class FoldsOptions(Options):
    """``healthfc.folds``."""

    scheme: Literal["grouped", "paper"]
    n_splits: int
    seed: int


@dataclass(frozen=True)
class StatsOptions(Options):
    """``healthfc.dataset.top_topics``."""

    top_topics: int


@dataclass(frozen=True)
class DiffOptions(Options):
    """``healthfc.diff`` + ``min_claim_score`` (``healthfc.align``: rows and claims are joined as the dataset joins them)."""

    release_date: str
    max_listed: int
    min_claim_score: float


@dataclass(frozen=True)
class RetrieveOptions(Options):
    """``healthfc.retrieval`` for one source: the claim language queried, how many results, the answer cache,
    and that source's own section (``source_options``, typed by the source's options class in the registry
    :mod:`medfc.common.search_sources`)."""

    source: str  # a registered search source (checked against the registry)
    lang: Literal["en", "de"]
    top_k: int
    cache_dir: str
    max_retries: int
    max_share_without_evidence: float
    progress: bool
    source_options: dict[str, Any]

    def _check(self, where: str) -> None:
        if self.source not in source_names():
            raise OptionsError(f"{where}.source: {self.source!r} is not one of {list(source_names())}")
