"""The options of the HealthFC steps, in a light module for the plan and the crawler (no Scrapy here); the
translation's are declared beside its backends and re-exported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from medfc.common.options import Options
from medfc.healthfc.sentences import BaseSplitter
from medfc.healthfc.translation_backends import TranslateOptions  # declared beside the backends it names

__all__ = ["AlignOptions", "CrawlOptions", "DatasetOptions", "DiffOptions", "FoldsOptions", "ReleaseOptions",
           "RetrieveOptions", "StatsOptions", "TranslateOptions"]


@dataclass(frozen=True)
class CrawlOptions(Options):
    """The ``healthfc.crawl`` config section (keys documented in the schema) + ``http_cache_dir`` and ``jobdir``."""

    base_url: str
    sitemap_path: str
    sitemap_follow: tuple[str, ...]
    url_list: tuple[str, ...]
    mirror_dir: str | None
    mirror_url: str | None
    user_agent: str
    contact: str
    download_delay: float
    concurrent_requests_per_domain: int
    autothrottle_target_concurrency: float
    autothrottle_max_delay: float
    retry_times: int
    download_timeout: float
    http_cache_dir: str
    http_cache_expiration_secs: int
    jobdir: str
    max_pages: int
    log_level: str


@dataclass(frozen=True)
class ReleaseOptions(Options):
    """``healthfc.release`` + ``cache_dir`` (where a URL source is downloaded once)."""

    source: str | None
    sha256: str | None  # the file's pinned SHA-256 (None: any file, its hash recorded)
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
    """``healthfc.retrieval`` for one source, with that source's own section (``source_options``, typed by its options
    class in :mod:`medfc.retrieval.search_sources`)."""

    source: str  # a registered search source (the plan's wildcard and registry refuse any other)
    lang: Literal["en", "de"]
    top_k: int
    cache_dir: str
    max_retries: int
    max_share_without_evidence: float
    progress: bool
    source_options: dict[str, Any]
