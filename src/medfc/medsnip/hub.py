"""A dataset file on the Hugging Face Hub: the Hub keeps each configuration of a dataset without a loading script as
Parquet files under its folder (one ``train`` split of one shard: ``<config>/train-00000-of-00001.parquet``),
downloaded once into the cache by ``medsnip_fetch``."""

from __future__ import annotations

import os
from pathlib import Path

from medfc.common.sources import url_cache_path

HUB_FILE = "{config}/train-00000-of-00001.parquet"  # a configuration's one train split, one shard


def hub_file(config: str) -> str:
    """The file of a configuration's ``train`` split in the dataset's repository."""
    return HUB_FILE.format(config=config)


def hub_cache_path(url: str, cache_dir: str | os.PathLike) -> Path:
    """Where a downloaded Hub file is kept: under ``<cache>/medsnip/hub`` (:func:`medfc.common.sources.url_cache_path`)."""
    return url_cache_path(url, Path(cache_dir) / "medsnip" / "hub")
