"""Services some workflow tests use (a SLURM cluster and the executor plugin that submits to it, headless
Chromium): found, never started or installed here.

`scripts/ci/services.sh start` installs and starts them (as root); .ci/run does so before the tests, after
installing the plugin (`MEDFC_SLURM=1 bash scripts/install.sh`).
Without them the tests that need them skip with the reason, unless MEDFC_REQUIRE_SERVICES=1 (set by
.ci/run), where a missing service fails the test: a CI run must not pass by skipping them.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess

import pytest

START_HINT = "start it with `sudo bash scripts/ci/services.sh start` (see README, 'Tests that need services')"


PLUGIN_HINT = "install it with `MEDFC_SLURM=1 bash scripts/install.sh` (docs/slurm.md)"


def unavailable(reason: str, hint: str = START_HINT) -> None:
    """Skip (or fail, when CI requires the services) because a service is missing."""
    message = f"{reason}; {hint}"
    if os.environ.get("MEDFC_REQUIRE_SERVICES") == "1":
        pytest.fail(f"MEDFC_REQUIRE_SERVICES=1 but {message}", pytrace=False)
    pytest.skip(message)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


def slurm_up() -> bool:
    """The controller answers (sinfo) and so does accounting (sacct), which the executor plugin polls
    for job states: without it a run would wait forever."""
    try:
        return all(subprocess.run(cmd, capture_output=True, timeout=20).returncode == 0
                   for cmd in (["sinfo", "-h"], ["sacct", "-n", "-X", "-S", "now"]))
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False


def require_slurm_plugin() -> None:
    """Skip (or fail under MEDFC_REQUIRE_SERVICES=1) where snakemake-executor-plugin-slurm, the package's
    ``slurm`` extra that profiles/slurm names, is not installed."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        unavailable("snakemake-executor-plugin-slurm is not installed", PLUGIN_HINT)
