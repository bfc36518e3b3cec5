"""A step that fails leaves its exception, its traceback and the file it was reading in the rule's log,
not only on snakemake's stderr."""

from __future__ import annotations

import json

import pytest

from tests.helpers.medsnip import llm_opts, verify_opts

from medfc.cli import run_step
from medfc.common.io import InputFileError


@pytest.fixture(autouse=True)
def _restore_logging(root_logging):
    yield


def test_a_step_reading_a_torn_jsonl_logs_the_file_line_and_traceback(tmp_path, capsys):
    units = tmp_path / "units.jsonl"
    lines = [json.dumps({"unit_id": f"u{i}", "answer_id": "a", "text": "x" * 300}) for i in range(1, 9)]
    lines[5] = lines[5][:150]  # line 6 cut short
    units.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "answers.jsonl").write_text("", encoding="utf-8")
    log = tmp_path / "logs" / "verify.log"
    with pytest.raises(InputFileError):
        run_step("medsnip.steps:verify", {"units": str(units), "answers": str(tmp_path / "answers.jsonl")},
                 {"verdicts": str(tmp_path / "v.jsonl")}, verify_opts("claim_only", "c", llm_opts("http://127.0.0.1:9/v1")),
                 log=str(log))
    text = log.read_text(encoding="utf-8")
    assert "step medsnip.steps:verify started" in text
    assert f"step medsnip.steps:verify failed while reading {units}" in text
    assert "Traceback (most recent call last):" in text and "in read_jsonl" in text
    assert f"medfc.common.io.InputFileError: {units}, line 6: not valid JSON" in text
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err and f"{units}, line 6" in err


def test_any_exception_of_a_step_and_its_file_go_into_the_log(tmp_path, monkeypatch):
    import medfc.medsnip.steps as steps

    missing = tmp_path / "nowhere" / "in.jsonl"

    def reads_a_missing_file(inputs, outputs, options):
        with open(inputs["x"], encoding="utf-8"):
            pass

    def breaks(inputs, outputs, options):
        raise RuntimeError("kaboom in the library")

    monkeypatch.setattr(steps, "reads_a_missing_file", reads_a_missing_file, raising=False)
    monkeypatch.setattr(steps, "breaks", breaks, raising=False)
    log = tmp_path / "step.log"
    with pytest.raises(FileNotFoundError):
        run_step("medsnip.steps:reads_a_missing_file", {"x": str(missing)}, {}, {}, log=str(log))
    with pytest.raises(RuntimeError):
        run_step("medsnip.steps:breaks", {"x": str(missing)}, {}, {}, log=str(log))
    text = log.read_text(encoding="utf-8")
    assert f"step medsnip.steps:reads_a_missing_file failed while reading {missing}" in text
    assert "FileNotFoundError: [Errno 2] No such file or directory" in text
    assert "step medsnip.steps:breaks failed after" in text and "RuntimeError: kaboom in the library" in text
    assert text.count("Traceback (most recent call last):") == 2 and 'in breaks\n    raise RuntimeError' in text


def test_a_job_with_a_log_prints_nothing_but_its_failure(tmp_path):
    """`medfc run ... --log` (a workflow job): everything it writes goes into the log; on failure the terminal gets
    the step, the error and the file it was reading, the log's path and its last lines, and exit status 1."""
    import subprocess
    import sys

    dataset = tmp_path / "healthfc.jsonl"
    dataset.write_text("", encoding="utf-8")
    log = tmp_path / "logs" / "folds.log"
    args = [sys.executable, "-m", "medfc", "run", "healthfc.steps:folds", "--in", f"dataset={dataset}", "--out",
            f"folds={tmp_path / 'folds.csv'}", "--out", f"report={tmp_path / 'folds.json'}", "--log", str(log)]
    ok = subprocess.run([*args, "--options", '{"n_splits": 2, "scheme": "grouped", "seed": 1}'], capture_output=True, text=True)
    bad = subprocess.run([*args, "--options", '{"n_splits": 2, "scheme": "grouped"}'], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == ok.stderr == "", ok.stderr
    assert "step healthfc.steps:folds finished" in log.read_text(encoding="utf-8")
    assert bad.returncode == 1 and bad.stdout == ""
    lines = bad.stderr.splitlines()
    assert lines[0].startswith("medfc: step healthfc.steps:folds failed after ") and lines[0].endswith("OptionsError: FoldsOptions: missing options.seed")
    assert lines[1] == f"  log: {log} (last lines below)" and all(line.startswith("  | ") for line in lines[2:]) and len(lines) <= 14
