"""What each model job asks its executor for (``gpu``, ``threads``, ``mem_mb``, ``runtime``), by the kind and size
of its model (docs/slurm.md): one row of ``experiments.resources`` (:data:`ROWS`) per job, its model kind's, or for a
CliniFact system the row its record names (``server`` when it calls a server); an inner cross-validation takes its
run's row, ``inner_folds`` times the runtime. A model is ``large`` when its name says so, else ``base``;
``models.resources.<alias>`` sets one alias's size or values. Only :data:`GPU_ROWS` ask for ``experiments.gpu``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from medfc.common.llm_backends import runs_locally
from medfc.experiments.models import options as model_options  # MODEL_CONFIGS read when asked (a kind registered later is one)
from medfc.experiments.clinifact.systems import CliniFactSystem
from medfc.plan.jobs import JobPlan

KEYS = ("gpu", "threads", "mem_mb", "runtime")
ROW_KEYS = ("threads", "mem_mb", "runtime")  # a row's own keys; its GPUs are experiments.gpu or none
LLM_ROWS = ("llm", "llm_large", "lora", "lora_large")  # the sized rows of a causal LM (a CliniFact system's resources)
LARGE_LLM_BILLIONS = 15  # above it a causal LM is large (70B); 7-8B models are base
MODEL_KIND = "model_kind"  # a CliniFact system's resources: its model's kind's row
SMOKE = "smoke"  # experiments.scale of capped runs, whose model jobs ask for one thread


def gpu_rows() -> tuple[str, ...]:
    """The rows that ask for ``experiments.gpu``: each ``gpu`` kind's two sizes, then the causal LMs'."""
    return (*(r for cls in model_options.MODEL_CONFIGS if cls.gpu for r in (cls.kind, f"{cls.kind}_large")), *LLM_ROWS)


def rows() -> tuple[str, ...]:
    """Every row of ``experiments.resources``, in the schema's order."""
    return (*(cls.kind for cls in model_options.MODEL_CONFIGS if not cls.gpu), *gpu_rows(), "server")


GPU_ROWS = gpu_rows()
ROWS = rows()

_LARGE_WORDS = {"large", "xlarge", "xl", "xxl", "xxlarge"}
_BILLIONS = re.compile(r"(?:^|[^A-Za-z0-9.])(\d+(?:\.\d+)?)[bB](?![A-Za-z0-9])")


def name_size(name: str, llm: bool) -> str:
    if llm:
        billions = _BILLIONS.findall(name)  # the parameter count in billions the name gives (gpt-oss-20b: 20)
        return "large" if billions and float(billions[-1]) > LARGE_LLM_BILLIONS else "base"
    return "large" if _LARGE_WORDS & set(re.split(r"[^a-z0-9]+", name.lower())) else "base"


def model_size(plan: JobPlan, alias: str, llm: bool) -> str:
    """An alias's size: its ``models.resources.<alias>.size``, else :func:`name_size` of its model name."""
    own = plan.config["models"]["resources"].get(alias) or {}
    return own.get("size") or name_size(plan.models.model_name(alias), llm)


def _large(row: str, size: str) -> str:
    return f"{row}_large" if size == "large" else row


@dataclass(frozen=True)
class ModelRow:
    """The resources of a rule's model jobs (its record's ``resources``): each job's model kind's row, or with a
    ``system`` whose ``resources`` is not :data:`MODEL_KIND`, that system's sized causal-LM row (``server`` when it
    calls one); ``inner``: a stacked member's inner cross-validation, its run's row with ``inner_folds`` times the
    runtime."""

    system: CliniFactSystem | None = None
    inner: bool = False

    def row(self, plan: JobPlan, alias: str) -> str:
        """The ``experiments.resources`` row of one job of ``alias``."""
        spec = self.system
        if spec is None or spec.resources == MODEL_KIND:
            cls = plan.models.model_class(alias)
            row = _large(cls.kind, model_size(plan, alias, llm=False)) if cls.gpu else cls.kind
            if row not in plan.config["experiments"]["resources"]:
                raise ValueError(f"config: model {alias!r} is of kind {cls.kind}, which has no row in "
                                 f"experiments.resources ({', '.join(plan.config['experiments']['resources'])})")
            return row
        if spec.asks_llm:
            if not runs_locally(plan.experiments._model_section(spec.section, spec.overrides, alias)["backend"]):
                return "server"
        return _large(spec.resources, model_size(plan, alias, llm=True))

    def __call__(self, plan: JobPlan, model: str) -> dict[str, int]:
        """``{gpu, threads, mem_mb, runtime}`` of one job: its row's, then its alias's ``models.resources`` values (not
        for a server job)."""
        ex = plan.config["experiments"]
        row = self.row(plan, model)
        out = {"gpu": ex["gpu"] if row in gpu_rows() else 0, **{k: ex["resources"][row][k] for k in ROW_KEYS}}
        if ex["scale"] == SMOKE:
            out["threads"] = 1
        if row != "server":
            own = plan.config["models"]["resources"].get(model) or {}
            out.update({k: own[k] for k in KEYS if k in own})
        if self.inner:
            out["runtime"] *= ex["stacking"]["inner_folds"]
        return out


KIND_ROW = ModelRow()  # a model job of its model kind's row
INNER_CV = ModelRow(inner=True)  # a stacked member's inner cross-validation


def final_resources(plan: JobPlan, model: str) -> dict[str, int]:
    """A final model's job: its members, each of its kind's row, trained one after the other (the largest of each
    value, the runtimes summed)."""
    each = [KIND_ROW(plan, m) for m in plan.models.members(model)]
    most = {k: max(r[k] for r in each) for k in ("gpu", "threads", "mem_mb")}
    return {**most, "runtime": sum(r["runtime"] for r in each)}


def model_rows(plan: JobPlan) -> dict[str, ModelRow]:
    """rule → its :class:`ModelRow`: every rule whose jobs train or run a model (a final model's aside)."""
    return {s.rule: s.resources for s in plan.job_table.values() if isinstance(s.resources, ModelRow)}
