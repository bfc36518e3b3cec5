"""Where a dataset's data files are (``datasets.<name>.source``: exactly one of ``path``, ``url`` and ``hf``;
docs/datasets.md), in a light module: the plan checks the source, the import downloads and verifies the files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from medfc.common.jsontypes import JSONValue
from medfc.common.pinning import COMMIT, pinned_commit, release_record, verify
from medfc.common.redact import redact
from medfc.common.sources import hub_url, url_cache_path
from medfc.datasets.options import ImportOptions

SPLITS = ("train", "validation", "test")
SINGLE = "data"  # the file key of a source that is one table
SAVED_MARKERS = ("dataset_dict.json", "state.json")  # what datasets' save_to_disk writes at a folder's top


@dataclass(frozen=True)
class SourceFile:
    """One data file: its key (``data``, a key of ``files``, or a saved folder's file path), where it is read from
    (path or URL) and where it is here (a URL's download in the cache)."""

    key: str
    location: str
    local: Path

    @property
    def remote(self) -> bool:
        return self.location != str(self.local)


def hf_url(repo: str, revision: str, config: str | None, file: str) -> str:
    """A data file of a Hugging Face dataset repository at a commit, under its config's folder."""
    folder = f"{config.strip('/')}/" if config else ""
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return hub_url(endpoint, repo, revision, f"{folder}{file.lstrip('/')}")


def saved_folder(options: ImportOptions) -> Path | None:
    """The source's ``save_to_disk`` folder: a ``path`` that is a folder, given without ``files``."""
    path = options.source.path
    return Path(path) if path and not options.source.files and Path(path).is_dir() else None


def split_of(key: str, options: ImportOptions) -> str:
    """The run's split a file key (or a saved folder's split) is: renamed by ``splits.names``."""
    return options.splits.names.get(key, key)


def source_problem(options: ImportOptions) -> str | None:
    """What is wrong with ``datasets.<name>.source`` taken alone (one line naming the key), or None."""
    s, key = options.source, f"{options.key}.source"
    given = [k for k in ("path", "url", "hf") if getattr(s, k)]
    if len(given) != 1:
        return f"{key}: set exactly one of path, url and hf (set: {', '.join(given) or 'none'})"
    if not s.hf:
        extra = [k for k in ("config", "revision") if getattr(s, k)]
        if extra:
            return f"{key}.{extra[0]} is read with hf only, but the source is {given[0]}"
    else:
        if not s.revision:
            return f"{key}.revision is required with hf: the repository's commit (40 hex digits) the files are read at"
        if not COMMIT.match(s.revision.lower()):
            return (f"{key}.revision {s.revision!r} is not a commit: a branch or a tag moves, name the 40-hex commit of "
                    f"{s.hf} to read its files at")
        if not s.files:
            return f"{key}.files is required with hf: each split's data file in the repository (Parquet, CSV, JSON, JSONL)"
    seen: dict[str, str] = {}
    for file_key in s.files:
        split = split_of(file_key, options)
        if split not in SPLITS:
            return (f"{key}.files.{file_key}: {file_key!r} is none of the splits {', '.join(SPLITS)}: rename it with "
                    f"{options.key}.splits.names ({file_key}: validation)")
        if split in seen:
            return f"{key}.files: {seen[split]} and {file_key} are both the {split} split"
        seen[split] = file_key
    if s.files and "train" not in seen:
        return f"{key}.files names no train split (files: {', '.join(s.files)})"
    known = set(s.files) or (set() if saved_folder(options) else {SINGLE})  # a saved folder's files: known when read
    unknown = [k for k in s.sha256 if known and k not in known]
    if unknown:
        return f"{key}.sha256.{unknown[0]}: no file of the source has this key (its keys: {', '.join(sorted(known))})"
    unpinned = [k for k in (s.files or [SINGLE]) if not s.sha256.get(k)] if s.url and not pinned_commit(s.url) else []
    if unpinned:
        return (f"{key}.url {redact(s.url)!r} names no commit (a GitHub URL at a 40-hex commit), so its files can change: pin "
                f"it at a commit, or pin every file in {key}.sha256 (not pinned: {', '.join(unpinned)})")
    return None


def source_files(options: ImportOptions) -> list[SourceFile]:
    """Every data file of the source, in the order of ``files``."""
    s = options.source
    if s.path:
        root = Path(s.path)
        if s.files:
            return [SourceFile(k, str(root / f), root / f) for k, f in s.files.items()]
        if saved_folder(options):
            if not any((root / marker).is_file() for marker in SAVED_MARKERS):
                raise ValueError(f"{options.key}.source.path {s.path!r} is a folder: name its file of each split in "
                                 f"{options.key}.source.files, or give a folder datasets' save_to_disk wrote")
            return [SourceFile(p.relative_to(root).as_posix(), str(p), p) for p in sorted(root.rglob("*")) if p.is_file()]
        return [SourceFile(SINGLE, s.path, root)]
    if s.url:
        urls = {k: f"{s.url.rstrip('/')}/{f.lstrip('/')}" for k, f in s.files.items()} or {SINGLE: s.url}
    else:
        assert s.hf and s.revision
        urls = {k: hf_url(s.hf, s.revision, s.config, f) for k, f in s.files.items()}
    return [SourceFile(k, u, url_cache_path(u, options.cache_dir)) for k, u in urls.items()]


def fetch(options: ImportOptions) -> tuple[list[SourceFile], dict[str, JSONValue]]:
    """Every data file of a source the plan checked (:func:`source_problem`) here (a URL's downloaded once) and checked
    against its pin before any is read; returns them and the source's record
    (:func:`medfc.common.pinning.release_record`, each file with where it was read from)."""
    files = source_files(options)
    if any(f.remote for f in files):
        from medfc.common.http import HttpClient
        from medfc.common.sources import download_once

        http = HttpClient(rate=1.0, burst=3, max_retries=3)  # a dataset's three split files at once, then 1/s
        for f in files:
            if f.remote:
                download_once(f.location, f.local, http)
    pins = options.source.sha256
    unknown = sorted(set(pins) - {f.key for f in files})
    if unknown:
        raise ValueError(f"config: {options.key}.source.sha256.{unknown[0]}: no file of the source has this key "
                         f"(its keys: {', '.join(f.key for f in files)})")
    records: dict[str, dict[str, JSONValue]] = {}
    for f in files:
        named = f"{f.location} (downloaded to {f.local})" if f.remote else f.location
        records[f.key] = {**verify(f.local, pins.get(f.key), f"{options.key}.source.sha256.{f.key}", named), "location": f.location}
    s = options.source  # named in one word: its path, its URL, or hf:<repo>@<revision>[/<config>]
    if s.hf:
        record = release_record(options.name, f"hf:{s.hf}@{s.revision}" + (f"/{s.config}" if s.config else ""), records)
        record.update(kind="hf", commit=s.revision, repo=s.hf, revision=s.revision, config=s.config)
    else:
        record = release_record(options.name, str(s.path or s.url), records)
        record["kind"] = "url" if s.url else "path"
    return files, record
