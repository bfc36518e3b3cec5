"""A finished run's record as a Workflow Run RO-Crate (``medfc rocrate``).

    medfc rocrate --results-dir DIR [--output CRATE.zip | --output CRATE_DIR] [--workflow-dir DIR]
                  [--agent NAME [--agent-id URI]]

The crate follows RO-Crate 1.1 and the Workflow Run Crate profile 0.5 (https://w3id.org/ro/wfrun/workflow/0.5,
with the Process Run Crate and Workflow RO-Crate 1.0 it builds on). Its ``ro-crate-metadata.json`` is built
with ro-crate-py (the ``rocrate`` package, :class:`rocrate.rocrate.ROCrate` at version 1.1); it describes:

* the root ``Dataset``: every file of the crate (``hasPart``), the profiles it conforms to, the licence of the
  workflow, ``mainEntity`` the workflow, ``mentions`` its runs, and ``author`` the agent when one is given;
* the crate's ``README.md`` (written by this module: what the crate holds, its runs, the licences), ``about``
  the root;
* the workflow, ``workflow/Snakefile`` (``File``, ``SoftwareSourceCode``, ``ComputationalWorkflow``, conforming
  to Bioschemas' ComputationalWorkflow profile 1.0; language Snakemake, of the version that made the results),
  with its title, version, release date, authors, licence, keywords and the works to cite (``citation``) from
  ``CITATION.cff``, its rule files (``hasPart``), its input (the config files, a ``FormalParameter``) and output
  (the files it writes) and the software it ran with (``softwareRequirements``: one ``SoftwareApplication`` per
  package of ``provenance/software.yml``, Python first, each identified by its page on python.org or PyPI;
  medfc itself, the workflow, has no public address the project knows, so its entry keeps a local id);
* one ``CreateAction`` per line of ``provenance/runs.jsonl`` (one per Snakemake run: :mod:`medfc.common.provenance`):
  ``startTime``, ``endTime``, ``actionStatus``, ``agent`` (when given), ``instrument`` the workflow, ``object``
  the config files it read (the workflow's default config and each ``--configfile``), ``result`` the files it
  wrote, ``location`` its host, its command in ``description``. A file is the result of the latest run that
  started before the file was last written; a file older than every recorded run is in the crate but no run's
  result (counted). Logs, timings, the index and the provenance records are in the crate but not results.
  A run's end and status come from Snakemake's own log of it (``<its folder>/.snakemake/log/``: the log's last
  write, and whether it ends with all steps done or with a failed job); without that log the end is the last
  file the run wrote in the results folder and the run completed when it wrote the index (``index.md``, the
  last job of every full run); what neither tells is left out and counted (``run_end_unknown``,
  ``run_status_unknown``).

Every path in the metadata is relative to the crate. Nothing names the machine's folders: a config file's
description gives its path relative to the run's folder.

The crate's files are the results folder's files at their paths in it (``tables/healthfc_table3.csv``), the
workflow's folder under ``workflow/``, the config files under ``config/``, the checkout's ``LICENSE`` and
``CITATION.cff`` and the README. By default the crate is the results folder itself: the metadata, the README
and the workflow's files are written into it, the results stay where they are. ``--output X.zip`` writes all
of it into one zip instead (the metadata at its root), and ``--output DIR`` into another folder (the results
copied). Model checkpoints under the results folder (``experiments.checkpoint_dir``: not a workflow output) and
hidden files are left out. Whatever is named but missing (a config file, ``software.yml``, ``CITATION.cff``),
a damaged line of ``runs.jsonl`` and the files left out are skipped and counted in the summary, never a failure.

What the validator (roc-validator) still recommends and the project cannot state without facts it does not
have: the crate's publisher, the affiliations (and an organisation's web address) of the authors CITATION.cff
names without them and of the agent, a public address for the workflow and for medfc, and, unless ``--agent``
names one, who ran the runs (:data:`NEEDS_FACTS`).
"""

from __future__ import annotations

import datetime as dt
import json
import mimetypes
import os
import re
import shutil
import sys
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict
from urllib.parse import unquote

from medfc.common.io import atomic_output, numbered_json_lines
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport

if TYPE_CHECKING:
    import argparse

    from rocrate.model.entity import Entity as CrateEntity
    from rocrate.rocrate import ROCrate

CRATE_VERSION = "1.1"  # the RO-Crate version the Workflow Run Crate 0.5 profile builds on
METADATA = "ro-crate-metadata.json"
README = "README.md"
RO_CRATE = "https://w3id.org/ro/crate/1.1"
PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5"
WORKFLOW_RUN_CRATE = "https://w3id.org/ro/wfrun/workflow/0.5"
WORKFLOW_RO_CRATE = "https://w3id.org/workflowhub/workflow-ro-crate/1.0"
PROFILES = ((PROCESS_RUN_CRATE, "Process Run Crate", "0.5"), (WORKFLOW_RUN_CRATE, "Workflow Run Crate", "0.5"),
            (WORKFLOW_RO_CRATE, "Workflow RO-Crate", "1.0"))
