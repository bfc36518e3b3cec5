"""The last mistakes a new user meets, each one line: a host that does not resolve named as such (apart from a server
that answers with an error or not at all), the MedSNIP stage without a model naming medsnip.llm.model, the SLURM
layout benchmark's own partition and account, ``medfc --version``, and one kept-model path everywhere."""

from __future__ import annotations

import socket
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from medfc import __version__
from medfc.cli import main, run_step
from medfc.common.http import HttpClient, HttpError
from medfc.plan.cluster import placeholder_settings
from medfc.config.validate import ConfigError, merged_config, plan_for
from tests.helpers.clock import FakeClock
from tests.helpers.http_servers import reply, serving
from tests.helpers.workflow import REPO

MODEL_PATH = "results/final/clinifact/tfidf+gbm"  # what a run of experiments.final writes (<results_dir>/final/...)


def _client(tmp_path: Path) -> HttpClient:
    clock = FakeClock()
    return HttpClient(cache_dir=tmp_path / "http", rate=1000, max_retries=1, clock=clock, sleep=clock.sleep)


def test_a_host_that_does_not_resolve_is_named_apart_from_a_server_that_is_down_or_answers_an_error(tmp_path):
    with pytest.raises(HttpError) as exc:  # .invalid never resolves (RFC 2606): no server is asked
        _client(tmp_path).get_json("http://medfc-no-such-host.invalid/release.csv")
    message = str(exc.value)
    assert "medfc-no-such-host.invalid does not resolve (no network, or a wrong host?)" in message and "\n" not in message
    assert "server down" not in message and exc.value.down

    with socket.socket() as s:  # nothing listens there: a server that is down, not a name
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HttpError, match=rf"server down at http://127.0.0.1:{port}") as exc:
        _client(tmp_path).get_json(f"http://127.0.0.1:{port}/x")
    assert "does not resolve" not in str(exc.value)

    class Broken(BaseHTTPRequestHandler):
        def do_GET(self):
            reply(self, 500, {}, b"oops")

        def log_message(self, *args):
            pass

    with serving(Broken) as base, pytest.raises(HttpError, match="HTTP 500") as exc:
        _client(tmp_path).get_json(f"{base}/x")
    assert "does not resolve" not in str(exc.value) and "server down" not in str(exc.value)


def test_a_release_from_a_host_that_does_not_resolve_fails_the_job_at_once_in_one_line(tmp_path):
    out = {"rows": str(tmp_path / "rows.jsonl"), "report": str(tmp_path / "report.json")}
    log = tmp_path / "release.log"
    options = {"source": "http://medfc-no-such-host.invalid/Datensatz.csv", "sha256": None, "cache_dir": str(tmp_path / "cache")}
    with pytest.raises(HttpError) as exc:
        run_step("healthfc.steps:release", {}, out, options, log=str(log))
    assert str(exc.value) == ("GET http://medfc-no-such-host.invalid/Datensatz.csv: medfc-no-such-host.invalid does not "
                              "resolve (no network, or a wrong host?)")  # no retries: no server was asked
    assert not Path(out["rows"]).exists() and "does not resolve (no network, or a wrong host?)" in log.read_text()


def test_the_medsnip_stage_without_a_model_names_the_key_to_set():
    config = merged_config([REPO / "config" / "config.yaml"], {"stages": {"medsnip": True}})
    with pytest.raises(ConfigError) as exc:
        plan_for(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    message = str(exc.value)
    assert message.startswith("config: medsnip.llm.model is empty") and "\n" not in message
    assert "medsnip.decomposer.model" not in message


def test_the_slurm_layout_dry_run_gives_the_profile_a_partition_and_account_of_its_own(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("slurm_layout", REPO / "benchmarks" / "slurm_layout.py")
    B = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(B)

    calls = []
    monkeypatch.setattr(B.S, "run_snakemake", lambda cwd, args, **kw: calls.append((cwd, args)) or subprocess.CompletedProcess(args, 0, "", ""))
    monkeypatch.setattr(B.S, "validated_config", lambda *a, **k: {})
    monkeypatch.setattr(B.cluster_layout, "cluster_rules", lambda config: [])
    monkeypatch.setattr(B, "WorkflowCopy", lambda root: type("Copy", (), {"root": root})())
    (tmp_path / "paper-scale" / "config").mkdir(parents=True)
    B.paper_scale_counts(tmp_path)
    (cwd, args), = calls
    profile = args[args.index("--profile") + 1]
    assert profile != "profiles/slurm"
    conf = yaml.safe_load((cwd / profile / "config.yaml").read_text())
    resources = conf["default-resources"]
    assert placeholder_settings([f"{k}={v}" for k, v in resources.items()], conf.get("set-resources") or {}) == []
    shipped = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())["default-resources"]
    assert placeholder_settings([f"{k}={v}" for k, v in shipped.items()], {})  # the shipped placeholders still stop a run


def test_medfc_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"medfc {__version__}"


def test_one_kept_model_path_in_the_help_the_readme_and_the_docs(capsys):
    for argv in (["--help"], ["predict", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = capsys.readouterr().out
        assert f"--model-dir {MODEL_PATH}" in text and "checkpoints/clinifact" not in text
    for doc in ("README.md", "docs/experiments.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        assert f"--model-dir {MODEL_PATH}" in text and "--model-dir runs/" not in text and "--model-dir ckpt" not in text, doc
