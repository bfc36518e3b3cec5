"""Command-line entry point.

Every workflow rule calls exactly one *step*: a function ``step(inputs, outputs, options)`` that
lives in the library, e.g. ``medfc.healthfc.steps:crawl``. The rule passes its named inputs and
outputs and a JSON object of options built from its params::

    medfc run healthfc.steps:crawl --in sitemap=... --out pages=... --options '{"delay": 1}' --log LOG

Steps can equally be called by hand or from Python, which is how the tests drive them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from medfc.common.logs import setup_logging

StepFn = Callable[[dict[str, str], dict[str, str], dict[str, Any]], Any]


def resolve_step(spec: str) -> StepFn:
    """Turn ``package.module:function`` (relative to ``medfc``) into the step function."""
    if ":" not in spec:
        raise SystemExit(f"step {spec!r} must look like 'module:function', e.g. 'healthfc.steps:crawl'")
    module_name, func_name = spec.split(":", 1)
    if not module_name.startswith("medfc"):
        module_name = "medfc." + module_name
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


def run_step(
    spec: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    options: dict[str, Any],
    log: str | None = None,
    threads: int = 1,
) -> Any:
    """Resolve and run one step with logging set up; used by the CLI and by workflow/scripts/step.py."""
    setup_logging(log)
    logger = logging.getLogger("medfc.cli")
    step = resolve_step(spec)
    options = dict(options)
    options.setdefault("threads", threads)
    options.setdefault("log_file", log)
    start = time.perf_counter()
    logger.info("step %s started; inputs=%s outputs=%s", spec, inputs, outputs)
    result = step(inputs, outputs, options)
    logger.info("step %s finished in %.1f s", spec, time.perf_counter() - start)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
