"""A finished run's record as a Workflow Run RO-Crate (``medfc rocrate``).

    medfc rocrate --results-dir DIR [--output CRATE.zip | --output CRATE_DIR] [--workflow-dir DIR]

The crate follows RO-Crate 1.1 and the Workflow Run Crate profile 0.5 (https://w3id.org/ro/wfrun/workflow/0.5,
with the Process Run Crate and Workflow RO-Crate 1.0 it builds on). Its ``ro-crate-metadata.json`` is JSON-LD
written here with the standard library; it describes:

* the root ``Dataset``: every file of the crate (``hasPart``), the profiles it conforms to, the licence of the
  workflow, ``mainEntity`` the workflow and ``mentions`` its runs;
* the workflow, ``workflow/Snakefile`` (``File``, ``SoftwareSourceCode``, ``ComputationalWorkflow``; language
  Snakemake, of the version that made the results), with its title, version, authors, licence and the works
  to cite (``citation``) from ``CITATION.cff``, and the software it ran with (``softwareRequirements``: one
  ``SoftwareApplication`` per package of ``provenance/software.yml``, Python first);
* one ``CreateAction`` per line of ``provenance/runs.jsonl`` (one per Snakemake run: :mod:`medfc.common.provenance`):
  ``startTime``, ``instrument`` the workflow, ``object`` the config files it read (the workflow's default config
  and each ``--configfile``), ``result`` the files it wrote, ``location`` its host, its command in ``description``.
  A file is the result of the latest run that started before the file was last written; a file older than every
  recorded run is in the crate but no run's result (counted). Logs, benchmarks and the provenance records are
  in the crate but not results.

The crate's files are the results folder's files at their paths in it (``tables/healthfc_table3.csv``), the
workflow's folder under ``workflow/``, the config files under ``config/`` and the checkout's ``LICENSE`` and
``CITATION.cff``. By default the crate is the results folder itself: the metadata and the workflow's files are
written into it, the results stay where they are. ``--output X.zip`` writes all of it into one zip instead
(the metadata at its root), and ``--output DIR`` into another folder (the results copied). Model checkpoints
under the results folder (``experiments.checkpoint_dir``: not a workflow output) and hidden files are left
out. Whatever is named but missing (a config file, ``software.yml``, ``CITATION.cff``), a damaged line of
``runs.jsonl`` and the files left out are skipped and counted in the summary, never a failure.
"""

from __future__ import annotations

import datetime as dt
import json
import mimetypes
import os
import shutil
import sys
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from medfc.common.io import atomic_output, numbered_json_lines
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport

CONTEXT = "https://w3id.org/ro/crate/1.1/context"
METADATA = "ro-crate-metadata.json"
RO_CRATE = "https://w3id.org/ro/crate/1.1"
PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5"
WORKFLOW_RUN_CRATE = "https://w3id.org/ro/wfrun/workflow/0.5"
WORKFLOW_RO_CRATE = "https://w3id.org/workflowhub/workflow-ro-crate/1.0"
PROFILES = ((PROCESS_RUN_CRATE, "Process Run Crate", "0.5"), (WORKFLOW_RUN_CRATE, "Workflow Run Crate", "0.5"),
            (WORKFLOW_RO_CRATE, "Workflow RO-Crate", "1.0"))
SNAKEMAKE = "https://w3id.org/workflowhub/workflow-ro-crate#snakemake"
SNAKEMAKE_URL = "https://snakemake.readthedocs.io/"
SPDX = "https://spdx.org/licenses/"

MAIN_WORKFLOW = "workflow/Snakefile"
DEFAULT_CONFIG = "config/config.yaml"  # the workflow's own config, read by every run (workflow/Snakefile's configfile:)
# top-level names of the crate that are not the results folder's (written into it when the crate is that folder)
CRATE_NAMES = ("workflow", "config", "LICENSE", "CITATION.cff", METADATA)
NOT_RESULTS = ("logs", "benchmarks", "provenance")  # in the crate, but no run's result
CONFIG_OPTIONS = ("--configfile", "--configfiles")
# CITATION.cff's reference types → schema.org
CFF_TYPES = {"article": "ScholarlyArticle", "conference-paper": "ScholarlyArticle", "data": "Dataset", "software": "SoftwareSourceCode",
             "report": "Report", "thesis": "Thesis", "book": "Book"}
DESCRIPTIONS = {
    "provenance/runs.jsonl": "One line per Snakemake run: its id, start, host, folder, command, software and resolved config.",
    "provenance/software.yml": "The software of the latest results: Python, the platform and the package versions.",
    "LICENSE": "The licence of the workflow and the medfc package (the datasets keep their own: CITATION.cff).",
    "CITATION.cff": "How to cite medfc and the works whose data and methods it rebuilds.",
}


