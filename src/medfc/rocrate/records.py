"""What a results folder records of its runs, as :mod:`medfc.rocrate` reads it: ``provenance/runs.jsonl``,
the config files each run read, Snakemake's log of each run, how each run ended and which files it wrote."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from medfc.common.io import numbered_json_lines
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.common.run_index import configfile_args

COMPLETED = "http://schema.org/CompletedActionStatus"
FAILED = "http://schema.org/FailedActionStatus"
DEFAULT_CONFIG = "config/config.yaml"  # the workflow's own config, read by every run (workflow/Snakefile's configfile:)


@dataclass(frozen=True)
class RunEnd:
    """When a run ended and how (None: not known), and where that was read."""

    ended: dt.datetime | None
    status: str | None
    source: str


def read_runs(path: Path, report: SkipReport) -> list[JSONObject]:
    """The run records of ``runs.jsonl`` in start order; a line that is not an object with ``run`` and
    ``started`` is skipped and counted (``damaged_run_record``)."""
    if not path.is_file():
        report.skip(str(path), "missing_runs_record")
        return []
    runs = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, record in numbered_json_lines(fh):
            if isinstance(record, json.JSONDecodeError):
                report.skip(f"runs.jsonl line {n}", "damaged_run_record", str(record))
                continue
            if not isinstance(record, dict) or not record.get("run") or parse_time(record.get("started")) is None:
                report.skip(f"runs.jsonl line {n}", "damaged_run_record", "not a run record (run, started)")
                continue
            runs.append(record)
    return sorted(runs, key=lambda r: parse_time(r["started"]))  # type: ignore[arg-type, return-value]


def parse_time(value: object) -> dt.datetime | None:
    """An ISO time (a time without a zone is UTC); None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)


def iso_time(when: float | dt.datetime) -> str:
    t = when if isinstance(when, dt.datetime) else dt.datetime.fromtimestamp(when, dt.timezone.utc)
    return t.astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def modified(path: Path) -> dt.datetime:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)


def read_yaml(path: Path, report: SkipReport, reason: str) -> Mapping[str, object]:
    """A YAML mapping; a missing or unreadable file is skipped and counted under ``reason``."""
    import yaml

    if not path.is_file():
        report.skip(str(path), reason, "no such file")
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        report.skip(str(path), reason, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return {}
    if not isinstance(data, dict):
        report.skip(str(path), reason, "not a mapping")
        return {}
    return data


def config_paths(record: Mapping[str, JSONValue], checkout: Path | None) -> list[Path]:
    """The config files a run read: the workflow's default (the run folder's ``config/config.yaml``, else the
    checkout's), then each ``--configfile`` of its command, relative to its folder."""
    workdir = Path(record.get("workdir") or ".")
    default = workdir / DEFAULT_CONFIG
    if not default.is_file() and checkout is not None:
        default = checkout / DEFAULT_CONFIG
    paths = [default, *(workdir / f for f in configfile_args(record.get("command") or []))]
    return [Path(os.path.normpath(p)) for p in paths]


def checkpoint_dirs(runs: Sequence[Mapping[str, JSONValue]]) -> list[Path]:
    """Each run's ``experiments.checkpoint_dir`` (resolved against its folder; default
    ``<results_dir>/checkpoints``): kept models, not workflow outputs."""
    out = []
    for r in runs:
        config = r.get("config") or {}
        ckpt = (config.get("experiments") or {}).get("checkpoint_dir") or f"{config.get('results_dir') or 'results'}/checkpoints"
        if isinstance(ckpt, str) and ckpt:
            out.append(Path(os.path.normpath(Path(r.get("workdir") or ".") / ckpt)).resolve())
    return out


_LOG_NAME = re.compile(r"^(\d{4}-\d\d-\d\dT\d{6}\.\d+)\.snakemake\.log$")
_DONE = re.compile(r"^(\d+) of (\d+) steps \((\d+)%\) done$")
_FAILED = ("Exiting because a job execution failed", "Error in rule", "WorkflowError", "IncompleteFilesException")
_LOG_WINDOW = dt.timedelta(hours=1)  # a run's id is made when its Snakefile is read, at most this long after Snakemake starts


def snakemake_log(run: Mapping[str, JSONValue]) -> Path | None:
    """Snakemake's log of a run: the latest in its folder's ``.snakemake/log/`` that Snakemake started before
    the run's start (the name is local time) and last wrote after it."""
    logs = Path(str(run.get("workdir") or ".")) / ".snakemake" / "log"
    start = parse_time(run.get("started"))
    if start is None or not logs.is_dir():
        return None
    best: tuple[dt.datetime, Path] | None = None
    for path in logs.iterdir():
        m = _LOG_NAME.match(path.name)
        if not m:
            continue
        began = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H%M%S.%f").astimezone()  # the machine's local time
        # a run id is made to the second: a log begun in that second counts as before it
        if began - dt.timedelta(seconds=1) <= start <= began + _LOG_WINDOW and modified(path) >= start - dt.timedelta(seconds=1):
            if best is None or began > best[0]:
                best = (began, path)
    return best[1] if best else None


def log_outcome_of(text: str) -> str | None:
    """How a Snakemake log ends: completed (all steps done, or nothing to do), failed, or None (cut short)."""
    lines = [line.strip() for line in text.splitlines()[-400:]]
    if any(line.startswith(_FAILED) for line in lines):
        return FAILED
    for line in reversed(lines):
        m = _DONE.match(line)
        if m:
            return COMPLETED if m.group(1) == m.group(2) else None
        if line.startswith("Nothing to be done"):
            return COMPLETED
    return None


def run_end(run: Mapping[str, JSONValue], written: Sequence[Path]) -> RunEnd:
    """When and how a run ended: from Snakemake's log, else from the files it wrote (``written``)."""
    log = snakemake_log(run)
    if log is not None:
        status = None
        with contextlib.suppress(OSError):
            status = log_outcome_of(log.read_text(encoding="utf-8", errors="replace"))
        if status is not None:
            return RunEnd(modified(log), status, "snakemake_log")
    if written:
        return RunEnd(max(modified(p) for p in written), None, "results_folder")  # the status: the caller's (the index)
    return RunEnd(None, None, "none")


def results_of_runs(runs: Sequence[Mapping[str, JSONValue]], files: Mapping[str, Path], report: SkipReport | None) -> dict[str, list[str]]:
    """Each run's files: last changed at or after its start and before the next run's (files older than every
    run counted in ``report`` as ``results_older_than_every_run``)."""
    starts = [parse_time(r["started"]) for r in runs]
    by_run: dict[str, list[str]] = {r["run"]: [] for r in runs}
    for crate_path, source in files.items():
        changed = modified(source)
        owners = [r["run"] for r, start in zip(runs, starts) if start is not None and start <= changed]
        if owners:
            by_run[owners[-1]].append(crate_path)
        elif report is not None:
            report.count("results_older_than_every_run")
    return by_run


def relative_to_run(path: Path, run: Mapping[str, JSONValue] | None) -> str:
    """A config file's path as its run's command named it: relative to the run's folder (else its name)."""
    if run is not None and run.get("workdir"):
        try:
            return Path(os.path.relpath(path, Path(str(run["workdir"])))).as_posix()
        except ValueError:
            pass
    return path.name