BIOSCHEMAS_WORKFLOW = "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"
SPDX = "https://spdx.org/licenses/"
PYTHON_URL = "https://www.python.org/"
PYPI = "https://pypi.org/project/"
COMPLETED = "http://schema.org/CompletedActionStatus"
FAILED = "http://schema.org/FailedActionStatus"

MAIN_WORKFLOW = "workflow/Snakefile"
DEFAULT_CONFIG = "config/config.yaml"  # the workflow's own config, read by every run (workflow/Snakefile's configfile:)
INDEX = "index.md"  # the run's index (rule index): the last job of every full run
# top-level names of the crate that are not the results folder's (written into it when the crate is that folder)
CRATE_NAMES = ("workflow", "config", "LICENSE", "CITATION.cff", README, METADATA)
NOT_RESULTS = ("logs", "timings", "provenance", "index.md", "index.html")  # in the crate, but no run's result
CONFIG_OPTIONS = ("--configfile", "--configfiles")
# CITATION.cff's reference types → schema.org
CFF_TYPES = {"article": "ScholarlyArticle", "conference-paper": "ScholarlyArticle", "data": "Dataset", "software": "SoftwareSourceCode",
             "report": "Report", "thesis": "Thesis", "book": "Book"}
DESCRIPTIONS = {
    "provenance/runs.jsonl": "One line per Snakemake run: its id, start, host, folder, command, software and resolved config.",
    "provenance/software.yml": "The software of the latest results: Python, the platform and the package versions.",
    "LICENSE": "The licence of the workflow and the medfc package (the datasets keep their own: CITATION.cff).",
    "CITATION.cff": "How to cite medfc and the works whose data and methods it rebuilds.",
    README: "What this crate holds, the runs it records and the licences of what it holds.",
}
# a file's media type by its name's ending (longest first), independent of the machine's mime.types; the rule
# files and the Snakefile are text
MEDIA_TYPES = {
    ".json.gz": "application/gzip", ".jsonl.gz": "application/gzip", ".gz": "application/gzip", ".zip": "application/zip",
    ".json": "application/json", ".jsonl": "application/jsonl", ".yaml": "application/yaml", ".yml": "application/yaml",
    ".cff": "application/yaml", ".csv": "text/csv", ".tsv": "text/tab-separated-values", ".parquet": "application/vnd.apache.parquet",
    ".md": "text/markdown", ".rst": "text/x-rst", ".txt": "text/plain", ".log": "text/plain", ".smk": "text/plain",
    ".py": "text/x-python", ".sh": "text/x-shellscript", ".html": "text/html", ".css": "text/css", ".tex": "application/x-tex",
    ".png": "image/png", ".svg": "image/svg+xml", ".pdf": "application/pdf", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
}
TEXT_NAMES = ("Snakefile", "LICENSE")  # files without an ending that are plain text
#: the validator's recommendations the crate cannot meet without facts the project does not have (check → why)
NEEDS_FACTS = {
    "ro-crate-1.1_22.2": "the crate's author: who ran the runs (medfc rocrate --agent)",
    "ro-crate-1.1_22.3": "the crate's publisher, an Organization",
    "ro-crate-1.1_30.2": "the affiliation of an author CITATION.cff names without one, and of the agent",
    "ro-crate-1.1_30.3": "the affiliation of an author CITATION.cff names without one, and of the agent",
    "ro-crate-1.1_31.2": "the web address of an organisation (the medfc authors, an author's affiliation)",
    "process-run-crate-0.5_3.2": "a public address of the workflow and of medfc",
    "process-run-crate-0.5_5.1": "a public address (absolute id) of the workflow and of medfc",
    "process-run-crate-0.5_8.6": "who ran the runs (medfc rocrate --agent)",
}

# a JSON-LD entity of the crate's graph, or a run record of provenance/runs.jsonl as read
Entity = JSONObject


class CrateSummary(TypedDict, total=False):
    """What an export did (:func:`export`; ``crate``: what it wrote)."""

    results_dir: str
    workflow_dir: str
    runs: int
    files: int
    results: int
    configs: int
    software: int
    skipped_by_reason: dict[str, int]
    skipped: list[str]
    counts: dict[str, int]
    left_out: dict[str, int]
    crate: str


@dataclass
class Crate:
    """A crate ready to write: its metadata, each file's path in the crate with the file it comes from, and
    the files written here (the README) with their text."""

    metadata: JSONObject
    files: dict[str, Path]
    report: SkipReport
    summary: CrateSummary = field(default_factory=CrateSummary)
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def parts(self) -> list[str]:
        """Every file's path in the crate (those copied and those written)."""
        return sorted({*self.files, *self.texts})


@dataclass(frozen=True)
class RunEnd:
    """When a run ended and how (None: not known), and where that was read."""

    ended: dt.datetime | None
    status: str | None
    source: str


# ------------------------------------------------------------------------------------------------ reading


