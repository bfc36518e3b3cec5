"""The rows of a dataset's data file by its ending (CSV, TSV, JSON, JSONL, Parquet) or the splits of a ``save_to_disk``
folder; JSON, Parquet and Arrow values keep their types. Unreadable files raise ``InputFileError``."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medfc.common.csvfile import field_count_problem, read_csv_records, read_utf8
from medfc.common.io import InputFileError, read_json
from medfc.datasets.sources import SINGLE

FORMATS = (".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".parquet")
CSV_FIELD_LIMIT = 2**31 - 1  # characters of a CSV field; the csv module's default, 131,072, is less than a long text (PubHealth's main_text)


@dataclass(frozen=True)
class Table:
    """One file's rows: where it was read from (for messages), its fields in order, its rows, and whether every value
    is a text cell (CSV, TSV)."""

    location: str
    columns: list[str]
    rows: list[dict[str, Any]]
    text_cells: bool = False


def _columns(rows: Iterable[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def _objects(rows: Iterable[Any], location: str) -> list[dict[str, Any]]:
    out = []
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise InputFileError(location, None, f"row {n} is a {type(row).__name__}, not an object of fields")
        out.append(row)
    return out


def _csv(path: Path, location: str, delimiter: str) -> Table:
    """A strict UTF-8 CSV or TSV file: its header, then one row per record; a repeated header column or a record with
    the wrong field count names its line."""
    before = csv.field_size_limit(CSV_FIELD_LIMIT)  # a process-wide setting: restored below
    try:
        header, records = read_csv_records(path, delimiter=delimiter)
        repeated = sorted({name for name in header if header.count(name) > 1})
        if repeated:
            raise InputFileError(path, 1, f"the header names the column{'s' if len(repeated) > 1 else ''} "
                                          f"{', '.join(map(repr, repeated))} more than once")
        rows: list[dict[str, Any]] = []
        for record in records:
            if problem := field_count_problem(record, header):
                raise InputFileError(path, record.line, problem)
            rows.append(dict(zip(header, record.fields)))
    except InputFileError as exc:  # named by where it was read from (a URL's, not its download's)
        raise InputFileError(location, exc.line, exc.message) from exc
    finally:
        csv.field_size_limit(before)
    return Table(location, header, rows, text_cells=True)


def _parsed(text: str, location: str, line: int | None = None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(location, line or exc.lineno, f"not valid JSON at column {exc.colno}: {exc.msg}") from exc


def _json(path: Path, location: str) -> Table:
    doc = _parsed(read_utf8(path, location), location)
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if not isinstance(doc, list):
        raise InputFileError(location, None, "not a JSON array of rows, nor an object whose \"data\" is one")
    rows = _objects(doc, location)
    return Table(location, _columns(rows), rows)


def _jsonl(path: Path, location: str) -> Table:
    """One JSON object a line; split at line feeds only, as a line's text may hold U+2028."""
    lines = read_utf8(path, location).split("\n")
    rows = _objects((_parsed(line, location, n) for n, line in enumerate(lines, 1) if line.strip()), location)
    return Table(location, _columns(rows), rows)


def _arrow(table: Any, location: str) -> Table:
    return Table(location, list(table.column_names), table.to_pylist())


def read_table(path: str | os.PathLike, location: str | None = None) -> Table:
    """The rows of one data file (its format from its name)."""
    path = Path(path)
    location = location or str(path)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return _csv(path, location, "\t" if suffix == ".tsv" else ",")
    if suffix == ".json":
        return _json(path, location)
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl(path, location)
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return _arrow(pq.read_table(path), location)
    raise InputFileError(location, None, f"no data format for {suffix or 'a name without an ending'} (read: {', '.join(FORMATS)})")


def read_saved(folder: str | os.PathLike) -> dict[str, Table]:
    """The splits of a ``save_to_disk`` folder by name: a DatasetDict's, or a Dataset's one table (key ``data``)."""
    import pyarrow as pa

    root = Path(folder)
    index = root / "dataset_dict.json"
    names = read_json(index).get("splits") if index.is_file() else None  # type: ignore[union-attr]
    parts = {str(n): root / str(n) for n in names} if isinstance(names, list) else {SINGLE: root}
    out = {}
    for name, part in parts.items():
        state = read_json(part / "state.json")
        files = [f["filename"] for f in state.get("_data_files", [])] if isinstance(state, dict) else []
        tables = []
        for file in files:
            with pa.memory_map(str(part / file)) as source:
                tables.append(pa.ipc.open_stream(source).read_all())
        if not tables:
            raise InputFileError(part / "state.json", None, "names no data file (_data_files)")
        out[name] = _arrow(pa.concat_tables(tables), str(part))
    return out

