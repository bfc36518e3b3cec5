"""The CliniFact systems, each declared once: a registry of small records
(:class:`CliniFactSystem`) that the plan (the run matrix, the config checks, the prerequisites, the jobs that may
run a model, the cluster placement of its rules and its jobs' resources), the tables and the figure look up, so a
system's model list, rules, run folder, placement, resources row and row name are written in one place. Its
rules' functions are the plan's (:data:`medfc.plan.experiments.CLINIFACT_JOBS`; a test keeps its systems those of
the registry but the one pairs path's).

The rules (``workflow/rules/experiments.smk``, ``scoring.smk``) name the same rules and folders; a test
(``tests/unit/plan/test_clinifact_systems.py``) keeps them equal to the records and finds no comparison with a
system's name in the plan or the tables. A light module (no torch, no pandas): the workflow reads it when it
plans the DAG.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from medfc.common.registry import lookup


@dataclass(frozen=True)
class CliniFactSystem:
    """One CliniFact system.

    ``name`` is its model list's key (``models.clinifact.<name>``) and the ``system`` of its runs, their
    predictions and scores. Its options come from ``experiments.clinifact.<section>`` and its overrides
    ``experiments.clinifact.model_<section>[model]``. ``rule`` makes a run's predictions, ``score_rule`` scores
    them and ``ensemble_rule`` combines an ensemble's members' predictions (None: the system runs no ensembles;
    an ensemble's name is a model of its own); ``inner_cv_rule`` makes a stacked ensemble's members' out-of-fold
    predictions (:mod:`medfc.experiments.ensembles.stacking`). ``folder`` is its runs' folder under
    ``<experiments>/clinifact`` (``""``: a run's folder lies there directly); ``title`` names it in messages
    and ``suffix`` is what its rows in the tables and Fig. 3 add to the model's alias (the paper's row names,
    ``llama3-70b (zero-shot)``). ``pairs``: its runs are the one discriminative path's (:mod:`medfc.experiments.pairs`,
    rules with the wildcards ``dataset`` and ``model``, shared with every declared dataset). ``asks_llm``: its options are an LLM client's (backend, endpoint, key
    variable), whose key is checked before the run (:mod:`medfc.plan.prerequisites`).

    Where its jobs run and what they ask for (:mod:`medfc.plan.cluster`, :mod:`medfc.plan.resources`):
    ``placement`` ``compute`` makes ``rule`` (and ``inner_cv_rule``) a training rule, always a cluster job;
    ``model`` makes it a rule that runs a model, a cluster job only when one of its planned models runs in the
    job's process (its section's ``backend``, with the model's overrides: an ``asks_llm`` system's), else it
    runs where Snakemake runs; its score and ensemble rules are light rules. ``resources`` is how a job of
    ``rule`` picks its ``experiments.resources`` row: ``model_kind``, its model's kind's row (``tfidf``,
    ``gbm``, ``frozen``, ``encoder`` or ``encoder_large``), or a sized row of a causal LM (``llm``,
    ``lora``: ``<row>_large`` for a large model), ``server`` instead when its backend calls a server."""

    name: str
    title: str
    section: str
    rule: str
    score_rule: str
    folder: str = ""
    suffix: str = ""
    ensemble_rule: str | None = None
    inner_cv_rule: str | None = None
    asks_llm: bool = False
    pairs: bool = False
    placement: Literal["compute", "model"] = "compute"
    resources: str = "model_kind"

    @property
    def models_key(self) -> str:
        """Its model list in the config."""
        return f"models.clinifact.{self.name}"

    @property
    def overrides(self) -> str:
        """``experiments.clinifact.<overrides>``: one model's keys over ``section``."""
        return f"model_{self.section}"

    def run_dir(self, experiments: str, model: str) -> str:
        """One run's folder: ``<experiments>/clinifact[/<folder>]/<model>``."""
        return "/".join(part for part in (f"{experiments}/clinifact", self.folder, model) if part)


CLINIFACT_SYSTEMS: dict[str, CliniFactSystem] = {
    s.name: s for s in (
        CliniFactSystem("discriminative", section="train", rule="pairs_experiment",
                        score_rule="pairs_score", title="discriminative", ensemble_rule="pairs_ensemble",
                        inner_cv_rule="pairs_inner_cv", pairs=True),
        CliniFactSystem("zero_shot", section="zero_shot", rule="clinifact_zero_shot",
                        score_rule="clinifact_zero_shot_score", title="zero-shot", folder="zero_shot", suffix=" (zero-shot)",
                        asks_llm=True, placement="model", resources="llm"),
        CliniFactSystem("fine_tuned", section="fine_tune", rule="clinifact_fine_tune",
                        score_rule="clinifact_fine_tune_score", title="fine-tuned", folder="fine_tuned", suffix=" (fine-tuned)",
                        resources="lora"),
    )
}

CLINIFACT_SYSTEM_NAMES = tuple(CLINIFACT_SYSTEMS)  # in the order of the run matrix and the tables' rows
DEFAULT_SYSTEM = "discriminative"  # the system of an entry or a paper's row that names none


def clinifact_system(name: str) -> CliniFactSystem:
    """The system called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(CLINIFACT_SYSTEMS, name, "CliniFact system")


def ensembling_system() -> CliniFactSystem:
    """The system whose models may be ensembles (the one record with an ``ensemble_rule``)."""
    found = [s for s in CLINIFACT_SYSTEMS.values() if s.ensemble_rule]
    if len(found) != 1:
        raise ValueError(f"{len(found)} CliniFact systems run ensembles; the ensemble rules' paths have room for one")
    return found[0]


def row_suffixes() -> dict[str, str]:
    """system → what its rows add to the model's alias (the systems whose rows add something)."""
    return {s.name: s.suffix for s in CLINIFACT_SYSTEMS.values() if s.suffix}


def system_of_row(row: str) -> str:
    """The system of a table row named ``row`` (a paper's row, ``Llama3-70B (fine-tuned)``): the first system
    whose suffix (without its leading space) it contains, else :data:`DEFAULT_SYSTEM`."""
    return next((name for name, suffix in row_suffixes().items() if suffix.strip() in row), DEFAULT_SYSTEM)


def record_of_rule(rule: str) -> CliniFactSystem | None:
    """The record whose jobs ``rule`` runs or scores (None: no system's rule)."""
    return next((s for s in CLINIFACT_SYSTEMS.values() if rule in (s.rule, s.score_rule)), None)