def read_runs(path: Path, report: SkipReport) -> list[JSONObject]:
    """The run records of ``runs.jsonl`` in start order; a line that is not a JSON object with a ``run`` id and a
    ``started`` time is skipped and counted (``damaged_run_record``), never the whole file."""
    if not path.is_file():
        report.skip(str(path), "missing_runs_record")
        return []
    runs = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, record in numbered_json_lines(fh):
            if isinstance(record, json.JSONDecodeError):
                report.skip(f"runs.jsonl line {n}", "damaged_run_record", str(record))
                continue
            if not isinstance(record, dict) or not record.get("run") or _time(record.get("started")) is None:
                report.skip(f"runs.jsonl line {n}", "damaged_run_record", "not a run record (run, started)")
                continue
            runs.append(record)
    return sorted(runs, key=lambda r: _time(r["started"]))  # type: ignore[arg-type, return-value]


def _time(value: object) -> dt.datetime | None:
    """An ISO time (a time without a zone is UTC); None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=dt.timezone.utc)


def _iso(when: float | dt.datetime) -> str:
    t = when if isinstance(when, dt.datetime) else dt.datetime.fromtimestamp(when, dt.timezone.utc)
    return t.astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def _mtime(path: Path) -> dt.datetime:
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
    paths = [default]
    command = [str(a) for a in record.get("command") or []]
    i = 0
    while i < len(command):
        arg = command[i]
        name, eq, value = arg.partition("=")
        if name in CONFIG_OPTIONS:
            if eq:
                paths.append(workdir / value)
            else:
                while i + 1 < len(command) and not command[i + 1].startswith("-"):
                    i += 1
                    paths.append(workdir / command[i])
        i += 1
    return [Path(os.path.normpath(p)) for p in paths]


def checkpoint_dirs(runs: Sequence[Mapping[str, JSONValue]]) -> list[Path]:
    """Each run's ``experiments.checkpoint_dir`` (resolved against its folder; unset: ``<results_dir>/checkpoints``):
    kept models, not workflow outputs."""
    out = []
    for r in runs:
        config = r.get("config") or {}
        ckpt = (config.get("experiments") or {}).get("checkpoint_dir") or f"{config.get('results_dir') or 'results'}/checkpoints"
        if isinstance(ckpt, str) and ckpt:
            out.append(Path(os.path.normpath(Path(r.get("workdir") or ".") / ckpt)).resolve())
    return out


def _walk(root: Path, skip_top: Iterable[str] = ()) -> list[Path]:
    """The files below ``root`` (sorted; hidden files and folders and ``skip_top`` at the top left out)."""
    skip = set(skip_top)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        top = Path(dirpath) == root
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (top and d in skip) and d != "__pycache__")
        for name in sorted(filenames):
            if name.startswith(".") or (top and name in skip):
                continue
            out.append(Path(dirpath) / name)
    return out


def default_workflow_dir() -> Path | None:
    """The ``workflow/`` folder of the checkout medfc is imported from (``src/medfc`` → ``workflow/``), if any."""
    import medfc

    candidate = Path(medfc.__file__).resolve().parents[2] / "workflow"
    return candidate if (candidate / "Snakefile").is_file() else None


# ------------------------------------------------------------------------------------------------ a run's end

_LOG_NAME = re.compile(r"^(\d{4}-\d\d-\d\dT\d{6}\.\d+)\.snakemake\.log$")
_DONE = re.compile(r"^(\d+) of (\d+) steps \((\d+)%\) done$")
_FAILED = ("Exiting because a job execution failed", "Error in rule", "WorkflowError", "IncompleteFilesException")
_LOG_WINDOW = dt.timedelta(hours=1)  # a run's id is made when its Snakefile is read, at most this long after Snakemake starts


def snakemake_log(run: Mapping[str, JSONValue]) -> Path | None:
    """Snakemake's log of a run: the latest log in its folder's ``.snakemake/log/`` that Snakemake started before
    the run's start (its name is Snakemake's start in local time) and last wrote after it."""
    logs = Path(str(run.get("workdir") or ".")) / ".snakemake" / "log"
    start = _time(run.get("started"))
    if start is None or not logs.is_dir():
        return None
    best: tuple[dt.datetime, Path] | None = None
    for path in logs.iterdir():
        m = _LOG_NAME.match(path.name)
        if not m:
            continue
        began = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H%M%S.%f").astimezone()  # the machine's local time
        # a run id is made to the second: a log begun in that second counts as before it
        if began - dt.timedelta(seconds=1) <= start <= began + _LOG_WINDOW and _mtime(path) >= start - dt.timedelta(seconds=1):
            if best is None or began > best[0]:
                best = (began, path)
    return best[1] if best else None


def log_outcome(path: Path) -> str | None:
    """How a Snakemake log file ends (:func:`log_outcome_of`); None when it cannot be read."""
    try:
        return log_outcome_of(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def log_outcome_of(text: str) -> str | None:
    """How a Snakemake log ends: completed (every step done, or nothing to do), failed (a job failed), or None
    (cut short, e.g. killed)."""
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
    """When and how a run ended: from Snakemake's log of it, else from the files it wrote in the results folder
    (``written``: those last changed while it was the latest run)."""
    log = snakemake_log(run)
    if log is not None:
        status = log_outcome(log)
        if status is not None:
            return RunEnd(_mtime(log), status, "snakemake_log")
    if written:
        return RunEnd(max(_mtime(p) for p in written), None, "results_folder")  # the status: the caller's (the index)
    return RunEnd(None, None, "none")


# ------------------------------------------------------------------------------------------------ entities


def media_type(crate_path: str) -> str:
    """A file's media type by its name (the rule files and ``Snakefile`` as text; unknown: octet-stream)."""
    name = Path(crate_path).name
    if name in TEXT_NAMES:
        return "text/plain"
    lower = name.lower()
    for ending, kind in sorted(MEDIA_TYPES.items(), key=lambda kv: -len(kv[0])):
        if lower.endswith(ending):
            return kind
    kind, _ = mimetypes.MimeTypes(filenames=()).guess_type(name)  # Python's own table, not the machine's
    return kind or "application/octet-stream"


