"""Command-line entry point.

Every workflow rule calls exactly one *step*: a function ``step(inputs, outputs, options)`` in the
``steps`` module of its stage, e.g. ``medfc.healthfc.steps:crawl``. The rule passes its named inputs
and outputs and the options (its config section) from its params; ``options`` is annotated with a
frozen :class:`medfc.common.options.Options` subclass, built here from the mapping, so a missing or
unknown key stops the step naming the key. A step that also takes ``runtime`` gets a
:class:`medfc.common.options.Runtime` (threads, log file)::

    medfc run healthfc.steps:parse --in pages=... --out articles=... --options '{}' --log LOG

Steps can equally be called by hand or from Python, which is how the tests drive them.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import logging
import sys
import time
import typing
from collections.abc import Callable, Sequence
from typing import Any

from medfc.common.codeversion import StepNotFound, split_spec
from medfc.common.logs import setup_logging
from medfc.common.options import Options, Runtime

StepFn = Callable[..., Any]


def resolve_step(spec: str) -> StepFn:
    """Turn ``package.module:function[@version]`` (relative to ``medfc``) into the step function."""
    try:
        module_name, func_name = split_spec(spec)
    except StepNotFound as exc:
        raise SystemExit(str(exc)) from None
    module = importlib.import_module(module_name)
    try:
        return getattr(module, func_name)
    except AttributeError:
        raise SystemExit(f"step {spec!r}: module {module_name} has no function {func_name!r}") from None


def _pairs(values: Sequence[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        if "=" not in item:
            raise SystemExit(f"{flag} expects name=path, got {item!r}")
        key, value = item.split("=", 1)
        out[key] = value
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="medfc", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one workflow step")
    run.add_argument("step", help="module:function relative to the medfc package")
    run.add_argument("--in", dest="inputs", action="append", metavar="NAME=PATH")
    run.add_argument("--out", dest="outputs", action="append", metavar="NAME=PATH")
    run.add_argument("--options", default="{}", help="JSON object of step options")
    run.add_argument("--log", default=None, help="log file (the rule's log)")
    args = parser.parse_args(argv)

    try:
        options = json.loads(args.options)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"--options is not valid JSON: {exc}") from None
    run_step(args.step, _pairs(args.inputs, "--in"), _pairs(args.outputs, "--out"), options, log=args.log)
    return 0


def step_arguments(step: StepFn, options: Any, runtime: Runtime) -> tuple[Any, dict[str, Any]]:
    """The typed options object for ``step`` (from its ``options`` annotation) and extra keyword
    arguments (``runtime`` when the step takes it)."""
    hint = typing.get_type_hints(step).get("options")
    if isinstance(hint, type) and issubclass(hint, Options):
        options = hint.from_mapping(options, where="options")
    extra = {"runtime": runtime} if "runtime" in inspect.signature(step).parameters else {}
    return options, extra


def run_step(
    spec: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    options: Any,
    log: str | None = None,
    threads: int = 1,
) -> Any:
    """Resolve and run one step with logging set up; used by the CLI and by workflow/scripts/step.py."""
    setup_logging(log)
    logger = logging.getLogger("medfc.cli")
    step = resolve_step(spec)
    options, extra = step_arguments(step, options, Runtime(threads=threads, log_file=log))
    start = time.perf_counter()
    logger.info("step %s started; inputs=%s outputs=%s", spec, inputs, outputs)
    result = step(inputs, outputs, options, **extra)
    logger.info("step %s finished in %.1f s", spec, time.perf_counter() - start)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
