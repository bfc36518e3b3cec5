"""The plan of the ``datasets.<name>`` entries: one ``dataset_import`` job per entry, in the config's order, its
options typed from the entry (a source that is not exactly one of path, url and hf at a commit, or whose files are
not the three splits, one line naming the key), its planned jobs, and the prerequisites checked where the run is planned
(a local path that is not there; a pinned file already here with another SHA-256)."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from medfc.cli import resolve_step, step_arguments
from medfc.common.options import Runtime
from medfc.config.validate import ConfigError, plan_for
from tests.helpers.config import SCHEMA, defaults

ENTRY = {"fields": {"claim": "claim", "evidence": "evidence", "label": "label"}, "labels": {"yes": "SUPPORTED", "no": "REFUTED"}}


def plan(tmp_path, prerequisites: bool = False, **entries):
    cfg = defaults()
    cfg["stages"] = {stage: False for stage in cfg["stages"]}
    cfg["cache_dir"] = str(tmp_path / "cache")
    cfg["results_dir"] = str(tmp_path / "results")
    cfg["datasets"] = copy.deepcopy({name: {**ENTRY, **entry} for name, entry in entries.items()})  # the plan fills in defaults
    return plan_for(cfg, SCHEMA, prerequisites=prerequisites)


def test_one_import_per_entry_in_the_configs_order(tmp_path):
    (tmp_path / "a.csv").write_text("claim,evidence,label\nc,e,yes\n")
    p = plan(tmp_path, zeta={"source": {"path": str(tmp_path / "a.csv")}}, alpha={"source": {"url": "https://example.org/d.jsonl", "sha256": {"data": "0" * 64}}})
    assert p.datasets.dataset_names() == ["zeta", "alpha"]
    assert p.datasets.dataset_split_file("alpha", "validation") == f"{tmp_path}/results/datasets/alpha/validation.jsonl"
    planned = [(spec.rule, w) for spec, w in p.planned_jobs() if spec.rule == "dataset_import"]
    assert planned == [("dataset_import", {"dataset": "zeta"}), ("dataset_import", {"dataset": "alpha"})]
    assert "dataset_import" in p.local_rules()  # it downloads: where Snakemake runs
    assert p.inputs("dataset_import", {"dataset": "zeta"}) == {"source": [str(tmp_path / "a.csv")]}
    assert p.inputs("dataset_import", {"dataset": "alpha"}) == {}
    made, params = p.job_options("dataset_import", {"dataset": "alpha"}), p.options("dataset_import", {"dataset": "alpha"})
    assert json.loads(json.dumps(params)) == params and made.title == "alpha" and made.cache_dir == f"{tmp_path}/cache/datasets"
    received, _ = step_arguments(resolve_step("datasets.steps:import_dataset"), params, Runtime(threads=1, log_file=None))
    assert received == made and made.classes == ["SUPPORTED", "REFUTED"]
    assert plan(tmp_path).datasets.dataset_names() == [] and not plan(tmp_path).planned_wildcards()["dataset_import"]


@pytest.mark.parametrize(("source", "extra", "line"), [
    ({"path": "d.csv", "url": "https://example.org/d.csv"}, {}, "datasets.d.source: set exactly one of path, url and hf (set: path, url)"),
    ({"url": "https://example.org/d.csv", "revision": "a" * 40}, {}, "datasets.d.source.revision is read with hf only, but the source is url"),
    ({"hf": "o/n", "files": {"train": "t.parquet"}}, {}, "datasets.d.source.revision is required with hf"),
    ({"hf": "o/n", "revision": "v1.0", "files": {"train": "t.parquet"}}, {}, "datasets.d.source.revision 'v1.0' is not a commit"),
    ({"hf": "o/n", "revision": "a" * 40}, {}, "datasets.d.source.files is required with hf"),
    ({"url": "https://example.org", "files": {"train": "t.csv", "dev": "d.csv"}}, {}, "datasets.d.source.files.dev: 'dev' is none of the splits"),
    ({"url": "https://example.org", "files": {"train": "t.csv", "dev": "d.csv", "validation": "v.csv"}}, {"splits": {"names": {"dev": "validation"}}},
     "datasets.d.source.files: dev and validation are both the validation split"),
    ({"url": "https://example.org", "files": {"test": "t.csv"}}, {}, "datasets.d.source.files names no train split"),
    ({"url": "https://example.org/d.csv", "sha256": {"train": "0" * 64}}, {}, "datasets.d.source.sha256.train: no file of the source has this key"),
    ({"url": "https://example.org/d.csv"}, {}, "datasets.d.source.url 'https://example.org/d.csv' names no commit (a GitHub URL at a "
     "40-hex commit), so its files can change: pin it at a commit, or pin every file in datasets.d.source.sha256 (not pinned: data)"),
    ({"url": "https://raw.githubusercontent.com/o/r/main/data", "files": {"train": "t.csv", "test": "s.csv"}, "sha256": {"test": "0" * 64}}, {},
     "datasets.d.source.url 'https://raw.githubusercontent.com/o/r/main/data' names no commit"),
])
def test_a_source_mistake_is_one_line_naming_the_key(tmp_path, source, extra, line):
    with pytest.raises(ConfigError) as err:
        plan(tmp_path, d={"source": source, **extra})
    assert str(err.value).startswith(f"config: {line}") and "\n" not in str(err.value)


def test_a_url_at_a_commit_or_with_every_file_pinned_is_taken(tmp_path):
    at_commit = {"url": "https://raw.githubusercontent.com/o/r/" + "a" * 40 + "/data", "files": {"train": "t.csv", "test": "s.csv"}}
    pinned = {"url": "https://example.org/data", "files": {"train": "t.csv", "test": "s.csv"}, "sha256": {"train": "0" * 64, "test": "1" * 64}}
    assert plan(tmp_path, a={"source": at_commit}, b={"source": pinned}).datasets.dataset_names() == ["a", "b"]


@pytest.mark.parametrize("labels", [{"a": None, "b": None}, {"a": "X", "b": "X", "c": None}])
def test_labels_mapping_to_fewer_than_two_classes_stop_the_plan(tmp_path, labels):
    with pytest.raises(ConfigError, match=r"^config: datasets\.d\.labels maps its values to [01] class\(es\) .*at least two$"):
        plan(tmp_path, d={"source": {"path": "d.csv"}, "labels": labels})


def test_the_prerequisites_name_a_missing_path_and_a_changed_pinned_file(tmp_path):
    with pytest.raises(ConfigError) as err:
        plan(tmp_path, True, d={"source": {"path": str(tmp_path / "nowhere.csv")}},
             e={"source": {"path": str(tmp_path), "files": {"train": "gone.csv"}}})
    lines = str(err.value).splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"prerequisite: datasets.d.source.path '{tmp_path / 'nowhere.csv'}': no such file or folder")
    assert lines[1].startswith(f"prerequisite: datasets.e.source.files.train '{tmp_path / 'gone.csv'}': no such file")
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError, match=rf"^prerequisite: datasets.d.source.path '{tmp_path / 'plain'}' is a folder: name its file of each split"):
        plan(tmp_path, True, d={"source": {"path": str(tmp_path / "plain")}})
    (tmp_path / "d.csv").write_text("claim,evidence,label\nc,e,yes\n")
    found = hashlib.sha256((tmp_path / "d.csv").read_bytes()).hexdigest()
    assert plan(tmp_path, True, d={"source": {"path": str(tmp_path / "d.csv"), "sha256": {"data": found}}}).datasets.dataset_names() == ["d"]
    with pytest.raises(ConfigError, match=rf"^release changed: {tmp_path / 'd.csv'} has SHA-256 {found}, but datasets.d.source.sha256.data pins 0{{64}}"):
        plan(tmp_path, True, d={"source": {"path": str(tmp_path / "d.csv"), "sha256": {"data": "0" * 64}}})


def test_the_docs_examples_are_entries_the_plan_takes(tmp_path):
    import re

    import yaml

    from tests.helpers.workflow import REPO

    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / "docs" / "datasets.md").read_text(encoding="utf-8"), re.S)
    entries = {name: entry for block in blocks for name, entry in yaml.safe_load(block)["datasets"].items()}
    assert list(entries) == ["healthver", "claims"]
    p = plan(tmp_path, **entries)
    healthver = p.job_options("dataset_import", {"dataset": "healthver"})
    assert healthver.classes == ["SUPPORTED", "REFUTED", "NOT ENOUGH INFORMATION"] and healthver.splits.names == {"dev": "validation"}
    assert p.job_options("dataset_import", {"dataset": "claims"}).labels == {"0": "SUPPORTED", "1": "REFUTED", "2": None}
