"""Command-line entry point (``medfc run|predict|rocrate``) and the runner of workflow steps: every rule calls one
step ``step(inputs, outputs, options[, runtime])`` of its stage's ``steps`` module, ``options`` built here into the
step's annotated :class:`medfc.common.options.Options` subclass (a missing or unknown key stops it naming the key).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import inspect
import json
import logging
import os
import sys
import time
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from medfc import __version__
from medfc.common.codeversion import StepNotFound, split_spec
from medfc.common.io import remove_orphaned_temps
from medfc.common.job import ENV as JOB_GPUS_ENV
from medfc.common.job import gpus_given
from medfc.common.logs import failure_summary, output_into, setup_logging
from medfc.common.options import Options, Runtime
from medfc.common.stepfiles import StepFiles

# a step: step(inputs, outputs, options[, runtime]); what it returns (a summary, or None) goes back to its caller
StepFn = Callable[..., object]
# a step's options as handed over: the rule's mapping (JSON), or the typed object already built
StepOptions = Mapping[str, object] | Options

# libraries that cost a second or more of a job's CPU to import: the log of every step names those it loaded,
# so a job that loads one it does not use shows (tests/unit/common/test_job_imports.py, test_experiments.py)
HEAVY_LIBRARIES = ("torch", "transformers", "sklearn", "scipy", "statsmodels", "requests", "matplotlib", "pandas", "scrapy",
                   "sentence_transformers", "ctranslate2", "peft", "nltk")


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
    """The command line. ``medfc run`` expects the process to exit after the step (from Python, call
    :func:`run_step` instead)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="medfc", formatter_class=raw,
        description="medfc: the library behind the workflow (run it with snakemake; see the README). From the command "
                    "line: apply a model a run kept to new claims, package a finished run as an RO-Crate, or run one "
                    "workflow step by hand.",
        epilog="examples:\n"
               "  medfc predict --model-dir results/final/clinifact/tfidf+gbm --input claims.csv --output predictions.jsonl\n"
               "  medfc rocrate --results-dir results --output results-crate.zip\n"
               "  medfc run healthfc.steps:stats --in dataset=results/healthfc/dataset/healthfc.jsonl --out ... --options '{}'\n"
               "\n'medfc COMMAND --help' says more about each.")
    parser.add_argument("--version", action="version", version=f"medfc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser(
        "run", formatter_class=raw, help="run one workflow step by hand, as its rule would",
        description="Run one step, the function a rule calls (medfc.<stage>.steps:<function>), with the rule's named "
                    "inputs and outputs and its options as JSON (the rule's params; `snakemake --list-params-changes` and "
                    "the job's log show them). With --log the step's output goes into that file, as in a workflow job.",
        epilog="example:\n  medfc run healthfc.steps:folds --in dataset=results/healthfc/dataset/healthfc.jsonl \\\n"
               "      --out folds=/tmp/folds.csv --out report=/tmp/folds.json --options "
               "'{\"n_splits\": 5, \"scheme\": \"grouped\", \"seed\": 42}'")
    run.add_argument("step", help="module:function relative to the medfc package, e.g. healthfc.steps:parse")
    run.add_argument("--in", dest="inputs", action="append", metavar="NAME=PATH", help="a named input (repeat for each)")
    run.add_argument("--out", dest="outputs", action="append", metavar="NAME=PATH", help="a named output (repeat for each)")
    run.add_argument("--options", default="{}", help="the step's options as a JSON object")
    run.add_argument("--log", default=None, help="write everything the step prints into this file (the rule's log)")
    pred = sub.add_parser(
        "predict", formatter_class=raw, help="apply a model a training run kept to new claims",
        description="Apply a model kept by a training run (experiments.keep_checkpoints), or a kept ensemble of such "
                    "models, to a JSONL, CSV or Parquet file of new claims (the workflow's CliniFact pairs and HealthFC "
                    "dataset are read as they are); writes one JSON line per claim: id, label, probabilities (HealthFC "
                    "pipeline and joint: also evidence_ids, the sentences selected from the row's sentences). Exits with "
                    "status 1 when it predicts no row.",
        epilog="example (a row of experiments.final, kept in <results_dir>/final/<dataset>/...):\n"
               "  medfc predict --model-dir results/final/clinifact/tfidf+gbm \\\n"
               "      --input results/clinifact/pairs/test_set.csv --output predictions.jsonl")
    pred.add_argument("--model-dir", required=True, help="the kept model's directory (its medfc_model.json, or LoRA adapters), or a kept ensemble's")
    pred.add_argument("--input", required=True, help="claims as JSONL, CSV (.csv) or Parquet (.parquet)")
    pred.add_argument("--output", required=True, help="predictions (JSONL)")
    pred.add_argument("--device", default="auto", help="auto (CUDA when there is one), cpu, cuda or cuda:N")
    pred.add_argument("--batch-size", type=int, default=16, help="claims per batch (default 16)")
    pred.add_argument("--base-model", default=None, help="LoRA adapters: the base model (default: the one they were trained on)")
    pred.add_argument("--max-prompt-tokens", type=int, default=None, help="LoRA adapters: the prompt's budget (default: as trained)")
    pred.add_argument("--report", default=None, help="also write the summary (rows predicted, skipped by reason) as JSON here")
    pred.add_argument("--verbose", action="store_true", help="log progress (and the traceback of an error)")
    crate = sub.add_parser(
        "rocrate", formatter_class=raw, help="package a finished run as a Workflow Run RO-Crate",
        description="Describe a finished run's results folder as a Workflow Run RO-Crate (RO-Crate 1.1, built with "
                    "ro-crate-py): its files with their media types, the workflow (Bioschemas ComputationalWorkflow), one "
                    "CreateAction per run of provenance/runs.jsonl with its start, end, status and agent, the software, "
                    "licence, citation and a README. By default the crate is the results folder itself "
                    "(ro-crate-metadata.json, README.md and the workflow's files are written into it).",
        epilog="examples:\n  medfc rocrate --results-dir results\n  medfc rocrate --results-dir runs/cpu --output cpu-crate.zip\n"
               "  medfc rocrate --results-dir results --agent 'Given Family' --agent-id https://orcid.org/0000-0002-1825-0097")
    crate.add_argument("--results-dir", required=True, help="the run's results folder (results_dir: results/ for the demo)")
    crate.add_argument("--output", default=None, help="a .zip to write the crate into, or another folder (default: the results folder)")
    crate.add_argument("--workflow-dir", default=None, help="the workflow/ folder (default: the one of the checkout medfc is imported from)")
    crate.add_argument("--agent", default=None, help="who ran the runs, a person's name: each run's agent and the crate's author")
    crate.add_argument("--agent-id", default=None, help="the agent's identifier, an absolute URI such as an ORCID (https://orcid.org/...)")
    args = parser.parse_args(argv)
    if args.command == "predict":
        from medfc.experiments.final import predict

        return predict.main(args)
    if args.command == "rocrate":
        from medfc import rocrate

        return rocrate.main(args)

    try:
        options = json.loads(args.options)
    except json.JSONDecodeError as exc:
        raise SystemExit(f"--options is not valid JSON: {exc}") from None
    run_job(args.step, _pairs(args.inputs, "--in"), _pairs(args.outputs, "--out"), options, log=args.log)
    return 0


