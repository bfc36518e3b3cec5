"""The wiring of the config check: snakemake itself prints the one line of a config mistake and exits with
status 1, with no traceback and not thousands of lines of schema. Which mistakes give which line is tested
in-process, through the same function the workflow calls (tests/unit/config/test_config_mistakes.py)."""

from __future__ import annotations

import pytest

from tests.helpers.workflow import WorkflowCopy

pytestmark = pytest.mark.workflow


def test_snakemake_prints_the_one_line_and_exits_1(tmp_path):
    """A mistake found while the plan builds the jobs' options (fold 12 of 5), past the schema: one line."""
    wf = WorkflowCopy(tmp_path / "wf")
    wf.path("config/folds.yaml").write_text("experiments:\n  healthfc:\n    folds: [12]\n")
    proc = wf.run("-n", "--cores", "1", "--configfile", "config/test_experiments.yaml", "config/folds.yaml", check=False)
    out = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1, out[-2000:]
    lines = [line for line in out.splitlines() if "workflow specific profile" not in line and "is extended by additional config" not in line]
    assert lines == ["config: experiments.healthfc.folds [12] outside 0..4 (healthfc.folds.n_splits)"], out[-2000:]


def test_a_live_paper_run_without_its_keys_stops_before_any_job(tmp_path):
    """config/live.yaml + config/paper.yaml with no contact, no NCBI_EMAIL and no SERPER_API_KEY: every missing
    prerequisite as one line, exit status 1, on a dry run too, in seconds, before any job runs."""
    wf = WorkflowCopy(tmp_path / "wf")
    env = {k: "" for k in ("NCBI_EMAIL", "SERPER_API_KEY")}
    proc = wf.run("-n", "--cores", "1", "--configfile", "config/live.yaml", "config/paper.yaml", check=False, env=env)
    out = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1, out[-2000:]
    lines = [line for line in out.splitlines() if "workflow specific profile" not in line and "is extended by additional config" not in line]
    assert [line.split(" ")[1] for line in lines] == [
        "healthfc.crawl.contact", "clinifact.pubmed.email", "SERPER_API_KEY", "healthfc.retrieval.pubmed.email"], out[-2000:]
    assert all(line.startswith("prerequisite: ") for line in lines)


def _lines(proc) -> list[str]:
    out = (proc.stdout + proc.stderr).strip()
    return [line for line in out.splitlines() if "workflow specific profile" not in line and "is extended by additional config" not in line]


def test_command_line_values_are_typed_by_the_schema_or_named_in_one_line(tmp_path):
    """Snakemake reads the scalars inside a --config value as strings: a boolean or a number the schema types is
    typed (the run plans), a value of neither kind is one line naming the key and how to write it, exit 1; a
    results_dir that is a file is one line too, before Snakemake looks at a file."""
    wf = WorkflowCopy(tmp_path / "wf")
    base = ("-n", "--cores", "1", "--configfile", "config/test.yaml")
    proc = wf.run(*base, "--config", 'experiments={"keep_checkpoints": true}', 'scoring={"bootstrap": {"n_resamples": 200}}')
    assert proc.returncode == 0
    proc = wf.run(*base, "--config", 'experiments={"keep_checkpoints": yes}', check=False)
    assert proc.returncode == 1 and len(_lines(proc)) == 1, _lines(proc)
    assert _lines(proc)[0].startswith("config: experiments.keep_checkpoints: 'yes' (from --config) is not true or false")
    proc = wf.run(*base, "--config", "results_dir=config/test.yaml", check=False)
    assert proc.returncode == 1 and _lines(proc) == [
        "config: results_dir: 'config/test.yaml' is a file, not a folder; name a folder (it is made when missing)"]
