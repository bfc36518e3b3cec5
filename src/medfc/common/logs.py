"""Logging set-up shared by every command-line step, and a job's output kept in its log."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from medfc.common.redact import RedactingFilter, redact

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
TAIL_LINES = 12  # the lines of a failed job's log shown on the terminal
TAIL_WIDTH = 200  # and their characters at most


class RedactingFormatter(logging.Formatter):
    """The log line, traceback included, with every credential redacted (:func:`medfc.common.redact.redact`)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup_logging(log_file: str | Path | None = None, level: int = logging.INFO) -> None:
    """Log to stderr and, when given, to ``log_file`` (the rule's log); no secret reaches either."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="a", encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(RedactingFormatter(FORMAT))
        handler.addFilter(RedactingFilter())
    logging.basicConfig(level=level, handlers=handlers, force=True)


@contextmanager
def output_into(log_file: str | Path) -> Iterator[TextIO]:
    """Send this process's stdout and stderr (fd 1 and 2: logs, progress bars, C libraries) into ``log_file``
    (appended), yielding a stream to the original stderr for what the user must see; restored on exit."""
    path = Path(log_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    terminal = os.fdopen(os.dup(saved[2]), "w", encoding="utf-8", errors="replace", buffering=1)
    try:
        for fd in (1, 2):
            os.dup2(log_fd, fd)
        os.close(log_fd)
        yield terminal
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        terminal.close()


def tail(path: str | Path, lines: int = TAIL_LINES) -> list[str]:
    """The last ``lines`` lines of a text file (none when it cannot be read); credentials redacted."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 64 * 1024))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [redact(line.rstrip()) for line in text.splitlines()[-lines:]]


def failure_summary(job: str, exc: BaseException, log_file: str | Path, seconds: float, reading: str | None = None) -> str:
    """What the terminal shows of a failed job: the error (and the file it was ``reading``), the log's path and
    its last lines, each cut to :data:`TAIL_WIDTH` characters."""
    what = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SystemExit) else str(exc.code)
    cause = redact(" ".join(what.split()))
    where = f" while reading {reading}" if reading else ""
    lines = [f"medfc: {job} failed{where} after {seconds:.1f} s: {cause[:500]}", f"  log: {log_file} (last lines below)"]
    lines += [f"  | {line[:TAIL_WIDTH]}" + (" ..." if len(line) > TAIL_WIDTH else "") for line in tail(log_file)]
    return "\n".join(lines) + "\n"