if TYPE_CHECKING:
    import argparse

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
    """A crate ready to write: its metadata and each file's path in the crate with the file it comes from."""

    metadata: JSONObject
    files: dict[str, Path]
    report: SkipReport
    summary: CrateSummary = field(default_factory=CrateSummary)


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


def _iso(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.timezone.utc).isoformat(timespec="seconds")


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
    """Each run's ``experiments.checkpoint_dir`` (resolved against its folder): kept models, not workflow outputs."""
    out = []
    for r in runs:
        ckpt = ((r.get("config") or {}).get("experiments") or {}).get("checkpoint_dir")
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


# ------------------------------------------------------------------------------------------------ entities


def _ref(ids: Iterable[str]) -> list[dict[str, str]]:
    return [{"@id": i} for i in ids]


def file_entity(crate_path: str, source: Path, description: str | None = None) -> Entity:
    """A ``File`` data entity: its size, media type and last change."""
    st = source.stat()
    entity: Entity = {"@id": crate_path, "@type": "File", "name": Path(crate_path).name, "contentSize": str(st.st_size),
                              "dateModified": _iso(st.st_mtime)}
    kind, _ = mimetypes.guess_type(crate_path)
    suffix = Path(crate_path).suffix.lower()
    kind = kind or {".jsonl": "application/jsonl", ".yaml": "application/yaml", ".yml": "application/yaml", ".md": "text/markdown",
                    ".smk": "text/plain", ".cff": "application/yaml", ".parquet": "application/vnd.apache.parquet",
                    ".tsv": "text/tab-separated-values", ".tex": "application/x-tex"}.get(suffix)
    if Path(crate_path).name in ("LICENSE", "Snakefile"):
        kind = "text/plain"
    if kind:
        entity["encodingFormat"] = kind
    if description:
        entity["description"] = description
    return entity


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "x"


def _people(authors: object, entities: dict[str, Entity]) -> list[dict[str, str]]:
    """CITATION.cff's authors as ``Person`` (family and given names) or ``Organization`` (a name) entities."""
    refs = []
    for a in authors or []:
        if not isinstance(a, dict):
            continue
        if a.get("family-names"):
            name = " ".join(str(a[k]) for k in ("given-names", "family-names") if a.get(k))
            entity = {"@type": "Person", "name": name, "familyName": str(a["family-names"])}
            if a.get("given-names"):
                entity["givenName"] = str(a["given-names"])
            if a.get("affiliation"):
                entity["affiliation"] = str(a["affiliation"])
        elif a.get("name"):
            name, entity = str(a["name"]), {"@type": "Organization", "name": str(a["name"])}
        else:
            continue
        key = f"#{entity['@type'].lower()}-{_slug(name)}"
        entities.setdefault(key, {"@id": key, **entity})
        refs.append({"@id": key})
    return refs


def citation_entities(cff: Mapping[str, object], entities: dict[str, Entity]) -> list[dict[str, str]]:
    """The works ``CITATION.cff`` asks users to cite beside medfc (its ``references``), as contextual entities."""
    refs = []
    for n, ref in enumerate(cff.get("references") or [], 1):
        if not isinstance(ref, dict) or not ref.get("title"):
            continue
        key = f"#reference-{n}"
        entity: Entity = {"@id": key, "@type": CFF_TYPES.get(str(ref.get("type")), "CreativeWork"), "name": str(ref["title"])}
        authors = _people(ref.get("authors"), entities)
        if authors:
            entity["author"] = authors
        if ref.get("year"):
            entity["datePublished"] = str(ref["year"])
        url = ref.get("url") or ref.get("repository-code")
        if url:
            entity["url"] = str(url)
        if ref.get("license"):
            entity["license"] = str(ref["license"])
        entities[key] = entity
        refs.append({"@id": key})
    return refs


def licence_entity(cff: Mapping[str, object], licence_file: Path | None) -> dict[str, str] | None:
    """The workflow's licence: its SPDX id from CITATION.cff, named by the first line of LICENSE."""
    spdx = cff.get("license")
    if not isinstance(spdx, str) or not spdx:
        return None
    name = spdx
    if licence_file is not None and licence_file.is_file():
        first = licence_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        name = first[0].strip() if first else spdx
    return {"@id": f"{SPDX}{spdx}", "@type": "CreativeWork", "name": name, "identifier": spdx}


def software_entities(software: Mapping[str, object]) -> list[dict[str, str]]:
    """One ``SoftwareApplication`` per installed package of a software record (Python first; absent packages left out)."""
    out = []
    if software.get("python"):
        entity = {"@id": "#software-python", "@type": "SoftwareApplication", "name": "Python", "softwareVersion": str(software["python"])}
        if software.get("implementation") or software.get("platform"):
            entity["description"] = " on ".join(str(software[k]) for k in ("implementation", "platform") if software.get(k))
        out.append(entity)
    for name, version in (software.get("packages") or {}).items():
        if version:
            out.append({"@id": f"#software-{_slug(str(name))}", "@type": "SoftwareApplication", "name": str(name),
                        "softwareVersion": str(version)})
    return out