def file_properties(source: Path, crate_path: str, description: str | None = None) -> JSONObject:
    """A ``File`` data entity's properties: its name, size, media type and last change."""
    st = source.stat()
    props: JSONObject = {"name": Path(crate_path).name, "contentSize": str(st.st_size), "dateModified": _iso(st.st_mtime),
                         "encodingFormat": media_type(crate_path)}
    if description:
        props["description"] = description
    return props


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "x"


def _one_or_list(refs: list) -> object:
    """A single value for one reference (RO-Crate 1.1's compact form), a list for several."""
    return refs[0] if len(refs) == 1 else refs


def _people(crate: ROCrate, authors: object) -> list[CrateEntity]:
    """CITATION.cff's authors as ``Person`` (family and given names; an affiliation as an ``Organization``) or
    ``Organization`` (a name) entities, one per name."""
    from rocrate.model.contextentity import ContextEntity

    out = []
    for a in authors or []:
        if not isinstance(a, dict):
            continue
        if a.get("family-names"):
            name = " ".join(str(a[k]) for k in ("given-names", "family-names") if a.get(k))
            props: JSONObject = {"@type": "Person", "name": name, "familyName": str(a["family-names"])}
            if a.get("given-names"):
                props["givenName"] = str(a["given-names"])
            if a.get("affiliation"):
                org = _organization(crate, str(a["affiliation"]))
                props["affiliation"] = {"@id": org.id}
        elif a.get("name"):
            name, props = str(a["name"]), {"@type": "Organization", "name": str(a["name"])}
        else:
            continue
        key = f"#{str(props['@type']).lower()}-{_slug(name)}"
        entity = crate.get(key)
        if entity is None:
            entity = crate.add(ContextEntity(crate, key, properties=props))
        elif "affiliation" in props and "affiliation" not in entity:  # one entity per name: an affiliation given anywhere
            entity["affiliation"] = props["affiliation"]
        out.append(entity)
    return out


def _organization(crate: ROCrate, name: str) -> CrateEntity:
    from rocrate.model.contextentity import ContextEntity

    key = f"#organization-{_slug(name)}"
    return crate.get(key) or crate.add(ContextEntity(crate, key, properties={"@type": "Organization", "name": name}))


def citation_entities(crate: ROCrate, cff: Mapping[str, object]) -> list[CrateEntity]:
    """The works ``CITATION.cff`` asks users to cite beside medfc (its ``references``), as contextual entities."""
    from rocrate.model.contextentity import ContextEntity

    out = []
    for n, ref in enumerate(cff.get("references") or [], 1):
        if not isinstance(ref, dict) or not ref.get("title"):
            continue
        props: JSONObject = {"@type": CFF_TYPES.get(str(ref.get("type")), "CreativeWork"), "name": str(ref["title"])}
        authors = _people(crate, ref.get("authors"))
        if authors:
            props["author"] = _one_or_list([{"@id": a.id} for a in authors])
        if ref.get("year"):
            props["datePublished"] = str(ref["year"])
        url = ref.get("url") or ref.get("repository-code")
        if url:
            props["url"] = str(url)
        if ref.get("license"):
            props["license"] = str(ref["license"])
        out.append(crate.add(ContextEntity(crate, f"#reference-{n}", properties=props)))
    return out


def licence_properties(cff: Mapping[str, object], licence_file: Path | None) -> tuple[str, JSONObject] | None:
    """The workflow's licence: its SPDX id from CITATION.cff, named by the first line of LICENSE."""
    spdx = cff.get("license")
    if not isinstance(spdx, str) or not spdx:
        return None
    name = spdx
    if licence_file is not None and licence_file.is_file():
        first = licence_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        name = first[0].strip() if first else spdx
    return f"{SPDX}{spdx}", {"@type": "CreativeWork", "name": name, "identifier": spdx}


