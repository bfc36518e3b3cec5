"""A dataset file on the Hugging Face Hub at a pinned commit, downloaded once into the cache (its SHA-256 is
checked by ``medsnip_fetch`` and by the plan for a cached copy). The Hub keeps each configuration of a dataset
without a loading script as Parquet files under its folder: one ``train`` split of one shard (MedHallu's
``pqa_labeled`` and ``pqa_artificial``) is ``<config>/train-00000-of-00001.parquet``. ``requests`` is imported
only when a file is downloaded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.sources import local_or_cached, url_cache_path

if TYPE_CHECKING:
    from medfc.common.http import HttpClient

HUB_FILE = "{config}/train-00000-of-00001.parquet"  # a configuration's one train split, one shard


def hub_file(config: str) -> str:
    """The file of a configuration's ``train`` split in the dataset's repository."""
    return HUB_FILE.format(config=config)


def hub_cache_path(url: str, cache_dir: str | os.PathLike) -> Path:
    """Where a downloaded Hub file is kept: under ``<cache>/medsnip/hub`` (:func:`medfc.common.sources.url_cache_path`)."""
    return url_cache_path(url, Path(cache_dir) / "medsnip" / "hub")


def fetch_hub_file(url: str, cache_dir: str | os.PathLike, client: HttpClient | None = None) -> tuple[Path, bool]:
    """The file at ``url`` downloaded once into the cache (kept only when complete); ``(path, from_cache)``: a copy
    already there is reused without a request."""
    return local_or_cached(url, hub_cache_path(url, cache_dir), client)