# ------------------------------------------------------------------------------------------------ building


def _results_of_runs(runs: Sequence[Mapping[str, JSONValue]], results: dict[str, Path], report: SkipReport) -> dict[str, list[str]]:
    """Each run's results: the files whose last change is at or after its start and before the next run's."""
    starts = [_time(r["started"]) for r in runs]
    by_run: dict[str, list[str]] = {r["run"]: [] for r in runs}
    for crate_path, source in results.items():
        changed = dt.datetime.fromtimestamp(source.stat().st_mtime, dt.timezone.utc)
        owner = None
        for r, start in zip(runs, starts):
            if start is not None and start <= changed:
                owner = r
        if owner is None:
            report.count("results_older_than_every_run")
        else:
            by_run[owner["run"]].append(crate_path)
    return by_run


def build_crate(results_dir: str | os.PathLike, workflow_dir: str | os.PathLike | None = None, *,
                skip_files: Iterable[str | os.PathLike] = ()) -> Crate:
    """The crate of the finished run in ``results_dir`` with the workflow of ``workflow_dir`` (default: the one
    beside the imported medfc); ``skip_files`` are left out of the results (e.g. a zip being written there)."""
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
    entities: dict[str, Entity] = {}

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

    # the workflow, the config files the runs read, the licence and citation
    workflow_files = {f"workflow/{p.relative_to(wf).as_posix()}": p for p in _walk(wf)}
    files.update(workflow_files)
    configs: dict[str, Path] = {}
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
                sources[key], configs[name] = name, path
            if sources[key] not in ids:
                ids.append(sources[key])
        run_configs[r["run"]] = ids
    files.update(configs)
    for name in ("LICENSE", "CITATION.cff"):
        if (checkout / name).is_file():
            files[name] = checkout / name
        elif name == "LICENSE":  # CITATION.cff's absence is counted where it is read
            report.skip(str(checkout / name), "missing_licence")

    # contextual entities
    licence = licence_entity(cff, checkout / "LICENSE")
    if licence:
        entities[licence["@id"]] = licence
    apps = software_entities(software)
    for app in apps:
        entities[app["@id"]] = app
    snakemake_version = ((software.get("packages") or {}).get("snakemake"))
    language: Entity = {"@id": SNAKEMAKE, "@type": "ComputerLanguage", "name": "Snakemake", "identifier": {"@id": SNAKEMAKE_URL},
                                "url": {"@id": SNAKEMAKE_URL}}
    if snakemake_version:
        language["version"] = str(snakemake_version)
    entities[SNAKEMAKE] = language

    workflow: Entity = {**file_entity(MAIN_WORKFLOW, wf / "Snakefile"), "@type": ["File", "SoftwareSourceCode", "ComputationalWorkflow"],
                                "name": str(cff.get("title") or "medfc"), "programmingLanguage": {"@id": SNAKEMAKE}}
    if cff.get("version"):
        workflow["version"] = str(cff["version"])
    if cff.get("abstract"):
        workflow["description"] = " ".join(str(cff["abstract"]).split())
    authors = _people(cff.get("authors"), entities)
    if authors:
        workflow["author"] = authors
    if licence:
        workflow["license"] = {"@id": licence["@id"]}
    cited = citation_entities(cff, entities)
    if cited:
        workflow["citation"] = cited
    if apps:
        workflow["softwareRequirements"] = _ref(a["@id"] for a in apps)

    actions = []
    run_results = _results_of_runs(runs, results, report)
    for r in runs:
        action: Entity = {"@id": f"#run-{r['run']}", "@type": "CreateAction", "name": f"Snakemake run {r['run']}",
                                  "startTime": str(r["started"]), "instrument": {"@id": MAIN_WORKFLOW},
                                  "object": _ref(run_configs.get(r["run"], [])), "result": _ref(run_results.get(r["run"], []))}
        command = " ".join(str(a) for a in r.get("command") or [])
        where = f" in {r['workdir']}" if r.get("workdir") else ""
        action["description"] = f"{command}{where}".strip() or f"run {r['run']}"
        if r.get("host"):
            host = f"#host-{_slug(str(r['host']))}"
            entities.setdefault(host, {"@id": host, "@type": "Place", "name": str(r["host"])})
            action["location"] = {"@id": host}
        actions.append(action)

    data_entities = []
    for crate_path, source in sorted(files.items()):
        if crate_path == MAIN_WORKFLOW:
            data_entities.append(workflow)
            continue
        description = DESCRIPTIONS.get(crate_path)
        if crate_path in configs:
            description = f"A config file the runs read ({configs[crate_path]})"
        data_entities.append(file_entity(crate_path, source, description))

    root: Entity = {
        "@id": "./", "@type": "Dataset", "name": f"{workflow['name']}: the run record of {results_dir.name}/",
        "description": (f"The results, the workflow and the provenance of the medfc runs in {results_dir}: "
                        f"{len(runs)} Snakemake run(s), {len(results)} result file(s)."),
        "datePublished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "conformsTo": _ref(p[0] for p in PROFILES), "mainEntity": {"@id": MAIN_WORKFLOW},
        "hasPart": _ref(sorted(files)), "mentions": _ref(a["@id"] for a in actions)}
    if licence:
        root["license"] = {"@id": licence["@id"]}
    descriptor = {"@id": METADATA, "@type": "CreativeWork", "conformsTo": [{"@id": RO_CRATE}, {"@id": WORKFLOW_RO_CRATE}],
                  "about": {"@id": "./"}}
    profiles = [{"@id": pid, "@type": "CreativeWork", "name": name, "version": version} for pid, name, version in PROFILES]
    graph = [descriptor, root, *profiles, *data_entities, *actions, *sorted(entities.values(), key=lambda e: e["@id"])]
    metadata = {"@context": CONTEXT, "@graph": graph}
    summary: CrateSummary = {"results_dir": str(results_dir), "workflow_dir": str(wf), "runs": len(runs), "files": len(files), "results": len(results),
               "configs": len(configs), "software": len(apps), "skipped_by_reason": report.reasons(),
               "skipped": [f"{s['id']} ({s['reason']})" for s in report.skipped], "counts": dict(report.counts),
               "left_out": dict(report.excluded)}
    return Crate(metadata, files, report, summary)


