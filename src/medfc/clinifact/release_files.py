"""Where a CliniFact release's three split files are: in a local directory, below a base URL, and where a URL's are
downloaded to. A light module (the plan checks the files' hashes at planning with it)."""

from __future__ import annotations

import os
from pathlib import Path

from medfc.common.sources import is_url, url_cache_path

RELEASE_FILES = {"train": "train_set.csv", "validation": "validation_set.csv", "test": "test_set.csv"}


def file_location(source: str, split: str) -> str:
    """Where one split's file is: its path in a local release directory, or its URL below a base URL."""
    name = RELEASE_FILES[split]
    return source.rstrip("/") + "/" + name if is_url(source) else str(Path(source) / name)


def cached_path(source: str, split: str, cache_dir: str | os.PathLike) -> Path:
    """Where a URL release's split file is downloaded to: ``<cache_dir>/<hash of its URL>/<file name>``."""
    return url_cache_path(file_location(source, split), cache_dir)
