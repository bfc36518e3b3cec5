"""One part of a plan (:class:`medfc.plan.Plan`): the models, the datasets, HealthFC's experiments, the other
experiments, the tables, the example tables and MedSNIP each hold their own functions and read the others'
as the plan names them (``self.models.model_name(...)``, ``self.healthfc.healthfc_runs()``)."""

from __future__ import annotations

from typing import Any

from medfc.plan.jobs import Config, JobPlan
from medfc.plan.layout import Layout

#: the plan's attributes holding its parts, in the order it builds them
PARTS = ("models", "datasets", "healthfc", "experiments", "tables", "examples", "medsnip", "run")


class Part:
    """A part of ``plan``: its config and layout; the plan's other parts and its own functions (``stage_enabled``,
    ``targets``, …) are read through the plan."""

    config: Config
    layout: Layout

    def __init__(self, plan: JobPlan) -> None:
        self.plan = plan
        self.config = plan.config
        self.layout = plan.layout  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "plan":
            raise AttributeError(name)
        return getattr(self.plan, name)