def step_arguments(step: StepFn, options: StepOptions, runtime: Runtime) -> tuple[StepOptions, dict[str, Runtime]]:
    """The typed options object for ``step`` (from its ``options`` annotation) and ``runtime`` when it takes one."""
    hint = typing.get_type_hints(step).get("options")
    if isinstance(hint, type) and issubclass(hint, Options):
        options = hint.from_mapping(options, where="options")
    extra = {"runtime": runtime} if "runtime" in inspect.signature(step).parameters else {}
    return options, extra


def failing_file(exc: BaseException) -> str | None:
    """The file an exception (or one of its causes) says it was reading: its ``path`` or ``filename``."""
    seen: set[int] = set()
    err: BaseException | None = exc
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        for attr in ("path", "filename"):
            value = getattr(err, attr, None)
            if isinstance(value, (str, os.PathLike)) and str(value):
                return os.fspath(value)
        err = err.__cause__ or err.__context__
    return None


def snakemake_job() -> object | None:
    """The job's ``Snakemake`` object (bound in ``__main__``) when this process is a Snakemake ``script:`` job."""
    job = getattr(sys.modules.get("__main__"), "snakemake", None)
    return job if type(job).__name__ == "Snakemake" and hasattr(job, "params") and hasattr(job, "output") else None