def software_properties(software: Mapping[str, object]) -> list[tuple[str, JSONObject]]:
    """One ``SoftwareApplication`` per installed package of a software record (Python first; absent packages left
    out): Python identified by python.org, a package by its PyPI page, medfc (not on PyPI) by a local id."""
    out = []
    if software.get("python"):
        props: JSONObject = {"@type": "SoftwareApplication", "name": "Python", "softwareVersion": str(software["python"]),
                             "url": PYTHON_URL}
        if software.get("implementation") or software.get("platform"):
            props["description"] = " on ".join(str(software[k]) for k in ("implementation", "platform") if software.get(k))
        out.append((PYTHON_URL, props))
    for name, version in (software.get("packages") or {}).items():
        if not version:
            continue
        props = {"@type": "SoftwareApplication", "name": str(name), "softwareVersion": str(version)}
        if name == "medfc":
            out.append(("#software-medfc", {**props, "description": "The library of this workflow (workflow/Snakefile)."}))
        else:
            page = f"{PYPI}{_slug(str(name))}/"
            out.append((page, {**props, "url": page}))
    return out


# ------------------------------------------------------------------------------------------------ building


def _results_of_runs(runs: Sequence[Mapping[str, JSONValue]], files: Mapping[str, Path], report: SkipReport | None) -> dict[str, list[str]]:
    """Each run's files: those whose last change is at or after its start and before the next run's (files older
    than every run counted in ``report`` under ``results_older_than_every_run``, when given)."""
    starts = [_time(r["started"]) for r in runs]
    by_run: dict[str, list[str]] = {r["run"]: [] for r in runs}
    for crate_path, source in files.items():
        changed = _mtime(source)
        owner = None
        for r, start in zip(runs, starts):
            if start is not None and start <= changed:
                owner = r
        if owner is None:
            if report is not None:
                report.count("results_older_than_every_run")
        else:
            by_run[owner["run"]].append(crate_path)
    return by_run


def _relative_to_run(path: Path, run: Mapping[str, JSONValue] | None) -> str:
    """A config file's path as its run's command named it: relative to the run's folder (else its name)."""
    if run is not None and run.get("workdir"):
        try:
            return Path(os.path.relpath(path, Path(str(run["workdir"])))).as_posix()
        except ValueError:
            pass
    return path.name


def readme_text(title: str, runs: Sequence[Mapping[str, JSONValue]], ends: Mapping[str, RunEnd], n_results: int,
                cff: Mapping[str, object], has: set[str]) -> str:
    """The crate's README: what it holds, the runs it records and the licences of what it holds."""
    lines = [f"# {title}: a run record", "",
             "This folder is a Workflow Run RO-Crate (https://w3id.org/ro/wfrun/workflow/0.5): the results of the medfc",
             "runs below, the workflow that made them and the record of each run. `ro-crate-metadata.json` describes",
             "every file, the software the runs used and what each run read and wrote, as JSON-LD.", "",
             "## What it holds", "",
             f"- the results ({n_results} files) at their paths in the run's results folder" +
             ("; `index.md` says what each folder holds and which runs made it" if INDEX in has else ""),
             "- `workflow/`: the Snakemake workflow that ran (`workflow/Snakefile` and its rule files)",
             "- `config/`: the config files the runs read",
             "- `provenance/`: `runs.jsonl` (each run's command and resolved config) and `software.yml` (the software"
             " of the latest results)"]
    if "logs" in has or "timings" in has:
        lines.append("- `logs/` and `timings/`: each job's log and Snakemake's benchmark of it")
    lines += ["- `LICENSE` and `CITATION.cff`: the workflow's licence and how to cite it and the works it rebuilds", ""]
    lines += ["## Runs", "", "| run | started (UTC) | ended (UTC) | status | command |", "| --- | --- | --- | --- | --- |"]
    for r in runs:
        end = ends.get(str(r["run"]))
        ended = _iso(end.ended) if end and end.ended else "not known"
        status = {COMPLETED: "completed", FAILED: "failed"}.get(end.status if end else None, "not known")
        command = " ".join(str(a) for a in r.get("command") or []).replace("|", "\\|")
        lines.append(f"| {r['run']} | {_iso(_time(r['started']))} | {ended} | {status} | `{command}` |")
    if not runs:
        lines.append("| (no run recorded) | | | | |")
    lines += ["", "## Licences", ""]
    if cff.get("license"):
        lines.append(f"The workflow and the medfc package: {cff['license']} (`LICENSE`).")
    licensed = [ref for ref in cff.get("references") or [] if isinstance(ref, dict) and ref.get("license") and ref.get("title")]
    if licensed:
        lines.append("The data the results derive from keep their own licences, which the workflow's does not replace:")
        lines += [f"- {ref['title']}: {ref['license']}" for ref in licensed]
    lines += ["", "`CITATION.cff` lists the works to cite with medfc.", ""]
    return "\n".join(lines)


