"""The GPUs a job was given by its resources: a job that asked its scheduler for one must not quietly train for
hours on the CPU when torch sees no CUDA device (:func:`no_cuda_error`)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

ENV = "MEDFC_JOB_GPUS"  # the GPUs a scheduler gave the job (set by medfc.cli.run_job in a workflow job)
SCHEDULER_JOB_VARS = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID")  # set inside a SLURM, PBS/Torque or LSF allocation


def gpus_requested(resources: object) -> int:
    """The GPUs a job's resources ask for: ``gpu`` / ``gpus`` / ``nvidia_gpu``, or a SLURM ``gres`` such as
    ``gpu:2`` or ``gpu:a100:1``."""
    get = resources.get if hasattr(resources, "get") else (lambda k, d=None: getattr(resources, k, d))
    for key in ("gpu", "gpus", "nvidia_gpu"):
        value = get(key, None)
        if isinstance(value, (int, float)) and value > 0:
            return int(value)
        if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
            return int(value)
    gres = get("gres", None)
    if isinstance(gres, str):
        m = re.search(r"\bgpu(?::(?!\d+\b)[A-Za-z0-9_.-]+)?(?::(\d+))?", gres)
        if m:
            return int(m.group(1) or 1)
    return 0


def gpus_given(resources: object, environ: Mapping[str, str] | None = None) -> int:
    """The GPUs a job was given: its request inside a scheduler's allocation, 0 on a local run."""
    environ = os.environ if environ is None else environ
    return gpus_requested(resources) if any(environ.get(k) for k in SCHEDULER_JOB_VARS) else 0


def no_cuda_error(what: str, versions: str = "") -> RuntimeError | None:
    """The error for ``device: auto`` without CUDA in a job that asked for a GPU (:data:`ENV`, none outside a
    workflow job), else None (the CPU is fine)."""
    try:
        n = int(os.environ.get(ENV, "0") or 0)
    except ValueError:
        n = 0
    if n <= 0:
        return None
    return RuntimeError(
        f"{what}: this job's resources ask for {n} GPU(s) but no CUDA device is visible{versions} "
        f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}); it would run on the CPU for hours. "
        "Install the CUDA build of torch (scripts/install.sh with MEDFC_TORCH), check the node's driver, or ask no GPU "
        "for it (its model's resources) and set device: cpu")
