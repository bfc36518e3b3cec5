"""The shared full demo run's outputs as the community's own tools read them:

* its Workflow Run RO-Crate (``medfc rocrate``), validated by roc-validator at REQUIRED and RECOMMENDED severity
  with the JSON-LD context served from a file an installed package ships (offline: tests/helpers/crate_validation.py),
  then read back by ro-crate-py. What the validator may still say is exactly what needs facts the project does not
  have (``LEFT``): the crate's publisher, the affiliations of the authors
  CITATION.cff names without one, the web address of an organisation, a public address for the workflow and for
  medfc;
* its dataset exports (``healthfc/dataset/``, ``clinifact/pairs/``), every config loaded by the real ``datasets``
  library in a process of its own (offline, its cache in the test's folder): the configs, split names, row counts,
  label names, and the BigBio view's exact fields.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from medfc import rocrate
from medfc.rocrate.records import slug
from tests.helpers.crate_validation import findings, validate

pytestmark = pytest.mark.workflow

AGENT, AGENT_ID = "Josiah Carberry", "https://orcid.org/0000-0002-1825-0097"  # ORCID's example record
# what the validator still recommends, each needing a fact the project does not have (check → the entities)
LEFT = {
    "ro-crate-1.1_22.3": {"./"},  # the crate's publisher
    "ro-crate-1.1_30.2": None,  # authors without an affiliation (CITATION.cff's references, the agent): the people, below
    "ro-crate-1.1_30.3": None,
    "ro-crate-1.1_31.2": {"./#organization-the-medfc-authors", "./#organization-technical-university-of-munich"},  # their web address
    "process-run-crate-0.5_3.2": {"./workflow/Snakefile", "./#software-medfc"},  # a public address of the workflow and medfc
    "process-run-crate-0.5_5.1": None,  # the same, as their ids (the validator names the classes, not the entities)
}


@pytest.fixture(scope="module")
def crate(full_demo_run, tmp_path_factory) -> Path:
    """The demo run's crate with the checkout's workflow (as ``medfc rocrate`` run in the checkout makes it), written
    into a folder of its own (the run's results copied), its agent named."""
    out = tmp_path_factory.mktemp("crate") / "crate"
    rocrate.export(full_demo_run.path("results"), out, agent=AGENT, agent_id=AGENT_ID)  # the checkout's workflow, LICENSE, CITATION.cff
    return out


def test_the_validator_finds_nothing_but_what_needs_facts_the_project_lacks(crate, tmp_path):
    result = validate(crate, tmp_path / "validator", severity="RECOMMENDED")
    found = findings(result)
    assert not [f for f in found if f["severity"] == "REQUIRED"], found
    by_check: dict[str, set[str]] = {}
    for f in found:
        by_check.setdefault(f["check"], set()).add(f["entity"])
    assert set(by_check) == set(LEFT), json.dumps(found, indent=1)[:6000]
    for check, entities in LEFT.items():
        if entities is not None:
            assert by_check[check] == entities, check
    # the people without an affiliation are those CITATION.cff names without one, and the agent
    import yaml

    cff = yaml.safe_load((crate / "CITATION.cff").read_text())
    people = [a for ref in cff["references"] for a in ref.get("authors") or [] if a.get("family-names")]
    name = lambda a: f"./#person-{slug(' '.join(str(a[k]) for k in ('given-names', 'family-names') if a.get(k)))}"  # noqa: E731
    without = {name(a) for a in people} - {name(a) for a in people if a.get("affiliation")}
    assert by_check["ro-crate-1.1_30.2"] == by_check["ro-crate-1.1_30.3"] == without | {AGENT_ID}  # and the agent's


def test_ro_crate_py_reads_the_crate(crate, full_demo_run):
    from rocrate.rocrate import ROCrate

    read = ROCrate(crate)
    runs = (full_demo_run.path("results") / "provenance/runs.jsonl").read_text().splitlines()
    assert read.mainEntity.id == "workflow/Snakefile" and read.mainEntity["programmingLanguage"].id.endswith("#snakemake")
    actions = read.get_by_type("CreateAction")
    assert len(actions) == len(runs) >= 1
    last = actions[-1]
    assert last["actionStatus"] == "http://schema.org/CompletedActionStatus" and last["endTime"] >= last["startTime"]
    assert last["agent"].id == AGENT_ID and read.root_dataset["author"].id == AGENT_ID
    readme = read.get("README.md")
    assert readme["encodingFormat"] == "text/markdown" and readme["about"].id == "./"
    assert (crate / "README.md").read_text().startswith("# medfc: ")
    files = [e for e in read.data_entities if "File" in (e.type if isinstance(e.type, list) else [e.type])]
    assert files and all(e.get("encodingFormat") for e in files)
    assert all((crate / e.id).is_file() for e in files) and not any(e.id.startswith("/") for e in files)
    assert str(full_demo_run.root) not in (crate / "ro-crate-metadata.json").read_text()


LOAD = """
import json, sys
import datasets
out = {}
for folder in sys.argv[1:]:
    for name in datasets.get_dataset_config_names(folder):
        splits = datasets.load_dataset(folder, name)
        out[name] = {}
        for split, ds in splits.items():
            label = ds.features["label"]
            out[name][split] = {
                "rows": ds.num_rows, "ids": [str(i) for i in ds[ds.column_names[0]]],
                "features": {k: type(v).__name__ + ":" + getattr(v, "dtype", "") for k, v in ds.features.items()},
                "label_names": getattr(label, "names", None),
                "labels": [label.int2str(v) if hasattr(label, "int2str") else v for v in ds["label"]],
            }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def loaded(full_demo_run, tmp_path_factory) -> dict:
    """Every config of the two exports as ``datasets`` loads them (a process of its own, offline)."""
    cache = tmp_path_factory.mktemp("hf")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(cache / "home"),
           "HF_DATASETS_CACHE": str(cache / "datasets")}
    results = full_demo_run.path("results")
    proc = subprocess.run([sys.executable, "-c", LOAD, str(results / "healthfc/dataset"), str(results / "clinifact/pairs")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_datasets_loads_every_healthfc_config(loaded, full_demo_run):
    results = full_demo_run.path("results")
    folds = {r["id"]: int(r["fold"]) for r in _rows(results / "healthfc/folds/folds.csv")}
    records = [json.loads(line) for line in (results / "healthfc/dataset/healthfc.jsonl").read_text().splitlines()]
    labels = {r["id"]: r["label"] for r in records}
    k = max(folds.values()) + 1
    names = [n for n in loaded if n.startswith("healthfc")]
    assert names == ["healthfc_source", "healthfc_bigbio_te"] + [f"healthfc_fold{i}_{v}" for i in range(k) for v in ("source", "bigbio_te")]
    source, bigbio = loaded["healthfc_source"]["train"], loaded["healthfc_bigbio_te"]["train"]
    assert list(loaded["healthfc_source"]) == ["train"] and source["rows"] == bigbio["rows"] == len(records)
    assert source["label_names"] == ["SUPPORTED", "NOT ENOUGH INFO", "REFUTED"]
    assert source["features"]["evidence_level"] == "ClassLabel:int64" and source["features"]["fold"] == "Value:int64"
    assert dict(zip(source["ids"], source["labels"])) == labels  # the ClassLabel gives back each claim's verdict
    assert bigbio["features"] == {"id": "Value:string", "premise": "Value:string", "hypothesis": "Value:string", "label": "Value:string"}
    assert dict(zip(bigbio["ids"], bigbio["labels"])) == labels
    for i in range(k):
        for view in ("source", "bigbio_te"):
            config = loaded[f"healthfc_fold{i}_{view}"]
            assert list(config) == ["train", "test"]
            assert sorted(config["test"]["ids"]) == sorted(c for c, f in folds.items() if f == i)
            assert sorted(config["train"]["ids"]) == sorted(c for c, f in folds.items() if f != i)
    card = (results / "healthfc/dataset/README.md").read_text()
    assert card.startswith("---\n") and "license: cc-by-nc-nd-4.0" in card
    assert "CC BY-NC-ND 4.0 (Vladika et al., 2024); the article text belongs to Medizin Transparent" in card


def test_datasets_loads_every_clinifact_config(loaded, full_demo_run):
    pairs = full_demo_run.path("results/clinifact/pairs")
    assert [n for n in loaded if n.startswith("clinifact")] == ["clinifact_source", "clinifact_bigbio_te"]
    codes = {"0": "inconclusive", "1": "evidence", "2": "not enough information"}
    for name in ("clinifact_source", "clinifact_bigbio_te"):
        assert list(loaded[name]) == ["train", "validation", "test"]
        for split, got in loaded[name].items():
            rows = _rows(pairs / f"{split}_set.csv")
            assert got["rows"] == len(rows) and got["ids"] == [r["index"] for r in rows]
            assert Counter(got["labels"]) == Counter(codes[r["label"]] for r in rows)
    source = loaded["clinifact_source"]["train"]
    assert source["label_names"] == ["inconclusive", "evidence", "not enough information"]
    assert source["features"]["pValues"] == "List:" and len(source["features"]) == 22
    assert loaded["clinifact_bigbio_te"]["test"]["features"] == {
        "id": "Value:string", "premise": "Value:string", "hypothesis": "Value:string", "label": "Value:string"}
    card = (pairs / "README.md").read_text()
    assert "license: mit" in card and "## Licence" in card and "## Files and configs" not in card