def build_crate(results_dir: str | os.PathLike, workflow_dir: str | os.PathLike | None = None, *,
                skip_files: Iterable[str | os.PathLike] = (), agent: str | None = None, agent_id: str | None = None) -> Crate:
    """The crate of the finished run in ``results_dir`` with the workflow of ``workflow_dir`` (default: the one
    beside the imported medfc); ``skip_files`` are left out of the results (e.g. a zip being written there).
    ``agent`` (a person's name, ``agent_id`` its identifier, e.g. an ORCID) ran the runs: each run's agent and
    the crate's author."""
    from rocrate.model.contextentity import ContextEntity
    from rocrate.model.file import File
    from rocrate.rocrate import ROCrate

    results_dir = Path(results_dir).resolve()
    if not results_dir.is_dir():
        raise FileNotFoundError(f"{results_dir}: no such results folder")
    wf = Path(workflow_dir).resolve() if workflow_dir is not None else default_workflow_dir()
    if wf is None or not (wf / "Snakefile").is_file():
        raise FileNotFoundError(f"{wf or 'the checkout of medfc'}: no workflow/Snakefile here; pass --workflow-dir")
    checkout = wf.parent
    report = SkipReport("rocrate")
    provenance = results_dir / "provenance"
    runs = read_runs(provenance / "runs.jsonl", report)
    software = read_yaml(provenance / "software.yml", report, "missing_software_record")
    if not software and runs and isinstance(runs[-1].get("software"), dict):
        software = runs[-1]["software"]  # the latest run's own record
    cff = read_yaml(checkout / "CITATION.cff", report, "missing_citation")

    files: dict[str, Path] = {}

    # the results folder's files (checkpoints and hidden files left out)
    skipped = {Path(p).resolve() for p in skip_files}
    ckpts = [c for c in checkpoint_dirs(runs) if c == results_dir or results_dir in c.parents]
    results: dict[str, Path] = {}
    for path in _walk(results_dir, CRATE_NAMES):
        resolved = path.resolve()
        if resolved in skipped:
            continue
        if any(c == resolved or c in resolved.parents for c in ckpts):
            report.exclude("checkpoints")
            continue
        crate_path = path.relative_to(results_dir).as_posix()
        files[crate_path] = path
        if crate_path.split("/", 1)[0] not in NOT_RESULTS:
            results[crate_path] = path
    run_folder_files = dict(files)  # what the runs wrote in the results folder, results or not

    # the workflow, the config files the runs read, the licence and citation
    workflow_files = {f"workflow/{p.relative_to(wf).as_posix()}": p for p in _walk(wf)}
    files.update(workflow_files)
    configs: dict[str, Path] = {}
    config_runs: dict[str, Mapping[str, JSONValue]] = {}  # a config file → the first run that read it
    run_configs: dict[str, list[str]] = {}
    sources: dict[Path, str] = {}
    for r in runs:
        ids = []
        for path in config_paths(r, checkout):
            if not path.is_file():
                report.skip(str(path), "missing_config_file", f"run {r['run']}")
                continue
            key = path.resolve()
            if key not in sources:
                name = f"config/{path.name}"
                n = 2
                while name in configs:
                    name, n = f"config/{n}-{path.name}", n + 1
                sources[key], configs[name], config_runs[name] = name, path, r
            if sources[key] not in ids:
                ids.append(sources[key])
        run_configs[r["run"]] = ids
    files.update(configs)
    for name in ("LICENSE", "CITATION.cff"):
        if (checkout / name).is_file():
            files[name] = checkout / name
        elif name == "LICENSE":  # CITATION.cff's absence is counted where it is read
            report.skip(str(checkout / name), "missing_licence")

    # each run's files, end and status
    written = _results_of_runs(runs, run_folder_files, report=None)
    run_results = _results_of_runs(runs, results, report)
    ends: dict[str, RunEnd] = {}
    for r in runs:
        mine = [run_folder_files[p] for p in written.get(r["run"], [])]
        end = run_end(r, mine)
        if end.source == "results_folder" and INDEX in written.get(r["run"], []):
            end = RunEnd(end.ended, COMPLETED, end.source)
        ends[r["run"]] = end
        if end.ended is None:
            report.count("run_end_unknown")
        if end.status is None:
            report.count("run_status_unknown")

    title = str(cff.get("title") or "medfc")
    texts = {README: readme_text(title, runs, ends, len(results), cff, {p.split("/", 1)[0] for p in files})}

    # ------------------------------------------------------------------ the crate, through ro-crate-py
    crate = ROCrate(version=CRATE_VERSION)
    root = crate.root_dataset
    root["name"] = f"{title}: the run record of {results_dir.name}/"
    root["description"] = (f"The results, the workflow and the provenance of {len(runs)} Snakemake run(s) of medfc: "
                           f"{len(results)} result file(s), the workflow that made them and each run's command, "
                           "config files, software and outputs.")
    root["conformsTo"] = [{"@id": pid} for pid, _, _ in PROFILES]
    for pid, name, version in PROFILES:
        crate.add(ContextEntity(crate, pid, properties={"@type": "CreativeWork", "name": name, "version": version}))

    licence = licence_properties(cff, checkout / "LICENSE")
    if licence:
        crate.add(ContextEntity(crate, licence[0], properties=licence[1]))
        root["license"] = {"@id": licence[0]}

    person = None
    if agent:
        props: JSONObject = {"@type": "Person", "name": agent}
        person = crate.add(ContextEntity(crate, agent_id or f"#person-{_slug(agent)}", properties=props))
        root["author"] = {"@id": person.id}

    apps = [crate.add(ContextEntity(crate, key, properties=props)) for key, props in software_properties(software)]
    snakemake_version = (software.get("packages") or {}).get("snakemake")

    # the workflow (Bioschemas ComputationalWorkflow) and its rule files
    workflow = crate.add_workflow(wf / "Snakefile", MAIN_WORKFLOW, main=True, lang="snakemake",
                                  lang_version=str(snakemake_version) if snakemake_version else None,
                                  properties=file_properties(wf / "Snakefile", MAIN_WORKFLOW))
    workflow["name"] = title
    workflow["conformsTo"] = {"@id": BIOSCHEMAS_WORKFLOW}
    if cff.get("version"):
        workflow["version"] = str(cff["version"])
    if cff.get("date-released"):
        workflow["dateCreated"] = str(cff["date-released"])
    if cff.get("abstract"):
        workflow["description"] = " ".join(str(cff["abstract"]).split())
    if cff.get("keywords"):
        workflow["keywords"] = ", ".join(str(k) for k in cff["keywords"])
    authors = _people(crate, cff.get("authors"))
    if authors:
        workflow["creator"] = _one_or_list(authors)
        workflow["author"] = _one_or_list(authors)
    if licence:
        workflow["license"] = {"@id": licence[0]}
    cited = citation_entities(crate, cff)
    if cited:
        workflow["citation"] = _one_or_list(cited)
    if apps:
        workflow["softwareRequirements"] = _one_or_list(apps)
    config_param = crate.add_formal_parameter(
        "configfile", "File", identifier="#param-configfile", valueRequired=True,
        description="A config file of the run: the workflow's config/config.yaml, then each --configfile.")
    result_param = crate.add_formal_parameter(
        "result", "File", identifier="#param-result",
        description="A file the workflow writes under the run's results_dir (a dataset, an experiment's output, a table, a figure).")
    workflow["input"] = config_param
    workflow["output"] = result_param

    entities: dict[str, CrateEntity] = {MAIN_WORKFLOW: workflow}  # a file's path → its entity (its id is the path URL-quoted)
    for crate_path, source in sorted(files.items()):
        if crate_path == MAIN_WORKFLOW:
            continue
        description = DESCRIPTIONS.get(crate_path)
        if crate_path in configs:
            description = f"A config file the runs read ({_relative_to_run(configs[crate_path], config_runs.get(crate_path))})"
        entity = entities[crate_path] = crate.add(File(crate, source, crate_path, properties=file_properties(source, crate_path, description)))
        if crate_path in configs:
            entity["exampleOfWork"] = config_param
        elif crate_path in results:
            entity["exampleOfWork"] = result_param
        if crate_path in workflow_files and crate_path != MAIN_WORKFLOW:
            workflow.append_to("hasPart", entity, compact=True)
    crate.add(File(crate, None, README, properties={  # written by this module (Crate.texts); ro-crate-py lists it in the root's parts
        "name": README, "encodingFormat": "text/markdown", "contentSize": str(len(texts[README].encode("utf-8"))),
        "description": DESCRIPTIONS[README], "about": {"@id": "./"}}))

    # one CreateAction per run
    actions = []
    for r in runs:
        end = ends[r["run"]]
        command = " ".join(str(a) for a in r.get("command") or [])
        props = {"name": f"Snakemake run {r['run']}", "startTime": str(r["started"]),
                 "description": command or f"run {r['run']}"}
        if end.ended is not None:
            props["endTime"] = _iso(end.ended)
        if end.status is not None:
            props["actionStatus"] = end.status  # a string, as the Process Run Crate profile has it
        action = crate.add_action(workflow, identifier=f"#run-{r['run']}", properties=props)
        objects = [entities[c] for c in run_configs.get(r["run"], [])]
        if objects:
            action["object"] = _one_or_list(objects)
        made = [entities[p] for p in run_results.get(r["run"], [])]
        if made:
            action["result"] = _one_or_list(made)
        if person is not None:
            action["agent"] = person
        if r.get("host"):
            place = crate.get(f"#host-{_slug(str(r['host']))}") or crate.add(
                ContextEntity(crate, f"#host-{_slug(str(r['host']))}", properties={"@type": "Place", "name": str(r["host"])}))
            action["location"] = place
        actions.append(action)
    if actions:
        root["mentions"] = _one_or_list(actions)

    metadata = crate.metadata.generate()
    summary: CrateSummary = {"results_dir": str(results_dir), "workflow_dir": str(wf), "runs": len(runs), "files": len(files) + len(texts),
                             "results": len(results), "configs": len(configs), "software": len(apps),
                             "skipped_by_reason": report.reasons(), "skipped": [f"{s['id']} ({s['reason']})" for s in report.skipped],
                             "counts": dict(report.counts), "left_out": dict(report.excluded)}
    return Crate(metadata, files, report, summary, texts)


