"""Helpers for end-to-end runs of the workflow in a scratch copy of the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COPY = ["workflow", "config", "profiles", "resources", "src"]  # the Snakefile is workflow/Snakefile
# the workflow profile keeps the terminal quiet (profiles/default: quiet: [rules, host]); the tests read every
# job's block (`rule x:` with its wildcards, `Error in rule x:`), which these arguments bring back
JOB_BLOCKS = ("--quiet=host",)  # one value: "--quiet host target" would read the target as a value too


def snakemake_bin() -> str:
    exe = Path(sys.executable).with_name("snakemake")
    return str(exe) if exe.exists() else "snakemake"


class WorkflowCopy:
    """The workflow and the library's sources copied into ``root``; snakemake runs there with the copy's
    ``src`` first on PYTHONPATH, so the DAG's code versions and every job use the copy's library (a test
    may edit it without touching the checkout)."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for name in COPY:
            src = REPO / name
            if src.is_dir():
                shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
            elif src.exists():
                shutil.copy2(src, root / name)

    def run(self, *args: str, check: bool = True, timeout: float = 1500, env: dict[str, str] | None = None,
            cwd: Path | None = None, terminal: bool = False) -> subprocess.CompletedProcess:
        """``snakemake *args`` in the copy (or in ``cwd``), with ``env`` added to the environment (an empty value
        removes the variable). Every job's block is printed (:data:`JOB_BLOCKS`) unless ``terminal``: then the
        output is what a user's terminal shows."""
        overrides, env = env or {}, dict(os.environ)
        for key, value in overrides.items():
            if value:
                env[key] = value
            else:
                env.pop(key, None)
        # the scorers' offline NLTK data (scripts/install_nltk_data.sh) lives in the checkout, not the copy
        if "NLTK_DATA" not in env and (REPO / ".nltk_data").is_dir():
            env["NLTK_DATA"] = str(REPO / ".nltk_data")
        env["PYTHONPATH"] = os.pathsep.join([str(self.root / "src"), *filter(None, [env.get("PYTHONPATH")])])
        args = args if terminal else (*JOB_BLOCKS, *args)
        proc = subprocess.run([snakemake_bin(), *args], cwd=cwd or self.root, capture_output=True, text=True, timeout=timeout, env=env)
        if check and proc.returncode != 0:
            raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
        return proc

    def path(self, rel: str) -> Path:
        return self.root / rel

    def clone(self, root: Path) -> WorkflowCopy:
        """This copy after its runs (results, caches and Snakemake's records, mtimes kept) at ``root``, for a
        test that edits or reruns it without touching the original; ``args`` come along."""
        shutil.copytree(self.root, root, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        wf = WorkflowCopy.__new__(WorkflowCopy)
        wf.root, wf.args = root, getattr(self, "args", [])
        return wf


def planned_jobs(output: str) -> list[str]:
    """The jobs of a dry run's printout, sorted, as ``rule`` or ``rule[name=value,...]`` (its wildcards)."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", "\n" + output):
        m = re.match(r"\s*(?:local)?rule (\w+):\n", block)
        if not m:
            continue
        wc = re.search(r"^\s+wildcards: (.+)$", block, re.M)
        jobs.append(m.group(1) + (f"[{wc.group(1).replace(' ', '')}]" if wc else ""))
    return sorted(jobs)
