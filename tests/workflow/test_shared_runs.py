"""The runs the workflow tests share, and why a copy of one may stand for another: the default HealthFC run
(config/test.yaml, test_healthfc_demo.py) and the CliniFact stage alone (test_clinifact_demo.py) are copies
of the shared full demo run (conftest.py). That holds while their config sections are the full run's, as
Snakemake builds them (config/config.yaml, then each --configfile, then the schema's defaults); a change to
one of those files that breaks it fails here, not as a puzzling assertion elsewhere."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from medfc.common.schema import fill_defaults
from medfc.config.validate import load_schema

pytestmark = pytest.mark.workflow


def effective_config(root: Path, configfiles: list[str]) -> dict:
    def merge(base: dict, new: dict) -> dict:
        for k, v in new.items():
            base[k] = merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else copy.deepcopy(v)
        return base

    config: dict = {}
    for name in ["config/config.yaml", *configfiles]:
        merge(config, yaml.safe_load((root / name).read_text(encoding="utf-8")) or {})
    fill_defaults(config, load_schema(root / "workflow/schemas/config.schema.yaml"))
    return config


def test_the_copies_of_the_full_run_have_its_config_sections(full_demo_run):
    full = effective_config(full_demo_run.root, [a for a in full_demo_run.args if a.startswith("config/")])
    healthfc = effective_config(full_demo_run.root, ["config/test.yaml"])
    full_demo_run.path("config/only_clinifact_check.yaml").write_text("stages: {healthfc: false, clinifact: true, experiments: false}\n")
    clinifact = effective_config(full_demo_run.root, ["config/config.yaml", "config/only_clinifact_check.yaml"])
    assert healthfc["healthfc"] == full["healthfc"] and healthfc["cache_dir"] == full["cache_dir"]
    assert clinifact["clinifact"] == full["clinifact"] and clinifact["cache_dir"] == full["cache_dir"]
    assert full["stages"]["healthfc"] and full["stages"]["clinifact"]


def test_the_run_records_its_software_config_and_command_and_each_experiment_points_to_it(full_demo_run):
    """results/provenance/software.yml (the software, in the report), runs.jsonl (one line per run: id, host,
    folder, command, software, resolved config) and every experiment's info.json naming its run."""
    import json

    prov = full_demo_run.path("results/provenance")
    software = yaml.safe_load((prov / "software.yml").read_text(encoding="utf-8"))
    assert software["packages"]["snakemake"] and software["packages"]["torch"] and software["python"]
    runs = [json.loads(line) for line in (prov / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert runs[0]["config"]["results_dir"] == "results" and runs[0]["config"]["stages"]["experiments"] is True
    assert runs[0]["software"] == software
    assert runs and all("--cores" in r["command"] for r in runs) and runs[0]["workdir"] == str(full_demo_run.root.resolve())
    info = json.loads(full_demo_run.path("results/experiments/clinifact/tiny/info.json").read_text(encoding="utf-8"))
    assert info["provenance"]["run"] in {r["run"] for r in runs}
    assert info["provenance"]["software"] == "results/provenance/software.yml" and info["provenance"]["device"]["torch"]
