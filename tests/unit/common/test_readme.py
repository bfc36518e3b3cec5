"""The README a researcher reads in minutes: its two commands first, its links real, no project history in it or
in the docs, the config comments and the code, and its CPU table what `config/cpu.yaml` makes with this code
(scripts/readme_cpu_table.py writes it from a run's tables and stamps it with the code and config behind it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from scripts import readme_cpu_table as cpu_table
from tests.helpers.workflow import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
# history: issue numbers, what the code did before, targets met or missed, dates of measurement
HISTORY = re.compile(r"\bissues? #?\d+|\bbefore issue|\bsince issue|\btarget of \d+ .{0,40}\bnot met|\bnot measured again|"
                     r"\bmeasured on 20\d\d-|\bon 20\d\d-\d\d-\d\d at [0-9a-f]{7}|\bat commit `?[0-9a-f]{7}", re.I)


def test_the_readme_is_short_and_opens_with_the_two_commands():
    assert len(README.split()) <= 1500
    first = re.search(r"```bash\n(.*?)```", README, re.S).group(1)
    commands = [line for line in first.splitlines() if line and not line.startswith("#")]
    assert commands == ["bash scripts/install.sh && .venv/bin/snakemake --cores all", ".venv/bin/python -m pytest -q"]


def test_every_file_the_readme_links_exists():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if not target.startswith("http"):
            assert (REPO / target).exists(), target


def _texts():
    yield REPO / "README.md", README
    for path in sorted((REPO / "docs").glob("*.md")):
        yield path, path.read_text(encoding="utf-8")
    for path in sorted((REPO / "config").glob("*.yaml")):
        yield path, "\n".join(line.split("#", 1)[1] for line in path.read_text(encoding="utf-8").splitlines() if "#" in line)
    for folder in ("src", "workflow", "benchmarks", "scripts", "tests", "profiles", ".ci"):
        for path in sorted((REPO / folder).rglob("*")):
            if path.suffix in (".py", ".smk", ".sh", ".yaml", ".rst") or path.name == "Snakefile":
                yield path, path.read_text(encoding="utf-8")


def test_every_benchmark_named_exists_and_every_benchmark_is_named_with_its_question():
    """A script that goes leaves its figures in CHANGELOG.md only; each one that stays has its line in
    docs/CONTRIBUTING.md ("Benchmarks and timings")."""
    missing = sorted({f"{path.relative_to(REPO)}: benchmarks/{name}" for path, text in _texts()
                      for name in re.findall(r"\bbenchmarks/([\w-]+\.(?:py|sh))\b", text)
                      if not (REPO / "benchmarks" / name).is_file()})
    assert not missing, "names of benchmarks that do not exist: " + "; ".join(missing)
    section = (REPO / "docs" / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## Benchmarks and timings\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    unnamed = [p.name for p in sorted((REPO / "benchmarks").iterdir())
               if p.suffix in (".py", ".sh") and f"`benchmarks/{p.name}" not in section]
    assert not unnamed, "benchmarks without their line in docs/CONTRIBUTING.md: " + ", ".join(unnamed)


def test_no_history_outside_the_changelog():
    found = [f"{path.relative_to(REPO)}: {m.group(0)!r}" for path, text in _texts() for m in HISTORY.finditer(text)
             if path.name != "test_readme.py"]
    assert not found, "history belongs in CHANGELOG.md: " + "; ".join(found[:20])


def test_the_cpu_table_is_what_cpu_yaml_makes_with_this_code():
    """The README's table was written from a run of this config with code whose steps have these versions: a
    change to either reruns the table's jobs, so the README must be written again from the new run."""
    stamp = cpu_table.recorded(README)
    if stamp.get("python") not in (None, f"{sys.version_info.major}.{sys.version_info.minor}"):
        pytest.skip(f"the table's code versions are Python {stamp['python']}'s")
    assert stamp.get("config") == cpu_table.config_hash(), \
        "config/cpu.yaml's settings changed: run it and then `python scripts/readme_cpu_table.py runs/cpu`"
    changed = {s for s, v in cpu_table.step_versions().items() if (stamp.get("steps") or {}).get(s) != v}
    assert not changed, f"the code of {sorted(changed)} changed: run config/cpu.yaml, then `python scripts/readme_cpu_table.py runs/cpu`"


