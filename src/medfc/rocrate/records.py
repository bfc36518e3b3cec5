"""What a results folder records of its runs, as :mod:`medfc.rocrate` reads it (``provenance/runs.jsonl``, the
config files each run read, Snakemake's log of each run, how each run ended and which files it wrote), and the
properties of the crate's entities: files, the people and works ``CITATION.cff`` names, the licence, the software."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import mimetypes
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common.io import numbered_json_lines
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.common.run_index import DEFAULT_CONFIG, configfile_args

if TYPE_CHECKING:
    from rocrate.model.entity import Entity as CrateEntity
    from rocrate.rocrate import ROCrate

COMPLETED = "http://schema.org/CompletedActionStatus"
FAILED = "http://schema.org/FailedActionStatus"


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
    found: list[tuple[dt.datetime, Path]] = []
    for path in logs.iterdir():
        m = _LOG_NAME.match(path.name)
        if not m:
            continue
        began = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H%M%S.%f").astimezone()  # the machine's local time
        # a run id is made to the second: a log begun in that second counts as before it
        if began - dt.timedelta(seconds=1) <= start <= began + _LOG_WINDOW and modified(path) >= start - dt.timedelta(seconds=1):
            found.append((began, path))
    return max(found, key=lambda bp: bp[0])[1] if found else None


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


# ------------------------------------------------------------------------------------------------ the entities

SPDX = "https://spdx.org/licenses/"
PYTHON_URL = "https://www.python.org/"
PYPI = "https://pypi.org/project/"
# CITATION.cff's reference types → schema.org
CFF_TYPES = {"article": "ScholarlyArticle", "conference-paper": "ScholarlyArticle", "data": "Dataset", "software": "SoftwareSourceCode",
             "report": "Report", "thesis": "Thesis", "book": "Book"}
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
    props: JSONObject = {"name": Path(crate_path).name, "contentSize": str(st.st_size), "dateModified": iso_time(st.st_mtime),
                         "encodingFormat": media_type(crate_path)}
    if description:
        props["description"] = description
    return props


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "x"


def one_or_list(refs: list) -> object:
    """A single value for one reference (RO-Crate 1.1's compact form), a list for several."""
    return refs[0] if len(refs) == 1 else refs


def people(crate: ROCrate, authors: object) -> list[CrateEntity]:
    """CITATION.cff's authors as ``Person`` (family and given names, affiliation as an ``Organization``) or
    ``Organization`` entities, one per name."""
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
                org = str(a["affiliation"])
                props["affiliation"] = {"@id": context_entity(crate, f"#organization-{slug(org)}",
                                                              {"@type": "Organization", "name": org}).id}
        elif a.get("name"):
            name, props = str(a["name"]), {"@type": "Organization", "name": str(a["name"])}
        else:
            continue
        key = f"#{str(props['@type']).lower()}-{slug(name)}"
        entity = context_entity(crate, key, props)
        if "affiliation" in props and "affiliation" not in entity:  # one entity per name: an affiliation given anywhere
            entity["affiliation"] = props["affiliation"]
        out.append(entity)
    return out


def context_entity(crate: ROCrate, key: str, props: JSONObject) -> CrateEntity:
    """The crate's entity ``key``, added with ``props`` when it has none yet."""
    from rocrate.model.contextentity import ContextEntity

    return crate.get(key) or crate.add(ContextEntity(crate, key, properties=props))


def citation_entities(crate: ROCrate, cff: Mapping[str, object]) -> list[CrateEntity]:
    """The works ``CITATION.cff`` asks users to cite beside medfc (its ``references``), as contextual entities."""
    from rocrate.model.contextentity import ContextEntity

    out = []
    for n, ref in enumerate(cff.get("references") or [], 1):
        if not isinstance(ref, dict) or not ref.get("title"):
            continue
        props: JSONObject = {"@type": CFF_TYPES.get(str(ref.get("type")), "CreativeWork"), "name": str(ref["title"])}
        authors = people(crate, ref.get("authors"))
        if authors:
            props["author"] = one_or_list([{"@id": a.id} for a in authors])
        for prop, value in (("datePublished", ref.get("year")), ("url", ref.get("url") or ref.get("repository-code")),
                            ("license", ref.get("license"))):
            if value:
                props[prop] = str(value)
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
    """One ``SoftwareApplication`` per installed package of a software record, Python first: Python by
    python.org, a package by its PyPI page, medfc (not on PyPI) by a local id."""
    out = []
    if software.get("python"):
        props: JSONObject = {"@type": "SoftwareApplication", "name": "Python", "softwareVersion": str(software["python"]), "url": PYTHON_URL}
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
            page = f"{PYPI}{slug(str(name))}/"
            out.append((page, {**props, "url": page}))
    return out