def job_label(job: object | None, spec: str) -> str:
    """How a failure names its job: ``rule <rule>`` with its wildcards in a Snakemake job, else ``step <spec>``."""
    rule = getattr(job, "rule", None)
    if not rule:
        return f"step {spec.split('@', 1)[0]}"
    wildcards = dict(getattr(job, "wildcards", {}) or {})
    return f"rule {rule}" + (f" ({', '.join(f'{k}={v}' for k, v in wildcards.items())})" if wildcards else "")


def run_step(spec: str, inputs: StepFiles, outputs: StepFiles, options: StepOptions, log: str | None = None, threads: int = 1) -> object:
    """Resolve and run one step with logging set up; a failure is logged with its traceback and the file it was
    reading, then raised again. In a Snakemake job it runs under :func:`job_process`."""
    if snakemake_job() is not None:
        return run_job(spec, inputs, outputs, options, log=log, threads=threads)
    return _run_step(spec, inputs, outputs, options, log, threads)


def output_paths(outputs: StepFiles) -> list[str]:
    """Every path of a job's named outputs (one path or a list each)."""
    return [str(v) for value in outputs.values() for v in ([value] if isinstance(value, (str, os.PathLike)) else value or [])]


def _run_step(spec: str, inputs: StepFiles, outputs: StepFiles, options: StepOptions, log: str | None,
              threads: int, job: bool = False) -> object:
    setup_logging(None if job and log else log)  # a job's stderr is its log already (run_job)
    logger = logging.getLogger("medfc.cli")
    if job:
        logger.info("a workflow job: garbage collection for a process that exits after its step (job_process)")
        if os.environ.get(JOB_GPUS_ENV, "0") not in ("", "0"):
            logger.info("its resources ask for %s GPU(s): device auto must find CUDA", os.environ[JOB_GPUS_ENV])
        orphans = remove_orphaned_temps(output_paths(outputs))
        if orphans:
            logger.info("removed %d temporary file(s) a killed run of this job left beside its outputs: %s", len(orphans),
                        ", ".join(str(o) for o in orphans[:5]))
    start = time.perf_counter()
    try:
        step = resolve_step(spec)
        options, extra = step_arguments(step, options, Runtime(threads=threads, log_file=log))
        logger.info("step %s started; inputs=%s outputs=%s", spec, inputs, outputs)
        result = step(inputs, outputs, options, **extra)
    except SystemExit as exc:  # a step that cannot be resolved says why in one line
        if exc.code not in (None, 0):
            logger.error("step %s: %s", spec, exc.code)
        raise
    except BaseException as exc:
        where = failing_file(exc)
        logger.exception("step %s failed%s after %.1f s: %s: %s", spec, f" while reading {where}" if where else "",
                         time.perf_counter() - start, type(exc).__name__, exc)
        raise
    logger.info("step %s finished in %.1f s; heavy libraries loaded: %s", spec, time.perf_counter() - start,
                ", ".join(name for name in HEAVY_LIBRARIES if name in sys.modules) or "none")
    return result


# the youngest generation's threshold while a job runs (CPython's default is 700 allocations)
JOB_GC_THRESHOLD = 100_000


@contextmanager
def job_process() -> Iterator[None]:
    """Garbage collection for a process that runs one step and then exits: the threshold is
    :data:`JOB_GC_THRESHOLD` meanwhile (importing torch makes about a million objects), and ``gc.freeze()`` at the
    end spares the collection over every live object at exit. Not for a process that goes on after the step."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], JOB_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.freeze()


def run_job(spec: str, inputs: StepFiles, outputs: StepFiles, options: StepOptions, log: str | None = None,
            threads: int = 1) -> object:
    """:func:`run_step` in a process that exits after it, under :func:`job_process`. With a log, all output goes
    into it and the terminal shows only a failure (its summary; exit status 1)."""
    job = snakemake_job()
    if job is not None:  # the GPUs a scheduler gave it: device auto must then find CUDA (medfc.common.job)
        os.environ[JOB_GPUS_ENV] = str(gpus_given(getattr(job, "resources", None) or {}))
    if not log:
        with job_process():
            return _run_step(spec, inputs, outputs, options, log, threads, job=True)
    start = time.perf_counter()
    with output_into(log) as terminal:
        try:
            with job_process():
                return _run_step(spec, inputs, outputs, options, log, threads, job=True)
        except (Exception, SystemExit) as exc:
            if isinstance(exc, SystemExit) and exc.code in (None, 0):
                raise
            logging.shutdown()  # every record written before the log's tail is read
            terminal.write(failure_summary(job_label(job, spec), exc, log, time.perf_counter() - start, failing_file(exc)))
    raise SystemExit(1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
