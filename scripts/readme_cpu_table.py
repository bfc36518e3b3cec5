"""Write the README's CPU table from what a `config/cpu.yaml` run made.

    python scripts/readme_cpu_table.py [RUN_DIR] [--check]

RUN_DIR (default: runs/cpu, config/cpu.yaml's results_dir) must hold the run's CliniFact Table 8
(`tables/clinifact_table8.csv`), its time table (`tables/clinifact_times.csv`) and its provenance records.
The table replaces the block between `<!-- cpu-table ... -->` and `<!-- /cpu-table -->` in README.md; the
block's first line records the code versions of the steps behind the table and a hash of `config/cpu.yaml`'s
settings, so that `tests/unit/common/test_readme.py` fails when the code or the config that made the numbers
changes (then rerun `config/cpu.yaml` and this script). --check: exit 1 when README.md differs from what
RUN_DIR gives.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CPU_CONFIG = REPO / "config" / "cpu.yaml"
BLOCK = re.compile(r"<!-- cpu-table(?P<stamp>[^\n]*?)-->\n(?P<body>.*?)<!-- /cpu-table -->\n", re.S)
# the steps whose code makes the CliniFact rows of config/cpu.yaml (workflow/rules: their `step=versioned(...)`)
STEPS = ("clinifact.steps:import_release", "experiments.steps:pairs_experiment", "experiments.steps:pairs_inner_cv",
         "experiments.steps:ensemble", "scoring.steps:pairs", "tables.steps:clinifact_table8", "tables.steps:clinifact_times")


def step_versions() -> dict[str, str]:
    """Each of :data:`STEPS` with its current code version (``module:function@hash``)."""
    sys.path.insert(0, str(REPO / "src"))
    from medfc.common.codeversion import versioned

    return {spec: versioned(spec).split("@", 1)[1] for spec in STEPS}


def config_hash(path: Path = CPU_CONFIG) -> str:
    """A hash of the settings of ``config/cpu.yaml`` (its parsed data: comments and layout do not count)."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _number(cell: str) -> str:
    return f"{float(cell):.1f}" if cell not in ("", None) else ""


def _seconds(cell: str) -> str:
    if cell in ("", None):
        return ""
    s = float(cell)
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min"


def last_run(run_dir: Path) -> dict[str, object]:
    """The latest record of ``provenance/runs.jsonl`` (the run that made the tables last)."""
    lines = (run_dir / "provenance" / "runs.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[-1]) if lines else {}


def command_configs(command: Sequence[object]) -> list[str]:
    """The ``--configfile`` arguments of a Snakemake command line."""
    out, taking = [], False
    for arg in map(str, command):
        if arg.startswith("-"):
            taking = arg in ("--configfile", "--configfiles")
        elif taking:
            out.append(arg)
    return out


def render(run_dir: Path, versions: Mapping[str, str], config: str) -> str:
    """The block: its stamp line, the table, and the line saying which run made it."""
    table = _rows(run_dir / "tables" / "clinifact_table8.csv")
    times_file = run_dir / "tables" / "clinifact_times.csv"
    cpu = {r["model"]: r["CPU s"] for r in _rows(times_file)} if times_file.is_file() else {}
    lines = ["| CliniFact test split | macro-F1 | 95% CI | accuracy | CPU time |", "| --- | --- | --- | --- | --- |"]
    for r in table:
        if r["source"] == "ours":
            lines.append(f"| `{r['model']}` | {_number(r['macro F1'])} | {r['macro F1 95% CI']} | {_number(r['accuracy'])} "
                         f"| {_seconds(cpu.get(r['model'], ''))} |")
    for r in table:
        if r["source"] != "ours" and r["macro F1"]:
            lines.append(f"| {r['model']}, {r['source']} | {_number(r['macro F1'])} | | {_number(r['accuracy'])} | |")
    run = last_run(run_dir)
    software = run.get("software") or {}
    packages = software.get("packages") or {}
    configs = [a for a in command_configs(run.get("command") or []) if not Path(a).is_absolute()]
    made = (f"Made by a run of {', '.join(f'`{c}`' for c in configs)} (its command and resolved config: "
            f"`{run_dir.as_posix()}/provenance/runs.jsonl`) with medfc {packages.get('medfc')} and torch {packages.get('torch')} "
            f"on {software.get('platform')}; the CPU time (training, prediction and a stack's inner cross-validation) is "
            "that machine's.")
    python = f"{sys.version_info.major}.{sys.version_info.minor}"  # the code versions are this Python's (medfc.common.codeversion)
    stamp = json.dumps({"config": config, "python": python, "steps": dict(versions)}, sort_keys=True)
    return f"<!-- cpu-table {stamp} -->\n" + "\n".join(lines) + "\n\n" + made + "\n<!-- /cpu-table -->\n"


def stale(run: Mapping[str, object]) -> str | None:
    """Why the run's results are not what its command makes with this code (a dry run of that command would run
    jobs, or cannot plan), else None."""
    import subprocess

    command = [str(a) for a in run.get("command") or []]
    if not command:
        return "provenance/runs.jsonl records no command"
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    proc = subprocess.run([snakemake, *command[1:], "-n"], cwd=str(run.get("workdir") or "."), capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return f"a dry run of its command fails: {out.strip().splitlines()[-1] if out.strip() else proc.returncode}"
    return None if "Nothing to be done" in out else "a dry run of its command would run jobs: run it first"


def recorded(readme: str) -> dict[str, object]:
    """The stamp of the README's block: the config hash and the step versions its table was made with."""
    m = BLOCK.search(readme)
    if m is None:
        raise ValueError("README.md has no <!-- cpu-table --> ... <!-- /cpu-table --> block")
    return json.loads(m.group("stamp").strip() or "{}")


def replaced(readme: str, block: str) -> str:
    if BLOCK.search(readme) is None:
        raise ValueError("README.md has no <!-- cpu-table --> ... <!-- /cpu-table --> block")
    return BLOCK.sub(lambda _: block, readme, count=1)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", nargs="?", default="runs/cpu", help="the run's folder (default: runs/cpu)")
    ap.add_argument("--check", action="store_true", help="exit 1 when README.md's table differs from the run's")
    args = ap.parse_args(argv)
    readme = README.read_text(encoding="utf-8")
    run_dir = Path(args.run_dir)
    if not args.check and (why := stale(last_run(run_dir))):
        print(f"{run_dir}: {why}", file=sys.stderr)
        return 1
    new = replaced(readme, render(run_dir, step_versions(), config_hash()))
    if args.check:
        if new != readme:
            print(f"README.md's CPU table differs from what {args.run_dir} made: python scripts/readme_cpu_table.py {args.run_dir}")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    print(f"README.md: CPU table written from {args.run_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