# ------------------------------------------------------------------------------------------------ writing


def _metadata_text(crate: Crate) -> str:
    return json.dumps(crate.metadata, ensure_ascii=False, indent=2) + "\n"


def _previous_parts(directory: Path) -> set[str]:
    """The files an earlier export's metadata in ``directory`` lists (those it may replace)."""
    try:
        graph = json.loads((directory / METADATA).read_text(encoding="utf-8")).get("@graph", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {unquote(e["@id"]) for e in graph if isinstance(e, dict) and isinstance(e.get("@id"), str)}


def _same(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        return False
    return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def _check_replaceable(dest: Path, crate_path: str, previous: set[str], what: str) -> None:
    if crate_path not in previous:
        raise FileExistsError(f"{dest}: exists, differs from {what} and was written by no earlier export; choose another --output")


def write_directory(crate: Crate, directory: Path) -> Path:
    """The crate as a folder: each file not already there copied in and the README written (a file that is there
    and differs is replaced only when an earlier export wrote it), then the metadata."""
    directory.mkdir(parents=True, exist_ok=True)
    previous = _previous_parts(directory)
    for crate_path, source in sorted(crate.files.items()):
        dest = directory / crate_path
        if dest.exists():
            if _same(source, dest):
                continue
            _check_replaceable(dest, crate_path, previous, str(source))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    for crate_path, text in sorted(crate.texts.items()):
        dest = directory / crate_path
        if dest.exists() and dest.read_text(encoding="utf-8", errors="replace") != text:
            _check_replaceable(dest, crate_path, previous, "the crate's own")
        with atomic_output(dest, text=True) as fh:
            fh.write(text)
    with atomic_output(directory / METADATA, text=True) as fh:
        fh.write(_metadata_text(crate))
    return directory / METADATA


_STORED = (".gz", ".zip", ".png", ".jpg", ".pdf", ".parquet", ".safetensors", ".pt", ".bin", ".pkl")  # compressed already (or weights)


def write_zip(crate: Crate, path: Path) -> Path:
    """The crate as one zip (the metadata at its root), written atomically."""
    with atomic_output(path) as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA, _metadata_text(crate))
        for crate_path, text in sorted(crate.texts.items()):
            zf.writestr(crate_path, text)
        for crate_path, source in sorted(crate.files.items()):
            zf.write(source, crate_path, compress_type=zipfile.ZIP_STORED if crate_path.lower().endswith(_STORED) else zipfile.ZIP_DEFLATED)
    return path


def export(results_dir: str | os.PathLike, output: str | os.PathLike | None = None, workflow_dir: str | os.PathLike | None = None,
           *, agent: str | None = None, agent_id: str | None = None) -> CrateSummary:
    """Write the crate of ``results_dir``: into it (``output`` None or the folder itself), into a zip (a ``.zip``
    name) or into another folder (not inside the results folder); returns the summary (with ``crate``, what was
    written). ``agent`` and ``agent_id``: who ran the runs (:func:`build_crate`)."""
    results = Path(results_dir).resolve()
    out = Path(output).resolve() if output is not None else results
    if agent_id and not agent:
        raise ValueError("--agent-id names the agent's identifier: give --agent (its name) too")
    if agent_id and not re.match(r"^[a-z][a-z0-9+.-]*:", agent_id):
        raise ValueError(f"--agent-id {agent_id!r}: not an absolute URI (e.g. https://orcid.org/0000-0002-1825-0097)")
    if out.suffix.lower() == ".zip":
        crate = build_crate(results, workflow_dir, skip_files=[out], agent=agent, agent_id=agent_id)
        written = write_zip(crate, out)
    else:
        if out != results and results in out.parents:
            raise ValueError(f"{out}: inside the results folder {results}; write the crate into the results folder itself, a zip or a folder elsewhere")
        if out != results and out.exists() and any(out.iterdir()) and not (out / METADATA).is_file():
            raise FileExistsError(f"{out}: a folder that holds files and no crate; choose an empty or new folder")
        crate = build_crate(results, workflow_dir, agent=agent, agent_id=agent_id)
        written = write_directory(crate, out)
    return {**crate.summary, "crate": str(written)}


def format_summary(summary: CrateSummary) -> str:
    """The report printed at the end of ``medfc rocrate``."""
    lines = [f"medfc rocrate: {summary['crate']}: {summary['runs']} run(s), {summary['files']} files "
             f"({summary['results']} results, {summary['configs']} config files), {summary['software']} software entries"]
    if summary["skipped"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in summary["skipped_by_reason"].items())
        lines.append(f"skipped {len(summary['skipped'])} ({reasons}): {'; '.join(summary['skipped'][:10])}")
    for key, n in sorted({**summary["counts"], **{f"left out ({k})": v for k, v in summary["left_out"].items()}}.items()):
        lines.append(f"{key}: {n}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """The ``rocrate`` subcommand (arguments parsed by :func:`medfc.cli.main`)."""
    summary = export(args.results_dir, args.output, args.workflow_dir, agent=getattr(args, "agent", None),
                     agent_id=getattr(args, "agent_id", None))
    print(format_summary(summary), file=sys.stderr)
    return 0
