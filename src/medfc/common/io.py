"""Reading and writing the workflow's artifacts (JSONL, gzip JSONL, JSON, tables), and lock files shared by processes.

Writes are atomic (:func:`atomic_output`) with the mode the umask gives (``0o666 & ~umask``; ``mkstemp``'s
0600 would break shared group directories). Failed reads raise :class:`InputFileError` naming file and line."""

from __future__ import annotations

import contextlib
import enum
import errno
import fcntl
import glob
import gzip
import json
import logging
import os
import secrets
import shutil
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, TypeVar

from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.stepfiles import StepFiles

if TYPE_CHECKING:  # write_table is handed a DataFrame; the readers and writers of JSON never load pandas
    import pandas as pd

    from medfc.common.latex import LatexTable

log = logging.getLogger(__name__)
_UNLOCKABLE: set[str] = set()


class InputFileError(ValueError):
    """An input file that cannot be read as what it should be: ``"<path>, line <line>: <message>"`` (the line
    1-based, or None: ``"<path>: <message>"``)."""

    def __init__(self, path: str | os.PathLike, line: int | None, message: str):
        self.path = os.fspath(path)
        self.line = line
        self.message = message
        super().__init__(f"{self.path}, line {line}: {message}" if line is not None else f"{self.path}: {message}")

    def __reduce__(self):  # picklable (multiprocessing) with its three fields
        return (type(self), (self.path, self.line, self.message))


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"not valid JSON at column {exc.colno}: {exc.msg}"


def read_jsonl(path: str | os.PathLike) -> Iterator[JSONObject]:
    """One dict per non-empty line of a (optionally gzipped) JSONL file; a line that is not JSON, bytes that
    are not UTF-8 or a gzip stream cut short raise :class:`InputFileError` with the line number."""
    path = Path(path)
    lineno = 0
    with (gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")) as fh:
        try:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputFileError(path, lineno,
                                         f"not UTF-8 text (byte {exc.start + 1} of the line): {exc.reason}") from exc
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    # json's own "line 1 column N" counts within the one line: not shown, it would mislead
                    raise InputFileError(path, lineno, _json_error(exc)) from None
                yield rec
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:  # a gzip stream that breaks off after line lineno
            raise InputFileError(path, lineno + 1, f"broken gzip stream (cut short?): {exc}") from exc


def numbered_json_lines(lines: Iterable[str]) -> Iterator[tuple[int, JSONValue | json.JSONDecodeError]]:
    """(1-based line number, the line's JSON value or its parse error) of each non-blank line, for readers
    that skip and count a bad line (``medfc predict``'s input, a run record)."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as exc:
            yield n, exc


def _new_temp(path: Path) -> tuple[int, Path]:
    """A new file ``.<name>.<random>.tmp`` beside ``path``, opened for writing with mode 0o666 (the umask applies)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"  # 48 random bits: never another's name
    return os.open(tmp, flags, 0o666), tmp


def remove_orphaned_temps(paths: Iterable[str | os.PathLike], suffixes: Iterable[str] = (".tmp",)) -> list[Path]:
    """Remove (and return) the temporary files and folders a killed atomic write into one of ``paths`` left
    (``.<name>.<random><suffix>``). Only for paths no other process writes now (a job's own outputs)."""
    removed, suffixes = [], tuple(suffixes)
    for path in map(Path, paths):
        if not path.parent.is_dir():
            continue
        for orphan in (p for suffix in suffixes for p in path.parent.glob(f".{glob.escape(path.name)}.*{suffix}")):
            if orphan.is_dir() and not orphan.is_symlink():
                shutil.rmtree(orphan, ignore_errors=True)
            else:
                orphan.unlink(missing_ok=True)
            removed.append(orphan)
    return removed


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, text: bool = False) -> Iterator[IO]:
    """A file object (binary, or UTF-8 text) whose content replaces ``path`` only when the block ends without
    an error (else the temporary file is removed). Every atomic write of the project goes through here."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _new_temp(path)
    try:
        with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text else os.fdopen(fd, "wb")) as fh:
            yield fh
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # not on this kernel or file system
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """A new, empty folder beside ``path`` for the block to fill, which replaces ``path`` whole when the block
    succeeds: ``path`` holds the old save or the new one, never a mix. Swapped in one step where the kernel can
    (``renameat2``), else moved aside and replaced; leftovers of a killed save are removed by the next."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_orphaned_temps([path], suffixes=(".tmp", ".old"))
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    tmp.mkdir()
    try:
        yield tmp
        if not path.exists():
            os.replace(tmp, path)
        elif not _exchange(tmp, path):  # swapped: the new folder at path, the old one at tmp (removed below)
            old = path.parent / f".{path.name}.{secrets.token_hex(6)}.old"
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def file_lock(path: str | os.PathLike) -> Iterator[bool]:
    """An exclusive ``flock`` on ``path`` (created) while the block runs; the kernel drops it when the holder
    dies. Without ``flock`` support (some cluster mounts) it yields False, locking nothing, logged once per path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        yield lock(fh.fileno(), path)  # closing the file releases the lock


def lock(fd: int, path: str | os.PathLike) -> bool:
    """An exclusive ``flock`` on the open file ``fd`` of ``path``; False where the filesystem has none (logged once
    per path), locking nothing."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:
        if os.fspath(path) not in _UNLOCKABLE:
            _UNLOCKABLE.add(os.fspath(path))
            log.warning("%s: no file lock on this filesystem (%s); going on without one", path, exc)
        return False
    return True


