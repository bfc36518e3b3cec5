"""Pinned release files (docs/sources.md, "Pinned releases"): a file whose SHA-256 differs from its pin is refused
before it is read (:func:`verify`), an unpinned one accepted and its hash recorded (:func:`release_record`)."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse

from medfc.common.jsontypes import JSONValue
from medfc.common.redact import redact

COMMIT = re.compile(r"^[0-9a-f]{40}$")
RELEASES_FILE = "releases.jsonl"  # in the run's provenance folder: one line per release a job read


class ReleaseChanged(ValueError):
    """A release file whose SHA-256 is not the one its config pins."""


def sha256_of(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pinned_commit(source: str | None) -> str | None:
    """The commit a GitHub location names (``raw.githubusercontent.com/<owner>/<repo>/<commit>/...``,
    ``github.com/<owner>/<repo>/raw|blob|tree/<commit>/...``); None otherwise."""
    if not source:
        return None
    url = urlparse(str(source))
    parts = [p for p in url.path.split("/") if p]
    ref = None
    if url.hostname == "raw.githubusercontent.com" and len(parts) >= 3:
        ref = parts[2]
    elif url.hostname == "github.com" and len(parts) >= 4 and parts[2] in ("raw", "blob", "tree"):
        ref = parts[3]
    return ref if ref and COMMIT.match(ref) else None


def verify(path: str | os.PathLike, expected: str | None, key: str, file: str | None = None) -> dict[str, JSONValue]:
    """``path``'s SHA-256 against ``expected`` (config ``key``; None accepts); returns ``{sha256, pinned}``, or
    raises :class:`ReleaseChanged` naming ``file`` (default: the path)."""
    found = sha256_of(path)
    if expected and found != expected.lower():
        raise ReleaseChanged(f"release changed: {file or path} has SHA-256 {found}, but {key} pins {expected.lower()}; "
                             f"to accept this version of the file, set {key}: {found}")
    return {"sha256": found, "pinned": bool(expected)}


def release_record(dataset: str, source: str, files: Mapping[str, Mapping[str, JSONValue]]) -> dict[str, JSONValue]:
    """What a run records of a release: dataset, redacted source, the commit its URL names, each file's record."""
    return {"dataset": dataset, "source": redact(str(source)), "commit": pinned_commit(source),
            "files": {name: dict(record) for name, record in files.items()}}


def record_release(record: Mapping[str, JSONValue]) -> Path | None:
    """Append ``record`` with the run id to ``<provenance>/releases.jsonl`` (:data:`RECORDS_ENV`); None outside a run."""
    from medfc.common.provenance import RECORDS_ENV, RUN_ENV, append_run_record

    folder = os.environ.get(RECORDS_ENV)
    return append_run_record(folder, {"run": os.environ.get(RUN_ENV), **record}, name=RELEASES_FILE) if folder else None


def describe(record: Mapping[str, JSONValue]) -> str:
    """One line for a card or an index: the source, its commit, each file's SHA-256 (pinned or recorded)."""
    files = record.get("files") or {}
    commit = record.get("commit")
    at = f" (commit {commit})" if commit else " (no commit named)"
    hashes = "; ".join(f"{name} SHA-256 {f['sha256']}{'' if f.get('pinned') else ' (recorded, not pinned)'}"
                       for name, f in files.items() if isinstance(f, dict))
    return f"{record.get('source')}{at}: {hashes}"