def test_the_cpu_table_is_written_from_the_runs_tables(tmp_path):
    run = tmp_path / "runs" / "cpu"
    (run / "tables").mkdir(parents=True)
    (run / "provenance").mkdir()
    (run / "tables" / "clinifact_table8.csv").write_text(
        "source,scale,model,system,n,accuracy,macro P,macro R,macro F1,macro F1 95% CI\n"
        "ours,cpu,tfidf,discriminative,301.0,70.8,64.0,63.9,63.9,58.4–69.0\n"
        "ours,cpu,tfidf+gbm,discriminative,301.0,75.6,70.0,69.3,69.6,64.2–74.5\n"
        "paper (Zhang et al. 2025),paper,BioBERT,discriminative,,80.2,,,74.7,\n"
        "paper (Zhang et al. 2025),paper,RoBERTa,discriminative,,75.4,,,,\n", encoding="utf-8")
    (run / "tables" / "clinifact_times.csv").write_text(
        "model,system,jobs,wall s,CPU s,own wall s,own CPU s,members\ntfidf,discriminative,1,11.2,10.9,11.2,10.9,\n"
        "tfidf+gbm,discriminative,1,400,355.0,1.0,1.0,\"tfidf, gbm\"\n", encoding="utf-8")
    record = {"command": ["snakemake", "--cores", "2", "--configfile", "config/cpu.yaml", "/tmp/local-release.yaml"],
              "software": {"platform": "Linux-x86_64", "packages": {"medfc": "0.1.0", "torch": "2.13.0+cpu"}}}
    (run / "provenance" / "runs.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    block = cpu_table.render(run, {"experiments.steps:ensemble": "abc"}, "c0ffee")
    lines = block.splitlines()
    assert json.loads(lines[0][len("<!-- cpu-table "):-len(" -->")]) == {
        "config": "c0ffee", "python": f"{sys.version_info.major}.{sys.version_info.minor}", "steps": {"experiments.steps:ensemble": "abc"}}
    assert lines[1:6] == ["| CliniFact test split | macro-F1 | 95% CI | accuracy | CPU time |", "| --- | --- | --- | --- | --- |",
                          "| `tfidf` | 63.9 | 58.4–69.0 | 70.8 | 11 s |", "| `tfidf+gbm` | 69.6 | 64.2–74.5 | 75.6 | 6 min |",
                          "| BioBERT, paper (Zhang et al. 2025) | 74.7 | | 80.2 | |"]
    assert "Made by a run of `config/cpu.yaml` (its command and resolved config: " in block and block.endswith("<!-- /cpu-table -->\n")
    written = cpu_table.replaced("intro\n<!-- cpu-table -->\n<!-- /cpu-table -->\nrest\n", block)
    assert written == "intro\n" + block + "rest\n" and cpu_table.replaced(written, block) == written


def test_the_script_refuses_a_run_its_command_would_change(tmp_path):
    """A run whose recorded command cannot plan (here: its config file is gone) is refused, README untouched."""
    run = tmp_path / "run"
    (run / "provenance").mkdir(parents=True)
    (run / "provenance" / "runs.jsonl").write_text(json.dumps(
        {"command": ["snakemake", "--configfile", str(tmp_path / "gone.yaml")], "workdir": str(REPO)}) + "\n")
    before = README
    proc = subprocess.run([sys.executable, str(REPO / "scripts/readme_cpu_table.py"), str(run)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1 and "a dry run of its command fails" in proc.stderr
    assert (REPO / "README.md").read_text(encoding="utf-8") == before
