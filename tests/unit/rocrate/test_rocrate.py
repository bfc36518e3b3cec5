"""``medfc rocrate`` (medfc.rocrate): a finished run's results folder, written in the test (no workflow
run), described as a Workflow Run RO-Crate through ro-crate-py: the JSON-LD's exact entities, one CreateAction per
run record with its end and status (from Snakemake's log, else from the results folder), the README, damaged records
and missing files skipped and counted, the crate in the folder itself, in a zip or in another folder, and read back
by ro-crate-py. The community validator's verdict on a whole demo crate: tests/workflow/test_outputs_for_tools.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import zipfile
from pathlib import Path

import pytest
import yaml

from medfc import rocrate
from medfc.cli import main
from medfc.common.provenance import append_run_record, run_record
from medfc.rocrate.records import log_outcome_of

T0 = dt.datetime(2026, 12, 3, 10, 0, tzinfo=dt.timezone.utc)
T1 = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.timezone.utc)
SOFTWARE = {"python": "3.11.7", "implementation": "CPython", "platform": "Linux-x86_64",
            "packages": {"medfc": "0.1.0", "snakemake": "9.14.0", "torch": None, "scikit-learn": "1.9.1"}}
CITATION = {
    "cff-version": "1.2.0", "title": "medfc: test workflow", "version": "0.1.0", "date-released": "2026-12-03", "license": "MIT",
    "abstract": "A tiny\n workflow.", "authors": [{"name": "The medfc authors"}],
    "references": [
        {"type": "conference-paper", "title": "HealthFC", "year": 2024,
         "authors": [{"family-names": "Vladika", "given-names": "Juraj", "affiliation": "Technical University of Munich"},
                     {"family-names": "Matthes", "given-names": "Florian"}]},
        {"type": "data", "title": "HealthFC release", "repository-code": "https://github.com/jvladika/HealthFC", "license": "CC-BY-NC-ND-4.0",
         "authors": [{"family-names": "Vladika", "given-names": "Juraj"}]},
    ],
}
RESULTS = {  # path in the results folder → (text, when it was last written)
    "tables/healthfc_table3.csv": ("system,f1\npipeline,0.5\n", T0 + dt.timedelta(minutes=5)),  # run 1
    "figures/fig3.png": ("png", T1 + dt.timedelta(minutes=1)),  # run 2
    "healthfc/dataset/healthfc.jsonl": ('{"id": "c1"}\n', T1 + dt.timedelta(minutes=2)),  # run 2
    "healthfc/old/report.json": ("{}\n", T0 - dt.timedelta(days=1)),  # before every recorded run: no run's result
    "logs/tables/table.log": ("ok\n", T1 + dt.timedelta(minutes=3)),  # in the crate, not a result
    "timings/tables/table.tsv": ("s\n1\n", T1 + dt.timedelta(minutes=3)),
    "index.md": ("# Results\n", T1 + dt.timedelta(minutes=4)),  # the last job of a full run: run 2 completed
    "checkpoints/healthfc/oracle/model.pkl": ("weights", T1 + dt.timedelta(minutes=4)),  # experiments.checkpoint_dir: left out
    "tables/.healthfc_table3.csv.1a2b.tmp": ("partial", T1),  # a temporary file: left out
}


def _write(path: Path, text: str, when: dt.datetime | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if when is not None:
        os.utime(path, (when.timestamp(), when.timestamp()))
    return path


@pytest.fixture()
def finished_run(tmp_path):
    """A checkout (workflow/, config/, LICENSE, CITATION.cff) and a run folder whose results/ two runs made."""
    checkout, run = tmp_path / "checkout", tmp_path / "run"
    _write(checkout / "workflow/Snakefile", 'configfile: "config/config.yaml"\n')
    _write(checkout / "workflow/rules/tables.smk", "rule table:\n")
    _write(checkout / "workflow/scripts/__pycache__/step.cpython-311.pyc", "bytecode")  # left out
    _write(checkout / "config/config.yaml", "results_dir: results\n")
    _write(checkout / "LICENSE", "MIT License\n\nCopyright (c) 2026 The medfc authors\n")
    _write(checkout / "CITATION.cff", yaml.safe_dump(CITATION, sort_keys=False))
    _write(run / "extra.yaml", "seed: 2\n")
    results = run / "results"
    for path, (text, when) in RESULTS.items():
        _write(results / path, text, when)
    _write(results / "provenance/software.yml", yaml.safe_dump(SOFTWARE, sort_keys=False), T0 + dt.timedelta(minutes=1))
    config = {"results_dir": "results", "experiments": {"checkpoint_dir": "results/checkpoints"}}
    commands = [["snakemake", "--cores", "2"], ["snakemake", "--cores", "2", "--configfile", "extra.yaml", "missing.yaml", "--", "tables"]]
    for n, (start, command) in enumerate(zip((T0, T1), commands), 1):
        record = run_record(f"run{n}", command, run, config, SOFTWARE)
        append_run_record(results / "provenance", {**record, "started": start.isoformat(timespec="seconds"), "host": "node-7"})
    os.utime(results / "provenance/runs.jsonl", (T1.timestamp(), T1.timestamp()))
    # Snakemake's log of run 1 (named by its start in local time, two seconds before the run's id), every step done
    began = (T0 - dt.timedelta(seconds=2)).astimezone().replace(tzinfo=None).isoformat(timespec="microseconds").replace(":", "")
    _write(run / ".snakemake/log" / f"{began}.snakemake.log", "Building DAG of jobs...\n3 of 3 steps (100%) done\nComplete log(s): x\n",
           T0 + dt.timedelta(minutes=6))
    return checkout, results


def graph_of(metadata: dict) -> dict[str, dict]:
    return {e["@id"]: e for e in metadata["@graph"]}


def ids(refs) -> list[str]:
    return [r["@id"] for r in refs]


CRATE_FILES = {
    "tables/healthfc_table3.csv", "figures/fig3.png", "healthfc/dataset/healthfc.jsonl", "healthfc/old/report.json",
    "logs/tables/table.log", "timings/tables/table.tsv", "index.md", "provenance/runs.jsonl", "provenance/software.yml",
    "workflow/Snakefile", "workflow/rules/tables.smk", "config/config.yaml", "config/extra.yaml", "LICENSE", "CITATION.cff",
}
PARTS = CRATE_FILES | {"README.md"}  # the files copied and the one the export writes
MEDIA = {"tables/healthfc_table3.csv": "text/csv", "figures/fig3.png": "image/png", "healthfc/dataset/healthfc.jsonl": "application/jsonl",
         "healthfc/old/report.json": "application/json", "logs/tables/table.log": "text/plain",
         "timings/tables/table.tsv": "text/tab-separated-values", "index.md": "text/markdown", "provenance/runs.jsonl": "application/jsonl",
         "provenance/software.yml": "application/yaml", "workflow/Snakefile": "text/plain", "workflow/rules/tables.smk": "text/plain",
         "config/config.yaml": "application/yaml", "config/extra.yaml": "application/yaml", "LICENSE": "text/plain",
         "CITATION.cff": "application/yaml", "README.md": "text/markdown"}


def test_the_crate_describes_the_workflow_its_runs_their_results_and_software(finished_run):
    checkout, results = finished_run
    crate = rocrate.build_crate(results, checkout / "workflow")
    metadata = crate.metadata
    assert metadata["@context"] == "https://w3id.org/ro/crate/1.1/context"
    g = graph_of(metadata)
    assert len(g) == len(metadata["@graph"])  # every @id once
    assert g["ro-crate-metadata.json"] == {"@id": "ro-crate-metadata.json", "@type": "CreativeWork", "about": {"@id": "./"},
                                           "conformsTo": [{"@id": "https://w3id.org/ro/crate/1.1"},
                                                          {"@id": "https://w3id.org/workflowhub/workflow-ro-crate/1.0"}]}
    root = g["./"]
    assert root["@type"] == "Dataset" and root["mainEntity"] == {"@id": "workflow/Snakefile"}
    assert ids(root["conformsTo"]) == ["https://w3id.org/ro/wfrun/process/0.5", "https://w3id.org/ro/wfrun/workflow/0.5",
                                       "https://w3id.org/workflowhub/workflow-ro-crate/1.0"]
    assert g["https://w3id.org/ro/wfrun/workflow/0.5"] == {"@id": "https://w3id.org/ro/wfrun/workflow/0.5", "@type": "CreativeWork",
                                                           "name": "Workflow Run Crate", "version": "0.5"}
    assert root["license"] == {"@id": "https://spdx.org/licenses/MIT"}
    assert g["https://spdx.org/licenses/MIT"] == {"@id": "https://spdx.org/licenses/MIT", "@type": "CreativeWork", "name": "MIT License",
                                                  "identifier": "MIT"}
    # no path of the machine: the description names the folder's counts, not where it lies
    assert str(results.parent) not in json.dumps(metadata) and "author" not in root
    assert root["description"].startswith("The results, the workflow and the provenance of 2 Snakemake run(s) of medfc: 4 result file(s)")
    # the files that exist, and only those (no checkpoint, temporary file or bytecode), each with its media type
    assert set(ids(root["hasPart"])) == PARTS and set(crate.files) == CRATE_FILES
    assert {*crate.files, "README.md"} == PARTS
    for path in CRATE_FILES:
        assert "File" in g[path]["@type"] and g[path]["contentSize"] == str(crate.files[path].stat().st_size)
    assert {path: g[path]["encodingFormat"] for path in PARTS} == MEDIA
    assert g["tables/healthfc_table3.csv"]["dateModified"] == (T0 + dt.timedelta(minutes=5)).isoformat()
    # the README, about the crate
    readme = g["README.md"]
    assert readme["about"] == {"@id": "./"} and readme["contentSize"] == str(len(crate.readme.encode()))
    text = crate.readme
    assert text.startswith("# medfc: test workflow: a run record\n") and "`index.md` says what each folder holds" in text
    assert "| run1 | 2026-12-03T10:00:00+00:00 | 2026-12-03T10:06:00+00:00 | completed | `snakemake --cores 2` |" in text
    assert "| run2 | 2026-12-03T12:00:00+00:00 | 2026-12-03T12:04:00+00:00 | completed |" in text
    assert "- HealthFC release: CC-BY-NC-ND-4.0" in text and "The workflow and the medfc package: MIT (`LICENSE`)." in text

    # the workflow: Bioschemas' ComputationalWorkflow, its rule files, its input and output
    workflow = g["workflow/Snakefile"]
    assert workflow["@type"] == ["File", "SoftwareSourceCode", "ComputationalWorkflow"]
    assert (workflow["name"], workflow["version"], workflow["description"]) == ("medfc: test workflow", "0.1.0", "A tiny workflow.")
    assert workflow["conformsTo"] == {"@id": "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"}
    assert workflow["dateCreated"] == "2026-12-03" and workflow["hasPart"] == {"@id": "workflow/rules/tables.smk"}
    assert workflow["programmingLanguage"] == {"@id": "https://w3id.org/workflowhub/workflow-ro-crate#snakemake"}
    assert g["https://w3id.org/workflowhub/workflow-ro-crate#snakemake"] == {
        "@id": "https://w3id.org/workflowhub/workflow-ro-crate#snakemake", "@type": "ComputerLanguage", "name": "Snakemake",
        "identifier": {"@id": "https://doi.org/10.1093/bioinformatics/bts480"}, "url": {"@id": "https://snakemake.readthedocs.io"},
        "version": "9.14.0"}
    assert workflow["license"] == {"@id": "https://spdx.org/licenses/MIT"}
    assert workflow["creator"] == workflow["author"] == {"@id": "#organization-the-medfc-authors"}
    assert g["#organization-the-medfc-authors"] == {"@id": "#organization-the-medfc-authors", "@type": "Organization", "name": "The medfc authors"}
    assert (workflow["input"], workflow["output"]) == ({"@id": "#param-configfile"}, {"@id": "#param-result"})
    assert g["#param-configfile"]["@type"] == "FormalParameter" and g["#param-configfile"]["additionalType"] == "File"
    assert {p for p in PARTS if g[p].get("exampleOfWork") == {"@id": "#param-configfile"}} == {"config/config.yaml", "config/extra.yaml"}
    assert {p for p in PARTS if g[p].get("exampleOfWork") == {"@id": "#param-result"}} == {
        "tables/healthfc_table3.csv", "figures/fig3.png", "healthfc/dataset/healthfc.jsonl", "healthfc/old/report.json"}
    # the works to cite, from CITATION.cff; an affiliation is an Organization
    assert ids(workflow["citation"]) == ["#reference-1", "#reference-2"]
    paper, data = g["#reference-1"], g["#reference-2"]
    assert (paper["@type"], paper["name"], paper["datePublished"]) == ("ScholarlyArticle", "HealthFC", "2024")
    assert [g[a["@id"]]["name"] for a in paper["author"]] == ["Juraj Vladika", "Florian Matthes"]
    assert g["#person-juraj-vladika"] == {"@id": "#person-juraj-vladika", "@type": "Person", "name": "Juraj Vladika", "familyName": "Vladika",
                                          "givenName": "Juraj", "affiliation": {"@id": "#organization-technical-university-of-munich"}}
    assert g["#organization-technical-university-of-munich"]["name"] == "Technical University of Munich"
    assert (data["@type"], data["url"], data["license"]) == ("Dataset", "https://github.com/jvladika/HealthFC", "CC-BY-NC-ND-4.0")
    assert data["author"] == {"@id": "#person-juraj-vladika"}  # one entity per person, a single value for one
    # the software of provenance/software.yml (torch, not installed, left out), each with an absolute id but medfc
    assert ids(workflow["softwareRequirements"]) == ["https://www.python.org/", "#software-medfc", "https://pypi.org/project/snakemake/",
                                                     "https://pypi.org/project/scikit-learn/"]
    assert g["https://www.python.org/"] == {"@id": "https://www.python.org/", "@type": "SoftwareApplication", "name": "Python",
                                            "softwareVersion": "3.11.7", "url": "https://www.python.org/", "description": "CPython on Linux-x86_64"}
    assert g["https://pypi.org/project/scikit-learn/"] == {"@id": "https://pypi.org/project/scikit-learn/", "@type": "SoftwareApplication",
                                                           "name": "scikit-learn", "softwareVersion": "1.9.1",
                                                           "url": "https://pypi.org/project/scikit-learn/"}

    # one CreateAction per run: its start, end, status, host, config files and the files it wrote last
    lines = (results / "provenance/runs.jsonl").read_text().splitlines()
    actions = [e for e in metadata["@graph"] if e["@type"] == "CreateAction"]
    assert len(actions) == len(lines) == 2 and ids(root["mentions"]) == ["#run-run1", "#run-run2"]
    first, second = g["#run-run1"], g["#run-run2"]
    assert first["name"] == "Snakemake run run1" and first["startTime"] == T0.isoformat()
    # run 1's end and status from Snakemake's log; run 2 has none: its last file, and completed as it wrote the index
    assert (first["endTime"], first["actionStatus"]) == ((T0 + dt.timedelta(minutes=6)).isoformat(), "http://schema.org/CompletedActionStatus")
    assert (second["endTime"], second["actionStatus"]) == ((T1 + dt.timedelta(minutes=4)).isoformat(), "http://schema.org/CompletedActionStatus")
    assert "agent" not in first  # nobody named: medfc rocrate --agent
    assert first["instrument"] == {"@id": "workflow/Snakefile"} and second["instrument"] == {"@id": "workflow/Snakefile"}
    assert first["object"] == {"@id": "config/config.yaml"} and ids(second["object"]) == ["config/config.yaml", "config/extra.yaml"]
    assert first["result"] == {"@id": "tables/healthfc_table3.csv"}
    assert ids(second["result"]) == ["figures/fig3.png", "healthfc/dataset/healthfc.jsonl"]
    assert first["location"] == {"@id": "#host-node-7"} and g["#host-node-7"] == {"@id": "#host-node-7", "@type": "Place", "name": "node-7"}
    assert second["description"] == "snakemake --cores 2 --configfile extra.yaml missing.yaml -- tables"
    assert g["config/extra.yaml"]["description"] == "A config file the runs read (extra.yaml)"

    # what is named but missing, or left out, is counted
    summary = crate.summary
    assert summary["runs"] == 2 and summary["results"] == 4 and summary["files"] == len(PARTS)
    assert summary["skipped_by_reason"] == {"missing_config_file": 1}
    assert summary["counts"] == {"results_older_than_every_run": 1} and summary["left_out"] == {"checkpoints": 1}


def test_the_agent_a_failed_run_and_a_run_of_unknown_end(finished_run):
    """``agent`` names who ran the runs (each run's agent, the crate's author); a Snakemake log that ends with a
    failed job makes a failed run; a run with neither log nor files has no end or status (counted)."""
    checkout, results = finished_run
    log = next((results.parent / ".snakemake/log").iterdir())
    log.write_text("Error in rule table:\n    jobid: 3\nExiting because a job execution failed. Look below for error messages\n")
    os.utime(log, ((T0 + dt.timedelta(minutes=7)).timestamp(),) * 2)
    for path in ("figures/fig3.png", "healthfc/dataset/healthfc.jsonl", "logs/tables/table.log", "timings/tables/table.tsv", "index.md",
                 "provenance/runs.jsonl"):
        os.utime(results / path, ((T0 + dt.timedelta(minutes=8)).timestamp(),) * 2)  # run 2 wrote nothing
    crate = rocrate.build_crate(results, checkout / "workflow", agent="Josiah Carberry", agent_id="https://orcid.org/0000-0002-1825-0097")
    g = graph_of(crate.metadata)
    first, second = g["#run-run1"], g["#run-run2"]
    assert (first["endTime"], first["actionStatus"]) == ((T0 + dt.timedelta(minutes=7)).isoformat(), "http://schema.org/FailedActionStatus")
    assert "endTime" not in second and "actionStatus" not in second and "result" not in second
    assert crate.summary["counts"] == {"results_older_than_every_run": 1, "run_end_unknown": 1, "run_status_unknown": 1}
    assert first["agent"] == second["agent"] == g["./"]["author"] == {"@id": "https://orcid.org/0000-0002-1825-0097"}
    assert g["https://orcid.org/0000-0002-1825-0097"] == {"@id": "https://orcid.org/0000-0002-1825-0097", "@type": "Person",
                                                         "name": "Josiah Carberry"}
    assert "| run1 | 2026-12-03T10:00:00+00:00 | 2026-12-03T10:07:00+00:00 | failed |" in crate.readme
    with pytest.raises(ValueError, match="not an absolute URI"):
        rocrate.export(results, None, checkout / "workflow", agent="J. C.", agent_id="0000-0002-1825-0097")


def test_a_snakemake_logs_ending():
    assert [log_outcome_of(text) for text in (
        "Building DAG of jobs...\n12 of 12 steps (100%) done\nComplete log(s): x\n",
        "Building DAG of jobs...\nNothing to be done (all requested files are present and up to date).\n",
        "5 of 12 steps (42%) done\nError in rule x:\nShutting down, this might take some time.\n",
        "5 of 12 steps (42%) done\n",  # cut short: killed
    )] == ["http://schema.org/CompletedActionStatus", "http://schema.org/CompletedActionStatus", "http://schema.org/FailedActionStatus", None]


def test_a_damaged_run_record_is_skipped_and_counted(finished_run):
    checkout, results = finished_run
    runs = results / "provenance/runs.jsonl"
    good = runs.read_text().splitlines()
    runs.write_text("\n".join([good[0], '{"run": "cut', json.dumps({"run": "run9"}), "[1, 2]", good[1]]) + "\n")
    crate = rocrate.build_crate(results, checkout / "workflow")
    actions = [e for e in crate.metadata["@graph"] if e["@type"] == "CreateAction"]
    assert [a["@id"] for a in actions] == ["#run-run1", "#run-run2"]  # the whole lines only
    assert crate.summary["skipped_by_reason"] == {"damaged_run_record": 3, "missing_config_file": 1}
    assert {s.split(" (")[0] for s in crate.summary["skipped"] if "(damaged_run_record)" in s} == {"runs.jsonl line 2", "runs.jsonl line 3", "runs.jsonl line 4"}

    # without runs.jsonl and software.yml: a crate of the files, no runs, both counted
    runs.unlink()
    (results / "provenance/software.yml").unlink()
    crate = rocrate.build_crate(results, checkout / "workflow")
    g = graph_of(crate.metadata)
    assert "mentions" not in g["./"] and "softwareRequirements" not in g["workflow/Snakefile"]
    assert crate.summary["skipped_by_reason"] == {"missing_runs_record": 1, "missing_software_record": 1}
    # no run names its checkpoint_dir now: the kept model is one more file (in no run's results)
    assert crate.summary["counts"] == {"results_older_than_every_run": 5} and crate.summary["left_out"] == {}
    assert set(ids(g["./"]["hasPart"])) == PARTS - {"provenance/runs.jsonl", "provenance/software.yml", "config/config.yaml",
                                                           "config/extra.yaml"} | {"checkpoints/healthfc/oracle/model.pkl"}


def test_the_crate_as_a_zip_from_the_command_line(finished_run, tmp_path, capsys):
    checkout, results = finished_run
    out = tmp_path / "crate.zip"
    assert main(["rocrate", "--results-dir", str(results), "--output", str(out), "--workflow-dir", str(checkout / "workflow")]) == 0
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        metadata = json.loads(zf.read("ro-crate-metadata.json"))
        assert zf.read("tables/healthfc_table3.csv").decode() == RESULTS["tables/healthfc_table3.csv"][0]
        assert zf.read("workflow/Snakefile") == (checkout / "workflow/Snakefile").read_bytes()
        assert zf.read("README.md").decode().startswith("# medfc: test workflow: a run record")
    assert names == PARTS | {"ro-crate-metadata.json"}
    assert set(ids(graph_of(metadata)["./"]["hasPart"])) == PARTS
    assert not (results / "ro-crate-metadata.json").exists() and not (results / "workflow").exists()  # the results folder untouched
    # ro-crate-py reads the zip back
    from rocrate.rocrate import ROCrate

    read = ROCrate(out)
    assert read.mainEntity.id == "workflow/Snakefile" and [a.id for a in read.get_by_type("CreateAction")] == ["#run-run1", "#run-run2"]
    assert read.get("README.md")["about"] is read.root_dataset
    err = capsys.readouterr().err
    assert f"medfc rocrate: {out}: 2 run(s), {len(PARTS)} files (4 results, 2 config files), 4 software entries" in err
    assert "missing_config_file: 1" in err and "left out (checkpoints): 1" in err

    # a zip written inside the results folder is not a part of the next one
    inner = results / "crate.zip"
    rocrate.export(results, inner, checkout / "workflow")
    with zipfile.ZipFile(inner) as zf:
        assert set(zf.namelist()) == PARTS | {"ro-crate-metadata.json"}


def test_the_crate_in_the_results_folder_and_in_another_folder(finished_run, tmp_path):
    checkout, results = finished_run
    summary = rocrate.export(results, None, checkout / "workflow")
    assert summary["crate"] == str(results.resolve() / "ro-crate-metadata.json")
    metadata = json.loads((results / "ro-crate-metadata.json").read_text())
    for path in ids(graph_of(metadata)["./"]["hasPart"]):
        assert (results / path).is_file(), path  # every part at its path in the crate
    assert (results / "workflow/Snakefile").read_bytes() == (checkout / "workflow/Snakefile").read_bytes()
    assert (results / "config/extra.yaml").read_text() == "seed: 2\n"

    # again after the workflow changed: the earlier export's copy is replaced, the results are not copied into themselves
    _write(checkout / "workflow/Snakefile", "# changed\n")
    rocrate.export(results, None, checkout / "workflow")
    assert (results / "workflow/Snakefile").read_text() == "# changed\n"
    assert set(ids(graph_of(json.loads((results / "ro-crate-metadata.json").read_text()))["./"]["hasPart"])) == PARTS

    # a file no export wrote is never overwritten
    (results / "ro-crate-metadata.json").unlink()
    _write(results / "LICENSE", "someone else's\n")
    with pytest.raises(FileExistsError, match="written by no earlier export"):
        rocrate.export(results, None, checkout / "workflow")
    assert (results / "LICENSE").read_text() == "someone else's\n"

    # another folder: the results copied in; a folder inside the results folder, or one holding other files, refused
    elsewhere = tmp_path / "crate"
    rocrate.export(results, elsewhere, checkout / "workflow")
    assert (elsewhere / "figures/fig3.png").read_text() == "png" and (elsewhere / "ro-crate-metadata.json").is_file()
    with pytest.raises(ValueError, match="inside the results folder"):
        rocrate.export(results, results / "crate", checkout / "workflow")
    _write(tmp_path / "busy/notes.txt", "x")
    with pytest.raises(FileExistsError, match="holds files and no crate"):
        rocrate.export(results, tmp_path / "busy", checkout / "workflow")


def test_the_default_workflow_is_the_checkouts():
    workflow = rocrate.default_workflow_dir()
    assert workflow is not None and (workflow / "Snakefile").is_file() and (workflow.parent / "src/medfc").is_dir()


def test_a_path_the_id_quotes_is_one_entity_that_its_run_names(finished_run):
    """A file whose path a URI must quote (``tfidf+minilm``): its entity's id is the quoted path, the run's result
    names that entity, and every reference of the graph resolves to one of its entities."""
    checkout, results = finished_run
    _write(results / "experiments/tfidf+minilm/scores.json", "{}\n", T1 + dt.timedelta(minutes=2))
    crate = rocrate.build_crate(results, checkout / "workflow")
    g = graph_of(crate.metadata)
    assert "experiments/tfidf%2Bminilm/scores.json" in g and "experiments/tfidf+minilm/scores.json" in crate.files
    assert "experiments/tfidf%2Bminilm/scores.json" in ids(g["#run-run2"]["result"])

    def refs(value):
        if isinstance(value, dict):
            yield from ([value["@id"]] if set(value) == {"@id"} else [r for v in value.values() for r in refs(v)])
        elif isinstance(value, list):
            for v in value:
                yield from refs(v)

    dangling = {r for e in crate.metadata["@graph"] for k, v in e.items() if k != "@id" for r in refs(v)} - set(g)
    assert not {r for r in dangling if not r.startswith("https://")}, dangling  # only the web's pages (profiles, Snakemake's)
    assert None not in json.loads(json.dumps(g["#run-run2"]["result"]))
