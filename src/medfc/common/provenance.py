"""Where a result came from: the software (:func:`software`, ``provenance/software.yml``), one line per Snakemake
run (:func:`run_record`, ``provenance/runs.jsonl``) and a job's ``info.json`` provenance (:func:`job_record`).
The run id reaches the jobs in :data:`RUN_ENV` (set by the Snakefile)."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import platform
import socket
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TypedDict

from medfc.common.appendlog import append_jsonl
from medfc.common.jsontypes import JSONValue
from medfc.common.redact import redact
from medfc.common.stepfiles import StepFiles

RUN_ENV = "MEDFC_RUN_ID"
RECORDS_ENV = "MEDFC_PROVENANCE_DIR"

#: the distributions whose versions decide what the steps compute (absent ones are recorded as null)
PACKAGES = ("medfc", "snakemake", "torch", "transformers", "tokenizers", "safetensors", "peft", "accelerate", "bitsandbytes",
            "vllm", "sentence-transformers", "scikit-learn", "lightgbm", "numpy", "scipy", "pandas", "pyarrow", "statsmodels",
            "scrapy", "requests", "urllib3", "nltk", "ctranslate2", "sentencepiece", "bm25s", "datasets", "jsonschema",
            "matplotlib")


class SoftwareRecord(TypedDict):
    """Python, the platform and the packages' versions (:func:`software`)."""

    python: str
    implementation: str
    platform: str
    packages: dict[str, str | None]


class JobProvenance(TypedDict):
    """A job's ``info.json`` ``provenance`` (:func:`job_record`)."""

    run: str | None
    runs: str | None
    software: str | None
    device: dict[str, JSONValue]


@functools.cache
def _version(name: str) -> str | None:
    """An installed distribution's version, looked up once per process (the first lookup costs ~0.2 s)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def software(packages: Sequence[str] = PACKAGES) -> SoftwareRecord:
    """Python, the platform and each package's installed version (None: not installed)."""
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "packages": {name: _version(name) for name in packages}}


def new_run_id() -> str:
    """A run's id: its UTC start time and the Snakemake process, e.g. ``20261203T161402Z-4711``."""
    return f"{dt.datetime.now(dt.timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-{os.getpid()}"


def run_record(run_id: str, argv: Sequence[str], workdir: str | os.PathLike, config: Mapping[str, object] | None = None,
               software_record: Mapping[str, object] | None = None) -> dict[str, object]:
    """The record of one run as it starts (its command line redacted)."""
    return {"run": run_id, "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "host": socket.gethostname(), "workdir": str(Path(workdir).resolve()),
            "command": [redact(a) for a in argv], "python": sys.executable,
            "software": dict(software_record) if software_record is not None else None,
            "config": json.loads(json.dumps(config, default=str)) if config is not None else None}


def append_run_record(directory: str | os.PathLike, record: Mapping[str, object], name: str = "runs.jsonl") -> Path:
    """Append ``record`` as one line to ``<directory>/<name>`` (:func:`medfc.common.appendlog.append_jsonl`)."""
    path = Path(directory) / name
    append_jsonl(path, [dict(record)])
    return path


def device_record() -> dict[str, JSONValue]:
    """torch's, CUDA's and cuDNN's versions and the visible GPUs when torch is loaded; empty otherwise."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    out: dict[str, JSONValue] = {"torch": getattr(torch, "__version__", None), "cuda": getattr(torch.version, "cuda", None)}
    try:
        available = bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver is a fact to record, not a failure
        available = False
    out["cuda_available"] = available
    if available:
        out["cudnn"] = torch.backends.cudnn.version()
        out["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return out


def job_record(environ: Mapping[str, str] | None = None) -> JobProvenance:
    """A job's ``info.json`` ``provenance``: the run, where its records are, the device."""
    env = os.environ if environ is None else environ
    directory = env.get(RECORDS_ENV, "")
    return {"run": env.get(RUN_ENV) or None,
            "runs": f"{directory}/runs.jsonl" if directory else None,
            "software": f"{directory}/software.yml" if directory else None,
            "device": device_record()}


def write_software(inputs: StepFiles, outputs: StepFiles, options: Mapping[str, Mapping[str, object]]) -> None:
    """The ``provenance`` rule's step: ``options`` {software} → ``software`` (YAML)."""
    import yaml

    from medfc.common.io import atomic_write

    atomic_write(outputs["software"], yaml.safe_dump(dict(options["software"]), sort_keys=False, allow_unicode=True))
