"""The releases are pinned: a commit-pinned location and the SHA-256 of every file, in the schema's defaults and every
shipped config; a changed file (served by a local server, or a local copy) is refused before it is read, in one line
naming the file, both hashes and the key; a file without a pinned hash is accepted and its hash recorded, in the
step's report, the run's provenance, the index and the dataset card."""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from medfc.clinifact import steps as cf_steps
from medfc.common import pinning
from medfc.common.provenance import RECORDS_ENV, RUN_ENV
from medfc.common.run_index import releases_section
from medfc.common.schema import defaults
from medfc.healthfc import steps as hfc_steps
from medfc.healthfc.dataset import dataset_card
from medfc.config.validate import ConfigError, merged_config, plan_for
from tests.helpers.http_servers import reply, serving
from tests.helpers.workflow import REPO

HEALTHFC_COMMIT = "9f31d765e5d4a99bd9fff667e82de503bc5684f5"
CLINIFACT_COMMIT = "77f8c19844fd4113aa051f867b4d7a8ce5c3a879"
HEALTHFC_SHA = "6b832bd2a73af47f7a8d9dcd3c307defa962cff3746c26b33866170a406721c8"
CLINIFACT_SHA = {"train": "314f199811ec02ffedf6d18a1c7d51583c71514c7f22896d408c5130c042cc90",
                 "validation": "b4e7fddb6a1ca1b76be9ba2da54ccf360cd50ce45ae988df9657a429d5719431",
                 "test": "d935566ee0b025b5fe793cb57c56228e1a6939440713312d3d5a3e0acdb4671e"}
DEMO_HFC = REPO / "resources/demo/healthfc_release/Datensatz.csv"
DEMO_CF = REPO / "resources/demo/clinifact_release"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _config(name: str) -> dict:
    return yaml.safe_load((REPO / "config" / name).read_text(encoding="utf-8"))


def test_the_defaults_and_every_shipped_config_pin_the_releases_commit_and_hashes():
    d = defaults()
    assert pinning.pinned_commit(d["healthfc"]["release"]["source"]) == HEALTHFC_COMMIT
    assert d["healthfc"]["release"]["sha256"] == HEALTHFC_SHA
    assert pinning.pinned_commit(d["clinifact"]["release"]["source"]) == CLINIFACT_COMMIT
    assert d["clinifact"]["release"]["source"].endswith("/data/processed/primary_outcome_publication_dataset")
    assert d["clinifact"]["release"]["sha256"] == CLINIFACT_SHA
    cpu, live = _config("cpu.yaml"), _config("live.yaml")
    for release in (cpu["healthfc"]["release"], live["healthfc"]["release"]):
        assert (pinning.pinned_commit(release["source"]), release["sha256"]) == (HEALTHFC_COMMIT, HEALTHFC_SHA)
    assert (pinning.pinned_commit(cpu["clinifact"]["release"]["source"]), cpu["clinifact"]["release"]["sha256"]) == (CLINIFACT_COMMIT, CLINIFACT_SHA)
    diff = live["clinifact"]["diff"]
    assert (pinning.pinned_commit(diff["release"]), diff["release_sha256"]) == (CLINIFACT_COMMIT, CLINIFACT_SHA)
    # the demo's embedded releases, where a shipped config names them, with their own hashes
    for name in ("config.yaml", "test.yaml", "test_experiments.yaml", "test_medsnip.yaml", "test_slurm_paper.yaml"):
        release = _config(name)["healthfc"]["release"]
        assert release["sha256"] == pinning.sha256_of(REPO / release["source"]), name
    demo_diff = _config("config.yaml")["clinifact"]["diff"]
    assert demo_diff["release_sha256"] == {s: pinning.sha256_of(DEMO_CF / f"{s}_set.csv") for s in CLINIFACT_SHA}
    for path in sorted((REPO / "config").glob("*.yaml")):  # no release read from a moving branch
        assert "githubusercontent.com/jvladika/HealthFC/main" not in path.read_text() and "CliniFact/main" not in path.read_text(), path


def test_pinned_commit_reads_githubs_locations():
    assert pinning.pinned_commit(f"https://github.com/o/r/raw/{HEALTHFC_COMMIT}/a.csv") == HEALTHFC_COMMIT
    assert pinning.pinned_commit("https://raw.githubusercontent.com/o/r/main/a.csv") is None
    assert pinning.pinned_commit(str(DEMO_HFC)) is None


def _server(files: dict[str, bytes]):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path in files:
                reply(self, 200, {"Content-Type": "text/csv"}, files[self.path])
            else:
                reply(self, 404, {}, b"not found")

        def log_message(self, *args):
            pass

    return serving(Handler)


