"""Strict reading of the CSV files the workflow takes in (release files): every record with its line, a bad file
an :class:`InputFileError` naming the line; a record with a wrong field count is yielded for the caller to skip with
a counted reason (:func:`field_count_problem`)."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from medfc.common.io import InputFileError


@dataclass(frozen=True, slots=True)
class CsvRecord:
    """One record: the line it starts on (1-based, the header is line 1) and its fields."""

    line: int
    fields: list[str]


def read_utf8(path: str | os.PathLike, where: str | None = None) -> str:
    """A file's UTF-8 text, a BOM dropped; bytes that are not UTF-8: :class:`InputFileError` naming ``where`` (the
    file's path by default) and the line."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputFileError(where or path, line, f"not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    return text.removeprefix("\ufeff")


def _problem(exc: csv.Error) -> str:
    """A ``csv.Error`` in words: broken quoting as such, any other as it says."""
    text = str(exc)
    quoting = "expected after" in text or text == "unexpected end of data"
    return f"broken CSV quoting: {text}" if quoting else f"unreadable CSV: {text}"


def read_csv_records(path: str | os.PathLike, required: Iterable[str] = (), what: str = "file",
                     delimiter: str = ",") -> tuple[list[str], Iterator[CsvRecord]]:
    """The header (names stripped) and an iterator over the non-blank records after it; :class:`InputFileError`
    for missing ``required`` columns (``what``: the kind of file), text not in UTF-8 or broken quoting."""
    path = Path(path)
    reader = csv.reader(io.StringIO(read_utf8(path), newline=""), delimiter=delimiter, strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
    except csv.Error as exc:
        raise InputFileError(path, 1, _problem(exc)) from exc
    require_columns(path, header, required, what)

    def records() -> Iterator[CsvRecord]:
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise InputFileError(path, start, _problem(exc)) from exc
            if fields:
                yield CsvRecord(start, fields)

    return header, records()


def require_columns(path: str | os.PathLike, header: Iterable[str], required: Iterable[str], what: str = "file") -> None:
    """Raise :class:`InputFileError` (line 1) naming every ``required`` column ``header`` lacks."""
    missing = sorted(set(required) - set(header))
    if missing:
        names = ", ".join(repr(c) for c in missing)
        raise InputFileError(path, 1, f"the {what} has no column{'s' if len(missing) > 1 else ''} {names}")


def field_count_problem(record: CsvRecord, header: list[str]) -> str | None:
    """``"13 fields, the header has 12"`` for a record of the wrong field count, else None."""
    return None if len(record.fields) == len(header) else f"{len(record.fields)} fields, the header has {len(header)}"
