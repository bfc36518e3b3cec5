"""The options of the CliniFact steps, one class per step, and where a release's split files are, in a light module
the plan reads (no pandas, no numpy). :class:`StudiesOptions` lives beside its sources in
:mod:`medfc.clinifact.studies_sources`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from medfc.clinifact.studies_sources import StudiesOptions  # declared beside the sources it names
from medfc.common.options import Options
from medfc.common.sources import is_url, url_cache_path

__all__ = ["AbstractsOptions", "ClaimsOptions", "DiffOptions", "PairsOptions", "ReleaseOptions", "Significance", "StatsOptions", "StudiesOptions"]

Significance = Literal["<=", "<"]  # how a primary outcome's p-value is compared with alpha (clinifact.claims.significance)


@dataclass(frozen=True)
class ClaimsOptions(Options):
    """``clinifact.claims``."""

    embedding_model: str | None
    embedding_batch_size: int
    embedding_max_length: int
    device: str
    alpha: float
    significance: Significance
    use_description: bool


@dataclass(frozen=True)
class AbstractsOptions(Options):
    """``clinifact.pubmed`` + ``cache_dir`` and ``user_agent``; the API key comes from NCBI_API_KEY only."""

    offline: bool
    extra_cache_dirs: tuple[str, ...]
    email: str | None
    eutils_url: str
    tool: str
    batch_size: int
    requests_per_second: float | None
    progress: bool
    cache_dir: str
    user_agent: str


@dataclass(frozen=True)
class PairsOptions(Options):
    """``clinifact.pairs``."""

    seed: int
    min_abstract_words: int
    downsample_nei: bool
    test_size: float
    validation_size: float
    stratify: bool
    card_notes: str


@dataclass(frozen=True)
class ReleaseOptions(Options):
    """``clinifact.release`` + ``cache_dir`` (where a URL source is downloaded once)."""

    source: str
    sha256: dict[str, str | None]  # each split file's pinned SHA-256, by split (None: any file, its hash recorded)
    cache_dir: str


RELEASE_FILES = {"train": "train_set.csv", "validation": "validation_set.csv", "test": "test_set.csv"}


def file_location(source: str, split: str) -> str:
    """Where one split's file is: its path in a local release directory, or its URL below a base URL."""
    name = RELEASE_FILES[split]
    return source.rstrip("/") + "/" + name if is_url(source) else str(Path(source) / name)


def cached_path(source: str, split: str, cache_dir: str | os.PathLike) -> Path:
    """Where a URL release's split file is downloaded to: ``<cache_dir>/<hash of its URL>/<file name>``."""
    return url_cache_path(file_location(source, split), cache_dir)


@dataclass(frozen=True)
class DiffOptions(Options):
    """``clinifact.diff`` + ``cache_dir`` (where a URL release is downloaded once)."""

    release: str
    release_sha256: dict[str, str | None]  # as ReleaseOptions.sha256, for the release compared with
    release_date: str
    max_listed: int
    cache_dir: str


@dataclass(frozen=True)
class StatsOptions(Options):
    """``clinifact.stats``."""

    excluded_branches: tuple[str, ...]
