"""One part of a plan (:class:`medfc.plan.Plan`): each part holds its own functions and reads the others' and the
plan's through the plan (``self.models.model_name(...)``, ``self.stage_enabled(...)``)."""

from __future__ import annotations

from typing import Any

from medfc.plan.jobs import Config, JobPlan
from medfc.plan.layout import Layout

#: the plan's attributes holding its parts, in the order it builds them
PARTS = ("models", "datasets", "healthfc", "experiments", "tables", "examples", "medsnip", "run")


class Part:
    config: Config
    layout: Layout

    def __init__(self, plan: JobPlan) -> None:
        self.plan = plan
        self.config = plan.config
        self.layout = plan.layout

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "plan":
            raise AttributeError(name)
        return getattr(self.plan, name)

    def papers_inputs(self) -> dict[str, str]:
        """The inputs of a job that reads only the papers' numbers (its table or statistics put ours beside them)."""
        return {"papers": self.models.papers}
