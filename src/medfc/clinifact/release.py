"""The official CliniFact release (ds4dh/CliniFact) as an alternative source of pairs.

``source`` is a directory or a base URL holding ``train_set.csv``, ``validation_set.csv`` and
``test_set.csv`` (22 columns). URLs are downloaded once into ``cache_dir``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd

from medfc.clinifact.pairs import LIST_COLUMNS, SPLITS, parse_list_literal, read_release_csv
from medfc.common.http import HttpClient, cache_key
from medfc.common.report import SkipReport

log = logging.getLogger(__name__)

RELEASE_BASE_URL = "https://raw.githubusercontent.com/ds4dh/CliniFact/main/data/processed/primary_outcome_publication_dataset"
RELEASE_FILES = {"train": "train_set.csv", "validation": "validation_set.csv", "test": "test_set.csv"}


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def locate(source: str, split: str, cache_dir: str | os.PathLike | None = None, http: HttpClient | None = None) -> Path:
    """Local path of one release file, downloading it once into ``cache_dir`` when ``source`` is a URL."""
    name = RELEASE_FILES[split]
    if not _is_url(source):
        return Path(source) / name
    url = source.rstrip("/") + "/" + name
    if cache_dir is None:
        raise ValueError("a cache_dir is needed to import the release from a URL")
    dest = Path(cache_dir) / cache_key("GET", url)[:16] / name
    return (http or HttpClient()).download(url, dest, progress=False)


def import_release(source: str, report: SkipReport, cache_dir: str | os.PathLike | None = None, http: HttpClient | None = None) -> dict[str, pd.DataFrame]:
    """Read the three splits; rows whose list columns do not parse are dropped with a reason."""
    out: dict[str, pd.DataFrame] = {}
    for split in SPLITS:
        df = read_release_csv(locate(source, split, cache_dir, http))
        bad = []
        for i, row in df.iterrows():
            try:
                for col in LIST_COLUMNS:
                    parse_list_literal(row[col])
            except (ValueError, SyntaxError):
                report.skip(f"{split}/{row['index']}", "unparseable_list_column")
                bad.append(i)
        df = df.drop(index=bad).reset_index(drop=True)
        report.count(f"rows_{split}", len(df))
        out[split] = df
    return out
