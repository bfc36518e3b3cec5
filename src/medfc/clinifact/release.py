"""The official CliniFact release (ds4dh/CliniFact) as a source of pairs: a directory or base URL (downloaded once)
holding the three split CSVs, each read strictly (docs/clinifact.md, "Bad input files")."""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd

from medfc.clinifact.pairs import LIST_COLUMNS, OPTIONAL_COLUMNS, RELEASE_COLUMNS, SPLITS, parse_list_literal
from medfc.clinifact.options import RELEASE_FILES, cached_path, file_location
from medfc.common.csvfile import field_count_problem, read_csv_records
from medfc.common.jsontypes import JSONValue
from medfc.common.pinning import release_record, verify
from medfc.common.report import SkipReport
from medfc.common.sources import is_url, local_or_cached


def locate(source: str, split: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Local path of one release file, downloading it once into ``cache_dir`` when ``source`` is a URL."""
    if not is_url(source):
        return Path(file_location(source, split))
    if cache_dir is None:
        raise ValueError("a cache_dir is needed to import the release from a URL")
    from medfc.common.http import HttpClient  # requests: loaded only to download a release given by URL

    return local_or_cached(file_location(source, split), cached_path(source, split, cache_dir), HttpClient())[0]


def verify_release(source: str, sha256: Mapping[str, str | None], key: str,
                   cache_dir: str | os.PathLike | None = None) -> dict[str, JSONValue]:
    """Every split file located and checked against its pinned SHA-256 (config key ``key``.<split>) before any is
    read; the release's record."""
    files = {RELEASE_FILES[split]: verify(locate(source, split, cache_dir), sha256.get(split), f"{key}.{split}",
                                          file_location(source, split)) for split in SPLITS}
    return release_record("clinifact", source, files)


#: The label column's codes exactly as the release writes them.
LABEL_TEXTS = {"0": 0, "1": 1, "2": 2}
#: Columns the release always fills (besides claim and abstract, which need a word).
FILLED_COLUMNS = tuple(c for c in RELEASE_COLUMNS if c not in OPTIONAL_COLUMNS and c not in ("index", "label", "claim", "article_abstract"))
_WORD = re.compile(r"\w")
_INTEGER = re.compile(r"^-?\d+$")


def _row_problem(rec: dict[str, str]) -> tuple[str, str] | None:
    """(reason, detail) of the first thing wrong with one release row, or None."""
    index = rec["index"].strip()
    if not _INTEGER.match(index):
        return "bad_index", f"index {rec['index']!r} is not an integer"
    where = f"index {index}"
    label = rec["label"].strip()
    if label not in LABEL_TEXTS:
        codes = ", ".join(repr(c) for c in LABEL_TEXTS)
        return "bad_label", f"{where}: label {rec['label']!r} is not one of the release's codes {codes}"
    for col, reason in (("claim", "claim_without_words"), ("article_abstract", "abstract_without_words")):
        if not _WORD.search(rec[col]):
            return reason, f"{where}: {col} {rec[col][:80]!r} has no word"
    empty = [c for c in FILLED_COLUMNS if not rec[c].strip()]
    if empty:
        return "missing_fields", f"{where}: empty {', '.join(empty)}"
    for col in LIST_COLUMNS:
        try:
            parse_list_literal(rec[col])
        except (ValueError, SyntaxError):
            return "unparseable_list_column", f"{where}: {col} {rec[col][:80]!r}"
    return None


def read_split(path: str | os.PathLike, report: SkipReport) -> tuple[pd.DataFrame, int]:
    """One release-format file read strictly: the kept rows (typed as the release's reader types them) and the
    number of rows read. Raises :class:`medfc.common.io.InputFileError` on an unreadable file."""
    header, records = read_csv_records(path, required=RELEASE_COLUMNS, what="CliniFact release file")
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    n_read = 0
    for n_read, record in enumerate(records, 1):
        problem = field_count_problem(record, header)
        found = ("wrong_field_count", problem) if problem else _row_problem(dict(zip(header, record.fields)))
        if found:
            report.skip(f"{path}:{record.line}", *found)
            continue
        writer.writerow(record.fields)
    # the kept rows, typed exactly as the release's own reader types them (index, PMID, label integers; NaN for empty)
    df = pd.read_csv(io.StringIO(buf.getvalue()), dtype={"label": "int64"}, keep_default_na=True)
    return df[RELEASE_COLUMNS], n_read


def read_splits(path_of: Callable[[str], str | os.PathLike], report: SkipReport) -> dict[str, pd.DataFrame]:
    """The three splits (``path_of(split)``) read strictly (:func:`read_split`); counts ``read_<split>`` and
    ``rows_<split>`` (kept)."""
    out: dict[str, pd.DataFrame] = {}
    for split in SPLITS:
        out[split], n_read = read_split(path_of(split), report)
        report.count(f"read_{split}", n_read)
        report.count(f"rows_{split}", len(out[split]))
    return out


def import_release(source: str, report: SkipReport,
                   cache_dir: str | os.PathLike | None = None) -> dict[str, pd.DataFrame]:
    """The release's three splits, located (:func:`locate`) and read (:func:`read_splits`)."""
    return read_splits(lambda split: locate(source, split, cache_dir), report)
