"""One results folder per run: a run's outputs, logs and benchmarks go under the folder its config names
(``results_dir``; the demo keeps ``results/``), so the demo, config/cpu.yaml and config/paper.yaml runs live in
one checkout and none rewrites another's; ``snakemake --directory`` runs the workflow elsewhere. Dry runs of the
shared demo run (nothing it made is touched; tests/workflow/test_experiments.py checks it is complete) and one
small real job under --directory."""

from __future__ import annotations

import re

import pytest

from tests.helpers.workflow import planned_jobs

pytestmark = pytest.mark.workflow

FILE_LINE = re.compile(r"^\s+(output|log|benchmark): (.+)$", re.M)


def written(out: str) -> list[str]:
    """Every file a dry run's jobs would write (outputs, logs, benchmarks)."""
    return [path for _, paths in FILE_LINE.findall(out) for path in paths.split(", ")]


def test_another_config_plans_its_own_folder_beside_the_demo(full_demo_run):
    """After the demo run, a run with another results_dir plans the whole workflow again under its own folder
    (a dry run: nothing of the demo's is touched), and config/cpu.yaml plans under runs/cpu."""
    wf = full_demo_run
    other = wf.run("-n", *wf.args, "--config", "results_dir=runs/other").stdout
    files = written(other)
    assert files and all(f.startswith("runs/other/") for f in files), [f for f in files if not f.startswith("runs/other/")][:5]
    rules = {job.split("[")[0] for job in planned_jobs(other)}
    assert {"healthfc_crawl", "healthfc_translate", "clinifact_fetch_studies", "healthfc_experiment", "clinifact_zero_shot",
            "healthfc_score", "table", "clinifact_fig3", "all"} <= rules  # every stage again, from the crawl on
    assert {f.split("/")[3] for f in files if f.startswith("runs/other/logs/")} >= {"healthfc", "clinifact", "experiments", "scoring"}
    cpu = wf.run("-n", "--cores", "2", "--configfile", "config/cpu.yaml").stdout
    assert all(f.startswith("runs/cpu/") for f in written(cpu)) and len(written(cpu)) > 100


def test_directory_runs_the_workflow_in_another_folder(full_demo_run, tmp_path):
    """``--directory RUN``: the workflow's default config and its shipped resources are found from there; a job
    writes under RUN/results exactly what it writes in the checkout, and nothing in the checkout."""
    wf, run = full_demo_run, tmp_path / "run"
    run.mkdir()
    args = ["--snakefile", str(wf.path("workflow/Snakefile")), "--workflow-profile", str(wf.path("profiles/default")),
            "--directory", str(run), "--cores", "1"]
    out = wf.run(*args, "results/healthfc/release/rows.jsonl", cwd=run)
    assert f"{wf.path('resources/demo/healthfc_release/Datensatz.csv')}" in out.stdout + out.stderr  # read from the workflow
    assert (run / "results/healthfc/release/rows.jsonl").read_bytes() == wf.path("results/healthfc/release/rows.jsonl").read_bytes()
    assert (run / "results/logs/healthfc/release.log").is_file() and not (wf.root / "runs").exists()
