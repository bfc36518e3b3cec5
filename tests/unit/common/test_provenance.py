"""Provenance records (medfc.common.provenance): the software record, a run's line in runs.jsonl, a job's
pointer to them with its device."""

from __future__ import annotations

import json
import sys

import yaml

from medfc.common import provenance


def test_the_software_record_names_python_and_every_package_version_or_none(tmp_path):
    rec = provenance.software(("snakemake", "no-such-distribution-medfc"))
    assert rec["python"].count(".") == 2 and rec["platform"]
    assert rec["packages"]["snakemake"][0].isdigit() and rec["packages"]["no-such-distribution-medfc"] is None
    provenance.write_software({}, {"software": tmp_path / "software.yml"}, {"software": rec})
    assert yaml.safe_load((tmp_path / "software.yml").read_text()) == rec


def test_each_run_appends_one_whole_line_with_its_command_redacted(tmp_path):
    argv = ["snakemake", "--cores", "2", "--config", "token=sk-abcdef123456"]
    config, software = {"stages": {"healthfc": True}, "cache_dir": "cache"}, provenance.software(("snakemake",))
    for run in ("20261203T160000Z-1", "20261203T170000Z-2"):
        provenance.append_run_record(tmp_path / "provenance", provenance.run_record(run, argv, tmp_path, config, software))
    lines = [json.loads(line) for line in (tmp_path / "provenance" / "runs.jsonl").read_text().splitlines()]
    assert [r["run"] for r in lines] == ["20261203T160000Z-1", "20261203T170000Z-2"]
    assert lines[0]["command"][:3] == ["snakemake", "--cores", "2"] and "sk-abcdef123456" not in json.dumps(lines)
    assert lines[0]["workdir"] == str(tmp_path.resolve()) and lines[0]["started"].endswith("+00:00")
    assert lines[1]["config"] == config and lines[1]["software"] == software


def test_a_job_points_to_its_run_and_records_the_device_only_where_torch_is_loaded(monkeypatch):
    env = {provenance.RUN_ENV: "20261203T160000Z-7", provenance.RECORDS_ENV: "runs/cpu/provenance"}
    rec = provenance.job_record(env)
    assert rec["run"] == "20261203T160000Z-7" and rec["software"] == "runs/cpu/provenance/software.yml"
    assert rec["runs"] == "runs/cpu/provenance/runs.jsonl"
    import torch

    monkeypatch.setitem(sys.modules, "torch", None)  # a process that never loaded it (never unloaded: torch loads once)
    assert provenance.job_record({})["device"] == {} and provenance.job_record({})["run"] is None
    monkeypatch.setitem(sys.modules, "torch", torch)
    device = provenance.job_record(env)["device"]
    assert device["torch"] == torch.__version__ and device["cuda_available"] == torch.cuda.is_available()
