"""Reading and writing the workflow's artifacts (JSONL, gzip JSONL, JSON, tables)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd


def _open_text(path: Path, mode: str):
    if str(path).endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def read_jsonl(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Yield one dict per non-empty line of a (optionally gzipped) JSONL file."""
    with _open_text(Path(path), "r") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


@contextlib.contextmanager
def jsonl_writer(path: str | os.PathLike) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A ``write(record)`` for JSONL (gzip when the name ends in .gz) that lands atomically: the lines go to
    a temporary file beside ``path``, which replaces ``path`` only when the block ends without an error.
    On an error ``path`` keeps what it held before and the temporary file is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        with contextlib.ExitStack() as stack:
            if str(path).endswith(".gz"):
                # mtime=0 and no file name in the header keep the bytes identical for identical content
                raw = stack.enter_context(open(tmp, "wb"))
                gz = stack.enter_context(gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0))
                yield lambda rec: gz.write((json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
            else:
                fh = stack.enter_context(open(tmp, "w", encoding="utf-8"))
                yield lambda rec: fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_jsonl(path: str | os.PathLike, records: Iterable[dict[str, Any]]) -> int:
    """Write records atomically as JSONL (gzip when the name ends in .gz); return the count."""
    count = 0
    with jsonl_writer(path) as write:
        for rec in records:
            write(rec)
            count += 1
    return count


def write_json(path: str | os.PathLike, obj: Any) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_json(path: str | os.PathLike) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def input_paths(inputs: Mapping[str, Any], name: str) -> list[str]:
    """A rule input that may be one path, a list of paths or absent, as a list of paths."""
    value = inputs.get(name) or []
    return [str(v) for v in ([value] if isinstance(value, (str, os.PathLike)) else value)]


def table_stem(outputs: Mapping[str, Any]) -> Path:
    """The common stem of a rule's ``csv``, ``md`` and ``tex`` outputs (they must share it)."""
    stem = Path(outputs["csv"]).with_suffix("")
    for fmt in ("md", "tex"):
        if Path(outputs[fmt]) != stem.with_suffix("." + fmt):
            raise ValueError(f"outputs.{fmt} must sit next to outputs.csv with the same stem, got {dict(outputs)}")
    return stem


def write_table(df: pd.DataFrame, stem: str | os.PathLike, caption: str = "", formats: Iterable[str] = ("csv", "md", "tex")) -> list[Path]:
    """Write one table as CSV, Markdown and LaTeX next to each other (``stem`` + suffix)."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        out = stem.with_suffix("." + fmt)
        if fmt == "csv":
            df.to_csv(out, index=False)
        elif fmt == "md":
            text = (f"{caption}\n\n" if caption else "") + df.to_markdown(index=False) + "\n"
            out.write_text(text, encoding="utf-8")
        elif fmt == "tex":
            body = df.to_latex(index=False, escape=True, caption=caption or None)
            out.write_text(body, encoding="utf-8")
        else:  # pragma: no cover - guarded by callers
            raise ValueError(f"unknown table format {fmt!r}")
        written.append(out)
    return written
