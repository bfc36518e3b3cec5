"""What a user sees of a run: a quiet terminal (Snakemake's plan and progress; a job shows nothing unless it
fails, then its error, its log's path and the log's last lines) and a results folder whose index says what
every folder holds, shows the headline tables, lists every figure and names the runs that made it."""

from __future__ import annotations

import json
import re

import pytest

from medfc.common.run_index import FOLDERS, HEADLINE_TABLES

pytestmark = pytest.mark.workflow

# Snakemake's progress, each job's: "Select jobs to execute...", "Execute n jobs...", its time, "Finished jobid: ...",
# "k of n steps (x%) done"
PROGRESS = re.compile(r"^(Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.|\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]|"
                      r"Finished jobid: \d+ \(Rule: \w+\)|\d+ of \d+ steps \(\d+%\) done)$")


def test_the_terminal_shows_the_plan_and_the_progress_only(full_demo_run):
    out = full_demo_run.terminal
    jobs = int(re.search(r"^total\s+(\d+)$", out, re.M).group(1))
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if PROGRESS.match(line))  # the plan: Snakemake's header and job stats
    assert start <= 15 + len(re.findall(r"^\w+\s+\d+$", out, re.M))
    progress = [line for line in lines[start:] if PROGRESS.match(line)]
    others = [line for line in lines[start:] if not PROGRESS.match(line)]
    assert len(progress) <= 5 * jobs and f"{jobs} of {jobs} steps (100%) done" in out
    assert [line.split(":")[0] for line in others] == ["Complete log(s)", "Elapsed time"], others[:20]
    # what the jobs logged went into their logs
    log = full_demo_run.path("results/logs/healthfc/parse.log").read_text()
    assert "INFO medfc.cli: step healthfc.steps:parse" in log and "heavy libraries loaded" in log


def test_a_failing_job_shows_its_cause_its_log_and_the_logs_last_lines(full_demo_run, tmp_path):
    wf = full_demo_run.clone(tmp_path / "wf")
    steps = wf.path("src/medfc/healthfc/steps.py")
    code = steps.read_text()
    start = code.index("def stats(")
    body = code.index('"""', code.index('"""', start) + 3) + 3
    steps.write_text(code[:body] + '\n    raise ValueError("the cause: no table 2 today")' + code[body:])
    proc = wf.run("--cores", "1", *wf.args[2:], "--", "results/healthfc/stats/table2.csv", terminal=True, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    head = next(line for line in out.splitlines() if line.startswith("medfc: "))
    assert head.startswith("medfc: rule healthfc_stats failed after ") and head.endswith("ValueError: the cause: no table 2 today")
    assert "  log: results/logs/healthfc/stats.log (last lines below)" in out
    assert "  | ValueError: the cause: no table 2 today" in out  # the traceback's end, from the log


def test_the_index_describes_every_folder_and_lists_every_figure(full_demo_run):
    results = full_demo_run.path("results")
    index = (results / "index.md").read_text()
    made = sorted(p.relative_to(results).as_posix() for p in results.rglob("*") if p.is_file())
    own = {"index.md", "index.html", "logs/index.log", "timings/index.tsv"}
    assert "not described" not in index
    folders = re.findall(r"^\| `([^`]+/|[^`/]+\.(?:html|tex))` \| (.+?) \| (\d+) \|$", index, re.M)  # a folder, or a page at the top
    assert sum(int(n) for _, _, n in folders) == len([f for f in made if f not in own])
    for path in made:
        if path not in own:
            assert any(path.startswith(folder) for folder, _, _ in folders), path
    assert {folder for folder, _, _ in folders} <= {prefix for prefix, _ in FOLDERS}
    for figure in (f for f in made if f.endswith(".png")):
        assert f"| `{figure}` |" in index, figure
    for table in HEADLINE_TABLES:
        assert f"### `{table}`" in index and (results / table).read_text().strip() in index
    # the runs that made the results: the run's id, its command and config files, the software and device
    run = json.loads((results / "provenance/runs.jsonl").read_text().splitlines()[-1])
    assert f"| {run['run']} | {run['started']} |" in index
    assert "`config/config.yaml`, `config/test_experiments.yaml`, `config/models.yaml`" in index
    assert "torch " in index and "Device of the experiments: CPU" in index
    assert "scores.skipped.json" in index and (results / "index.html").read_text().startswith("<!DOCTYPE html>")
