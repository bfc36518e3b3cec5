"""The options of the figure steps (:mod:`medfc.figures.steps`), in a light module (no pandas): the plan builds
them when Snakemake plans the DAG (:meth:`medfc.plan.Plan.job_options`) and the job receives what it serialised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from medfc.common.options import Options


@dataclass(frozen=True)
class Fig3Options(Options):
    """The CliniFact runs compared (one entry per ``predictions`` file; the plan's pick of
    ``experiments.clinifact.fig3_pair``: ``model``, ``system`` and, for a run shown in place of the one the
    pair names, ``stands_for`` that run's ``model`` and ``system``), ``clinifact.stats.excluded_branches``
    and the plan's notes on the pair (a named run not in the plan and what stands in for it)."""

    entries: tuple[dict[str, Any], ...]
    excluded_branches: tuple[str, ...]
    notes: tuple[str, ...]
