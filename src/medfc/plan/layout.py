"""Where one run's files go: every output, log and benchmark under the folder its config names
(``results_dir``; the demo keeps ``results/``), so the demo, a CPU run and a paper run live side by side in one
checkout and none rewrites another's. Caches keyed by content (``cache_dir``: crawled pages, HTTP answers, the
translation memory, embeddings) stay shared between runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from medfc.common.sources import is_url

PAPERS = "resources/papers/numbers.yaml"  # the papers' numbers beside ours in every table (shipped with the workflow)


class Layout:
    """The folders of one run, all below :attr:`results` (relative paths are relative to the working directory):
    every job's log, benchmark file (wall and CPU seconds, memory) and output, and its provenance records."""

    def __init__(self, results: str = "results") -> None:
        self.results = results.rstrip("/") or "."
        self.provenance, self.logs, self.timings = self.under("provenance"), self.under("logs"), self.under("timings")
        self.experiments, self.experiment_timings = self.under("experiments"), self.under("timings/experiments")
        self.tables, self.figures, self.medsnip = self.under("tables"), self.under("figures"), self.under("medsnip")
        self.evidence = self.under("healthfc/evidence")
        self.healthfc_dataset = self.under("healthfc/dataset/healthfc.jsonl")  # the dataset file, read by many rules

    def under(self, sub: str) -> str:
        return f"{self.results}/{sub}"


def workflow_file(path: str, base_dir: str | os.PathLike[str] | None) -> str:
    """A path the workflow ships (``resources/...``), as given when it exists from the working directory, else
    below ``base_dir`` (the workflow's checkout: ``snakemake --directory RUN`` and a deployed module run elsewhere)."""
    if base_dir is None or os.path.isabs(path) or os.path.exists(path):
        return path
    shipped = Path(base_dir) / path
    return str(shipped) if shipped.exists() else path


def rebase_shipped_paths(config: Any, base_dir: str | os.PathLike[str] | None) -> None:
    """Every string of the config that names a shipped file or folder (``resources/...``) that the working
    directory lacks, made absolute below ``base_dir``, in place; other paths stay relative to the run."""
    if base_dir is None:
        return
    items = config.items() if isinstance(config, dict) else enumerate(config) if isinstance(config, list) else ()
    for key, value in list(items):
        if isinstance(value, str) and value.startswith("resources/"):
            config[key] = workflow_file(value, base_dir)
        elif isinstance(value, (dict, list)):
            rebase_shipped_paths(value, base_dir)


def release_split_files(src: str) -> dict[str, str]:
    """A local CliniFact release directory → its three CSVs by split; a URL (downloaded into the cache) → {}."""
    if is_url(src):
        return {}
    return {split: f"{src.rstrip('/')}/{split}_set.csv" for split in ("train", "validation", "test")}


def tables_and_figures(files: list[str]) -> tuple[list[str], list[str]]:
    """The tables among a run's files (each CSV beside its LaTeX, not a figure's data), folder by folder in the order
    the folders first come, and its figures (PNG), in the files' order."""
    have = set(files)
    figures = [f for f in files if f.endswith(".png")]
    drawn = {Path(f).stem for f in figures}
    tables = [f for f in files if f.endswith(".csv") and f"{f[:-4]}.tex" in have and Path(f).stem not in drawn]
    order = {folder: i for i, folder in enumerate(dict.fromkeys(os.path.dirname(f) for f in files))}
    return sorted(tables, key=lambda f: order[os.path.dirname(f)]), figures