def test_a_changed_healthfc_release_from_a_server_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv(RECORDS_ENV, str(tmp_path / "provenance"))
    monkeypatch.setenv(RUN_ENV, "run-1")
    pinned = pinning.sha256_of(DEMO_HFC)
    changed = DEMO_HFC.read_bytes().replace(b"Ja", b"Nein", 1)
    found = hashlib.sha256(changed).hexdigest()
    out = {"rows": str(tmp_path / "out/rows.jsonl"), "report": str(tmp_path / "out/report.json")}
    with _server({"/r/Datensatz.csv": changed}) as base:
        url = f"{base}/r/Datensatz.csv"
        options = hfc_steps.ReleaseOptions(source=url, sha256=pinned, cache_dir=str(tmp_path / "cache"))
        with pytest.raises(pinning.ReleaseChanged) as exc:
            hfc_steps.release({}, out, options)
        assert str(exc.value) == (f"release changed: {url} has SHA-256 {found}, but healthfc.release.sha256 pins {pinned}; "
                                  f"to accept this version of the file, set healthfc.release.sha256: {found}")
        assert not Path(out["rows"]).exists() and not (tmp_path / "provenance").exists()
        # the key set to the found hash (or null) accepts it, and the hash is recorded
        hfc_steps.release({}, out, options.replace(sha256=None))
    record = json.loads(Path(out["report"]).read_text())["release"]
    assert record == {"dataset": "healthfc", "source": url, "commit": None, "files": {"Datensatz.csv": {"sha256": found, "pinned": False}}}
    line = json.loads((tmp_path / "provenance" / pinning.RELEASES_FILE).read_text())
    assert line == {"run": "run-1", **record}
    index = "\n".join(releases_section(tmp_path / "provenance" / pinning.RELEASES_FILE))
    assert "## Releases read" in index and f"`{found}`" in index and "recorded" in index


def test_a_changed_clinifact_split_is_refused_before_any_split_is_read(tmp_path):
    files = {f"/cf/{s}_set.csv": (DEMO_CF / f"{s}_set.csv").read_bytes() for s in CLINIFACT_SHA}
    files["/cf/test_set.csv"] += b"\n"
    pins = {s: pinning.sha256_of(DEMO_CF / f"{s}_set.csv") for s in CLINIFACT_SHA}
    out = {s: str(tmp_path / f"out/{s}.csv") for s in CLINIFACT_SHA} | {"report": str(tmp_path / "out/report.json")}
    with _server(files) as base:
        options = cf_steps.ReleaseOptions(source=f"{base}/cf", sha256=pins, cache_dir=str(tmp_path / "cache"))
        with pytest.raises(pinning.ReleaseChanged) as exc:
            cf_steps.import_release({}, out, options)
        message = str(exc.value)
        assert message.startswith(f"release changed: {base}/cf/test_set.csv has SHA-256 ") and "\n" not in message
        assert f"but clinifact.release.sha256.test pins {pins['test']}" in message
        assert not any(Path(p).exists() for p in out.values())
        cf_steps.import_release({}, out, options.replace(sha256={**pins, "test": None}))
    record = json.loads(Path(out["report"]).read_text())["release"]
    assert record["files"]["train_set.csv"] == {"sha256": pins["train"], "pinned": True}
    assert record["files"]["test_set.csv"]["pinned"] is False


def _plan_lines(*overrides_files, **overrides) -> list[str]:
    try:
        plan_for(merged_config([REPO / "config" / "config.yaml", *overrides_files], overrides), SCHEMA, prerequisites=True)
    except ConfigError as exc:
        return str(exc).splitlines()
    return []


def test_a_changed_local_copy_stops_the_plan_naming_the_file_and_the_key(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    assert _plan_lines() == []  # the demo's own files have the hashes config.yaml pins
    copy = tmp_path / "Datensatz.csv"
    copy.write_bytes(DEMO_HFC.read_bytes() + b"\n")
    found = pinning.sha256_of(copy)
    lines = _plan_lines(healthfc={"release": {"source": str(copy)}})
    assert lines == [f"release changed: {copy} has SHA-256 {found}, but healthfc.release.sha256 pins "
                     f"{pinning.sha256_of(DEMO_HFC)}; to accept this version of the file, set healthfc.release.sha256: {found}"]
    assert _plan_lines(healthfc={"release": {"source": str(copy), "sha256": None}}) == []  # no hash: accepted
    lines = _plan_lines(clinifact={"diff": {"release_sha256": {"validation": "0" * 64}}})
    assert len(lines) == 1 and "resources/demo/clinifact_release/validation_set.csv has SHA-256" in lines[0]
    assert "clinifact.diff.release_sha256.validation" in lines[0]


def test_the_healthfc_card_names_the_release_read():
    record = pinning.release_record("healthfc", f"https://raw.githubusercontent.com/jvladika/HealthFC/{HEALTHFC_COMMIT}/Datensatz.csv",
                                    {"Datensatz.csv": {"sha256": HEALTHFC_SHA, "pinned": True}})
    card = dataset_card([], mode="release", release=pinning.describe(record))
    assert f"(commit {HEALTHFC_COMMIT}): Datensatz.csv SHA-256 {HEALTHFC_SHA}" in card
