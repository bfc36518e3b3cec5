"""The config schema's defaults, for tests that call a step directly as a rule would.

A step's options have no defaults of their own (they live in workflow/schemas/config.schema.yaml only),
so a test builds them from the schema's defaults of a config section plus what it changes, exactly as
the rule passes the validated section.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from snakemake.utils import validate

from medfc.cli import step_arguments
from medfc.common.options import Runtime
from tests.helpers.workflow import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@cache
def _defaults() -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    validate(cfg, str(SCHEMA), set_default=True)
    return cfg


def defaults() -> dict[str, Any]:
    """The whole config as the schema fills it in for an empty config file."""
    return copy.deepcopy(_defaults())


def section(path: str, **overrides: Any) -> dict[str, Any]:
    """One config section (``"clinifact.pairs"``) with its defaults, updated with ``overrides``."""
    node: Any = defaults()
    for key in path.split("."):
        node = node[key]
    return {**node, **overrides}


def call_step(step, inputs: dict[str, Any], outputs: dict[str, Any], options: Any, threads: int = 1, **kwargs: Any) -> Any:
    """Call a step as ``medfc run`` does: typed options built from the mapping (missing or unknown keys
    raise), ``runtime`` given when the step takes it; ``kwargs`` go to the step as they are."""
    options, extra = step_arguments(step, options, Runtime(threads=threads, log_file=None))
    return step(inputs, outputs, options, **extra, **kwargs)