# ------------------------------------------------------------------------------------------------ writing


def _metadata_text(crate: Crate) -> str:
    return json.dumps(crate.metadata, ensure_ascii=False, indent=2) + "\n"


def _previous_parts(directory: Path) -> set[str]:
    """The files an earlier export's metadata in ``directory`` lists (those it may replace)."""
    try:
        graph = json.loads((directory / METADATA).read_text(encoding="utf-8")).get("@graph", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {e.get("@id") for e in graph if isinstance(e, dict) and isinstance(e.get("@id"), str)}


def _same(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        return False
    return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()


def write_directory(crate: Crate, directory: Path) -> Path:
    """The crate as a folder: each file not already there copied in (a file that is there and differs is replaced
    only when an earlier export wrote it), then the metadata."""
    directory.mkdir(parents=True, exist_ok=True)
    previous = _previous_parts(directory)
    for crate_path, source in sorted(crate.files.items()):
        dest = directory / crate_path
        if dest.exists():
            if _same(source, dest):
                continue
            if crate_path not in previous:
                raise FileExistsError(f"{dest}: exists, differs from {source} and was written by no earlier export; "
                                      "choose another --output")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    with atomic_output(directory / METADATA, text=True) as fh:
        fh.write(_metadata_text(crate))
    return directory / METADATA


_STORED = (".gz", ".zip", ".png", ".jpg", ".pdf", ".parquet", ".safetensors", ".pt", ".bin", ".pkl")  # compressed already (or weights)


def write_zip(crate: Crate, path: Path) -> Path:
    """The crate as one zip (the metadata at its root), written atomically."""
    with atomic_output(path) as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA, _metadata_text(crate))
        for crate_path, source in sorted(crate.files.items()):
            zf.write(source, crate_path, compress_type=zipfile.ZIP_STORED if crate_path.lower().endswith(_STORED) else zipfile.ZIP_DEFLATED)
    return path


def export(results_dir: str | os.PathLike, output: str | os.PathLike | None = None, workflow_dir: str | os.PathLike | None = None) -> CrateSummary:
    """Write the crate of ``results_dir``: into it (``output`` None or the folder itself), into a zip (a ``.zip``
    name) or into another folder (not inside the results folder); returns the summary (with ``crate``, what was
    written)."""
    results = Path(results_dir).resolve()
    out = Path(output).resolve() if output is not None else results
    if out.suffix.lower() == ".zip":
        crate = build_crate(results, workflow_dir, skip_files=[out])
        written = write_zip(crate, out)
    else:
        if out != results and results in out.parents:
            raise ValueError(f"{out}: inside the results folder {results}; write the crate into the results folder itself, a zip or a folder elsewhere")
        if out != results and out.exists() and any(out.iterdir()) and not (out / METADATA).is_file():
            raise FileExistsError(f"{out}: a folder that holds files and no crate; choose an empty or new folder")
        crate = build_crate(results, workflow_dir)
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
    summary = export(args.results_dir, args.output, args.workflow_dir)
    print(format_summary(summary), file=sys.stderr)
    return 0