def atomic_write(path: str | os.PathLike, payload: bytes | str) -> None:
    """Write ``payload`` (bytes, or str as UTF-8) to ``path`` atomically (:func:`atomic_output`)."""
    with atomic_output(path) as fh:
        fh.write(payload.encode("utf-8") if isinstance(payload, str) else payload)


@contextlib.contextmanager
def jsonl_writer(path: str | os.PathLike) -> Iterator[Callable[[Mapping[str, object]], None]]:
    """An atomic ``write(record)`` for JSONL (gzip when the name ends in .gz): ``path`` is replaced only when
    the block ends without an error."""
    with atomic_output(path) as raw, (
            # mtime=0 and no file name in the header keep the bytes identical for identical content
            gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz")
            else contextlib.nullcontext(raw)) as out:
        yield lambda rec: out.write((json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))


def write_jsonl(path: str | os.PathLike, records: Iterable[Mapping[str, object]]) -> int:
    """Write records atomically as JSONL (gzip when the name ends in .gz); return the count."""
    count = 0
    with jsonl_writer(path) as write:
        for count, rec in enumerate(records, 1):
            write(rec)
    return count


def write_json(path: str | os.PathLike, obj: object) -> None:
    """``obj`` as indented JSON (keys sorted), written atomically."""
    atomic_write(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def read_json(path: str | os.PathLike) -> JSONValue:
    """The JSON document in ``path``; :class:`InputFileError` (file and line) when it is not JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(path, None, f"not UTF-8 text (byte {exc.start}): {exc.reason}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, exc.lineno, _json_error(exc)) from exc


class Missing(enum.Enum):
    """The type of :data:`MISSING`: what :func:`read_cache_entry` returns for an entry it does not have."""

    MISSING = "MISSING"


MISSING: Final = Missing.MISSING

_T = TypeVar("_T")


def read_cache_entry(path: str | os.PathLike, parse: Callable[[bytes], _T], stats: Counter[str], what: str) -> _T | Missing:
    """One cache file's value, ``parse(bytes)``, or :data:`MISSING` when absent or damaged (``parse`` raises
    ``ValueError``, ``KeyError`` or ``TypeError``): a miss counted in ``stats["damaged"]`` and logged."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return MISSING
    try:
        return parse(raw)
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        reason = _json_error(exc) if isinstance(exc, json.JSONDecodeError) else f"{type(exc).__name__}: {exc}"
        stats["damaged"] += 1
        log.warning("%s: damaged cache file %s (%s, %d bytes); fetching it again", what, path, reason, len(raw))
        return MISSING


def input_paths(inputs: StepFiles, name: str) -> list[str]:
    """A rule input that may be one path, a list of paths or absent, as a list of paths."""
    value = inputs.get(name) or []
    return [str(v) for v in ([value] if isinstance(value, (str, os.PathLike)) else value)]


def table_stem(outputs: StepFiles) -> Path:
    """The common stem of a rule's ``csv``, ``md`` and ``tex`` outputs (they must share it)."""
    stem = Path(outputs["csv"]).with_suffix("")
    for fmt in ("md", "tex"):
        if Path(outputs[fmt]) != stem.with_suffix("." + fmt):
            raise ValueError(f"outputs.{fmt} must sit next to outputs.csv with the same stem, got {dict(outputs)}")
    return stem


def _html_table(df: pd.DataFrame, caption: str) -> str:
    """A small standalone HTML page with the table under its caption (for the report's viewer)."""
    import html

    table = df.to_html(index=False, border=0, na_rep="", escape=True, classes="medfc-table")
    style = ("body{font-family:sans-serif;font-size:13px;margin:12px}caption,p{text-align:left;margin-bottom:8px}"
             "table{border-collapse:collapse}th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left}"
             "th{background:#f3f3f3}")
    head = f"<p>{html.escape(caption)}</p>" if caption else ""
    return f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>{style}</style></head><body>{head}{table}</body></html>\n'


def write_table(df: pd.DataFrame, stem: str | os.PathLike, caption: str = "", formats: Iterable[str] = ("csv", "md", "tex"),
                latex: LatexTable | None = None) -> list[Path]:
    """Write one table as CSV, Markdown and LaTeX (and HTML, when in ``formats``) at ``stem`` + suffix. The LaTeX
    is ``latex`` when given, else the frame as a plain booktabs table (:mod:`medfc.common.latex`)."""
    from medfc.common import latex as tex

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        out = stem.with_suffix("." + fmt)
        if fmt == "csv":
            df.to_csv(out, index=False)
        elif fmt == "md":
            out.write_text((f"{caption}\n\n" if caption else "") + df.to_markdown(index=False) + "\n", encoding="utf-8")
        elif fmt == "tex":
            table = latex or tex.from_rows(caption, tex.label_of(stem.name), [str(c) for c in df.columns],
                                           df.itertuples(index=False))
            out.write_text(tex.render(table), encoding="utf-8")
        elif fmt == "html":  # the report's view of the table (Snakemake's report shows it; a CSV it only links)
            out.write_text(_html_table(df, caption), encoding="utf-8")
        written.append(out)
    return written
