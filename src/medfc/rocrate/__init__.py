"""A finished run's record as a Workflow Run RO-Crate (RO-Crate 1.1, profile 0.5), built with ro-crate-py
(``medfc rocrate``; docs/deployment.md). Paths name no machine folder; whatever is missing or damaged is skipped and
counted, never a failure."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict
from urllib.parse import unquote

from medfc.common.io import atomic_output
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.rocrate.records import (COMPLETED, FAILED, RunEnd, checkpoint_dirs, citation_entities, config_paths, context_entity,
                                   file_properties, iso_time, licence_properties, one_or_list, parse_time, people, read_runs,
                                   read_yaml, relative_to_run, results_of_runs, run_end, slug, software_properties)

if TYPE_CHECKING:
    import argparse

    from rocrate.model.entity import Entity as CrateEntity

CRATE_VERSION = "1.1"  # the RO-Crate version the Workflow Run Crate 0.5 profile builds on
METADATA = "ro-crate-metadata.json"
README = "README.md"
PROFILES = (("https://w3id.org/ro/wfrun/process/0.5", "Process Run Crate", "0.5"),
            ("https://w3id.org/ro/wfrun/workflow/0.5", "Workflow Run Crate", "0.5"),
            ("https://w3id.org/workflowhub/workflow-ro-crate/1.0", "Workflow RO-Crate", "1.0"))
BIOSCHEMAS_WORKFLOW = "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"

MAIN_WORKFLOW = "workflow/Snakefile"
INDEX = "index.md"  # the run's index (rule index): the last job of every full run
# top-level names of the crate that are not the results folder's (written into it when the crate is that folder)
CRATE_NAMES = ("workflow", "config", "LICENSE", "CITATION.cff", README, METADATA)
NOT_RESULTS = ("logs", "timings", "provenance", "index.md", "index.html")  # in the crate, but no run's result
DESCRIPTIONS = {
    "provenance/runs.jsonl": "One line per Snakemake run: its id, start, host, folder, command, software and resolved config.",
    "provenance/software.yml": "The software of the latest results: Python, the platform and the package versions.",
    "LICENSE": "The licence of the workflow and the medfc package (the datasets keep their own: CITATION.cff).",
    "CITATION.cff": "How to cite medfc and the works whose data and methods it rebuilds.",
    README: "What this crate holds, the runs it records and the licences of what it holds.",
}


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
    """A crate ready to write: its metadata, each crate path's source file, the README (written here) and what the
    export did."""

    metadata: JSONObject
    files: dict[str, Path]
    readme: str
    summary: CrateSummary


# ------------------------------------------------------------------------------------------------ reading


def _walk(root: Path, skip_top: Iterable[str] = ()) -> list[Path]:
    """The files below ``root`` (sorted; hidden files and folders and ``skip_top`` at the top left out)."""
    skip = set(skip_top)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        top = Path(dirpath) == root
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (top and d in skip) and d != "__pycache__")
        out += [Path(dirpath) / name for name in sorted(filenames)
                if not name.startswith(".") and not (top and name in skip)]
    return out


def default_workflow_dir() -> Path | None:
    """The ``workflow/`` folder of the checkout medfc is imported from (``src/medfc`` → ``workflow/``), if any."""
    import medfc

    candidate = Path(medfc.__file__).resolve().parents[2] / "workflow"
    return candidate if (candidate / "Snakefile").is_file() else None


# ------------------------------------------------------------------------------------------------ building


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
        ended = iso_time(end.ended) if end and end.ended else "not known"
        status = {COMPLETED: "completed", FAILED: "failed"}.get(end.status if end else None, "not known")
        command = " ".join(str(a) for a in r.get("command") or []).replace("|", "\\|")
        lines.append(f"| {r['run']} | {iso_time(parse_time(r['started']))} | {ended} | {status} | `{command}` |")
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
    """The crate of ``results_dir`` with ``workflow_dir`` (default: beside the imported medfc), less ``skip_files``
    (e.g. a zip being written there). ``agent`` (a name; ``agent_id``, e.g. an ORCID) ran the runs and authors the crate."""
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
    files.update({name: checkout / name for name in ("LICENSE", "CITATION.cff") if (checkout / name).is_file()})
    if "LICENSE" not in files:  # CITATION.cff's absence is counted where it is read
        report.skip(str(checkout / "LICENSE"), "missing_licence")

    # each run's files, end and status
    written = results_of_runs(runs, run_folder_files, report=None)
    run_results = results_of_runs(runs, results, report)
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
    readme = readme_text(title, runs, ends, len(results), cff, {p.split("/", 1)[0] for p in files})

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
        person = crate.add(ContextEntity(crate, agent_id or f"#person-{slug(agent)}", properties=props))
        root["author"] = {"@id": person.id}

    apps = [crate.add(ContextEntity(crate, key, properties=props)) for key, props in software_properties(software)]
    snakemake_version = (software.get("packages") or {}).get("snakemake")

    # the workflow (Bioschemas ComputationalWorkflow) and its rule files
    workflow = crate.add_workflow(wf / "Snakefile", MAIN_WORKFLOW, main=True, lang="snakemake",
                                  lang_version=str(snakemake_version) if snakemake_version else None,
                                  properties=file_properties(wf / "Snakefile", MAIN_WORKFLOW))
    workflow["name"] = title
    workflow["conformsTo"] = {"@id": BIOSCHEMAS_WORKFLOW}
    for key, prop, value in (("version", "version", str), ("date-released", "dateCreated", str),
                             ("abstract", "description", lambda v: " ".join(str(v).split())),
                             ("keywords", "keywords", lambda v: ", ".join(str(k) for k in v))):
        if cff.get(key):
            workflow[prop] = value(cff[key])
    authors = people(crate, cff.get("authors"))
    refs = {"creator": authors, "author": authors, "license": [{"@id": licence[0]}] if licence else [],
            "citation": citation_entities(crate, cff), "softwareRequirements": apps}
    for prop, values in refs.items():
        if values:
            workflow[prop] = one_or_list(values)
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
            description = f"A config file the runs read ({relative_to_run(source, config_runs[crate_path])})"
        entity = entities[crate_path] = crate.add(File(crate, source, crate_path,
                                                       properties=file_properties(source, crate_path, description)))
        param = config_param if crate_path in configs else result_param if crate_path in results else None
        if param is not None:
            entity["exampleOfWork"] = param
        if crate_path in workflow_files:
            workflow.append_to("hasPart", entity, compact=True)
    # written by this module (Crate.readme); ro-crate-py lists it in the root's parts
    crate.add(File(crate, None, README, properties={
        "name": README, "encodingFormat": "text/markdown", "contentSize": str(len(readme.encode("utf-8"))),
        "description": DESCRIPTIONS[README], "about": {"@id": "./"}}))

    # one CreateAction per run
    actions = []
    for r in runs:
        end = ends[r["run"]]
        command = " ".join(str(a) for a in r.get("command") or [])
        props = {"name": f"Snakemake run {r['run']}", "startTime": str(r["started"]), "description": command or f"run {r['run']}"}
        if end.ended is not None:
            props["endTime"] = iso_time(end.ended)
        if end.status is not None:
            props["actionStatus"] = end.status  # a string, as the Process Run Crate profile has it
        action = crate.add_action(workflow, identifier=f"#run-{r['run']}", properties=props)
        for prop, paths in (("object", run_configs), ("result", run_results)):
            if paths.get(r["run"]):
                action[prop] = one_or_list([entities[p] for p in paths[r["run"]]])
        if person is not None:
            action["agent"] = person
        if r.get("host"):
            host = str(r["host"])
            action["location"] = context_entity(crate, f"#host-{slug(host)}", {"@type": "Place", "name": host})
        actions.append(action)
    if actions:
        root["mentions"] = one_or_list(actions)

    metadata = crate.metadata.generate()
    summary: CrateSummary = {"results_dir": str(results_dir), "workflow_dir": str(wf), "runs": len(runs), "files": len(files) + 1,
                             "results": len(results), "configs": len(configs), "software": len(apps),
                             "skipped_by_reason": report.reasons(), "skipped": [f"{s['id']} ({s['reason']})" for s in report.skipped],
                             "counts": dict(report.counts), "left_out": dict(report.excluded)}
    return Crate(metadata, files, readme, summary)


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
    """The crate as a folder: files not already there copied in, the README and then the metadata written;
    a differing file already there is replaced only when an earlier export wrote it."""
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
    dest = directory / README
    if dest.exists() and dest.read_text(encoding="utf-8", errors="replace") != crate.readme:
        _check_replaceable(dest, README, previous, "the crate's own")
    with atomic_output(dest, text=True) as fh:
        fh.write(crate.readme)
    with atomic_output(directory / METADATA, text=True) as fh:
        fh.write(_metadata_text(crate))
    return directory / METADATA


_STORED = (".gz", ".zip", ".png", ".jpg", ".pdf", ".parquet", ".safetensors", ".pt", ".bin", ".pkl")  # compressed already (or weights)


def write_zip(crate: Crate, path: Path) -> Path:
    """The crate as one zip (the metadata at its root), written atomically."""
    with atomic_output(path) as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA, _metadata_text(crate))
        zf.writestr(README, crate.readme)
        for crate_path, source in sorted(crate.files.items()):
            zf.write(source, crate_path, compress_type=zipfile.ZIP_STORED if crate_path.lower().endswith(_STORED) else zipfile.ZIP_DEFLATED)
    return path


def export(results_dir: str | os.PathLike, output: str | os.PathLike | None = None, workflow_dir: str | os.PathLike | None = None,
           *, agent: str | None = None, agent_id: str | None = None) -> CrateSummary:
    """Write the crate of ``results_dir`` into it (``output`` None or itself), into a zip (a ``.zip`` name) or into
    another folder outside it; returns the summary with ``crate``, what was written."""
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
    counts = {**summary["counts"], **{f"left out ({k})": v for k, v in summary["left_out"].items()}}
    lines += [f"{key}: {n}" for key, n in sorted(counts.items())]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """The ``rocrate`` subcommand (arguments parsed by :func:`medfc.cli.main`)."""
    summary = export(args.results_dir, args.output, args.workflow_dir, agent=args.agent, agent_id=args.agent_id)
    print(format_summary(summary), file=sys.stderr)
    return 0
