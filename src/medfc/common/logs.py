"""Logging set-up shared by every command-line step."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from medfc.common.redact import RedactingFilter, redact

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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
