"""The CliniFact systems, each declared once (:data:`CLINIFACT_SYSTEMS`) for the plan, the tables and the figure
(tests/unit/plan/test_clinifact_systems.py keeps the workflow's rules equal to them). A light module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from medfc.common.registry import lookup


@dataclass(frozen=True)
class CliniFactSystem:
    """One CliniFact system: ``name`` (its model list's key and its runs' ``system``), its options' ``section`` of
    ``experiments.clinifact``, its runs' ``folder`` under ``<experiments>/clinifact``, its table rows' ``suffix``;
    ``pairs``: the one discriminative path's runs (the pairs_* rules, whose models may be ensembles); ``asks_llm``:
    its options are an LLM client's. Its rules are the plan's functions whose jobs are its models'
    (``medfc.plan.experiments``). ``placement`` (:mod:`medfc.plan.cluster`) and ``resources``
    (:mod:`medfc.plan.resources`: ``model_kind`` or a causal LM's sized row) say where its jobs run."""

    name: str
    title: str
    section: str
    folder: str = ""
    suffix: str = ""
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
        CliniFactSystem("discriminative", section="train", title="discriminative", pairs=True),
        CliniFactSystem("zero_shot", section="zero_shot", title="zero-shot", folder="zero_shot", suffix=" (zero-shot)",
                        asks_llm=True, placement="model", resources="llm"),
        CliniFactSystem("fine_tuned", section="fine_tune", title="fine-tuned", folder="fine_tuned",
                        suffix=" (fine-tuned)", resources="lora"),
    )
}

CLINIFACT_SYSTEM_NAMES = tuple(CLINIFACT_SYSTEMS)  # in the order of the run matrix and the tables' rows
DEFAULT_SYSTEM = "discriminative"  # the system of an entry or a paper's row that names none


def clinifact_system(name: str) -> CliniFactSystem:
    """The system called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(CLINIFACT_SYSTEMS, name, "CliniFact system")


def ensembling_system() -> CliniFactSystem:
    """The system whose models may be ensembles (the one record of the pairs path)."""
    found = [s for s in CLINIFACT_SYSTEMS.values() if s.pairs]
    if len(found) != 1:
        raise ValueError(f"{len(found)} CliniFact systems run ensembles; the ensemble rules' paths have room for one")
    return found[0]


def row_suffixes() -> dict[str, str]:
    """system → what its rows add to the model's alias (the systems whose rows add something)."""
    return {s.name: s.suffix for s in CLINIFACT_SYSTEMS.values() if s.suffix}


def system_of_row(row: str) -> str:
    """The system whose row suffix a table row's name contains, else :data:`DEFAULT_SYSTEM`."""
    return next((name for name, suffix in row_suffixes().items() if suffix.strip() in row), DEFAULT_SYSTEM)
