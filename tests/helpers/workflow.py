"""Helpers for end-to-end runs of the workflow in a scratch copy of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COPY = ["Snakefile", "workflow", "config", "profiles", "envs", "resources"]


def snakemake_bin() -> str:
    exe = Path(sys.executable).with_name("snakemake")
    return str(exe) if exe.exists() else "snakemake"


class WorkflowCopy:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for name in COPY:
            src = REPO / name
            if src.is_dir():
                shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__"))
            elif src.exists():
                shutil.copy2(src, root / name)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([snakemake_bin(), *args], cwd=self.root, capture_output=True, text=True, timeout=1500)
        if check and proc.returncode != 0:
            raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
        return proc

    def path(self, rel: str) -> Path:
        return self.root / rel
