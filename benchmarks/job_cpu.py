"""CPU seconds of one experiment job of each kind, as the workflow runs it (a fresh process calling the
runner, ``medfc.cli.run_step``, as workflow/scripts/step.py does; options from the plan of
config/config.yaml), for two checkouts paired in one run.

    python benchmarks/job_cpu.py --before /path/to/other/checkout [--data DIR] [--repeat 3]

Each checkout's own ``src`` is put first on PYTHONPATH and its own plan builds the job's options (the
option layout may differ between them); both read the same inputs, the outputs of a finished demo run
under ``--data`` (default: this checkout). The kinds: HealthFC TF-IDF (oracle, pipeline, retrieved_web),
HealthFC all-MiniLM (oracle), CliniFact TF-IDF, GBM and all-MiniLM, an ensemble. The two checkouts take
turns, ``--repeat`` times; the table has each kind's median CPU seconds (user + system of the job's
process) before and after, the ratio, and the heavy modules each job loaded after (torch, transformers,
scikit-learn, requests).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# kind → (step, the plan call that builds its options, its inputs under the data directory)
HFC = {"dataset": "results/healthfc/dataset/healthfc.jsonl", "folds": "results/healthfc/folds/folds.csv"}
CF = {s: f"results/clinifact/pairs/{s}_set.csv" for s in ("train", "validation", "test")}
KINDS = {
    "healthfc tfidf oracle": ("healthfc_experiment", "plan.healthfc_experiment_options('en', 'tfidf', 'oracle', 0)", HFC),
    "healthfc tfidf pipeline": ("healthfc_experiment", "plan.healthfc_experiment_options('en', 'tfidf', 'pipeline', 0)", HFC),
    "healthfc tfidf retrieved_web": ("healthfc_experiment", "plan.healthfc_experiment_options('en', 'tfidf', 'retrieved_web', 0)",
                                     {**HFC, "evidence": "results/healthfc/evidence/web.jsonl"}),
    "healthfc minilm oracle": ("healthfc_experiment", "plan.healthfc_experiment_options('en', 'minilm', 'oracle', 0)", HFC),
    "clinifact tfidf": ("pairs_experiment", "plan.pairs_experiment_options("clinifact", 'tfidf')", CF),
    "clinifact gbm": ("pairs_experiment", "plan.pairs_experiment_options("clinifact", 'gbm')", CF),
    "clinifact minilm": ("pairs_experiment", "plan.pairs_experiment_options("clinifact", 'minilm')", CF),
    "ensemble": ("ensemble", "plan.ensemble_options('tfidf+gbm')",
                 {"predictions": ["results/experiments/clinifact/tfidf/predictions.jsonl", "results/experiments/clinifact/gbm/predictions.jsonl"]}),
}
HEAVY = ("torch", "transformers", "sklearn", "requests")

OPTIONS = """
import json, sys, yaml
from snakemake.utils import validate
from medfc.plan import Plan
config = yaml.safe_load(open(sys.argv[1] + "/config/config.yaml"))
validate(config, sys.argv[1] + "/workflow/schemas/config.schema.yaml", set_default=True)
plan = Plan(config)
print(json.dumps({k: (o.to_mapping() if hasattr(o := eval(call), 'to_mapping') else o) for k, call in json.loads(sys.argv[2]).items()}))  # an options object or a mapping
"""

# the job as workflow/scripts/step.py runs it (the runner with named inputs, lists too), then the heavy modules it loaded
JOB = """
import json, sys
from medfc.cli import run_step
spec, inputs, outputs, options = json.loads(sys.argv[2])
run_step(spec, inputs, outputs, options)
print("HEAVY", [m for m in sys.argv[1].split(",") if m in sys.modules])
"""


def env_for(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout / "src"), "TQDM_DISABLE": "1"}


def options_of(checkout: Path) -> dict[str, dict]:
    calls = {k: call for k, (_, call, _) in KINDS.items()}
    out = subprocess.run([sys.executable, "-c", OPTIONS, str(checkout), json.dumps(calls)], env=env_for(checkout), cwd=checkout,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run_job(checkout: Path, kind: str, options: dict, data: Path, out: Path) -> tuple[float, list[str]]:
    step, _, inputs = KINDS[kind]
    named = {k: str(data / v) if isinstance(v, str) else [str(data / p) for p in v] for k, v in inputs.items()}
    job = [f"experiments.steps:{step}", named, {"predictions": str(out / "predictions.jsonl"), "info": str(out / "info.json")}, options]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", JOB, ",".join(HEAVY), json.dumps(job)], env=env_for(checkout), cwd=checkout, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{checkout}: {kind} failed:\n{proc.stderr[-3000:]}")
    heavy = eval(next(line for line in proc.stdout.splitlines() if line.startswith("HEAVY")).split(" ", 1)[1])
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), heavy


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the checkout to compare with (e.g. a git worktree)")
    ap.add_argument("--after", default=str(ROOT), help="the checkout measured after (default: this one)")
    ap.add_argument("--data", default=str(ROOT), help="the folder of a finished demo run (results/...)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kinds", default="", help="comma-separated subset of the kinds")
    args = ap.parse_args()
    checkouts = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    kinds = [k for k in KINDS if not args.kinds or k in args.kinds.split(",")]
    options = {name: options_of(path) for name, path in checkouts.items()}
    cpu: dict[tuple[str, str], list[float]] = {}
    heavy: dict[tuple[str, str], list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for kind in kinds:
                for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
                    out = Path(tmp) / name / kind.replace(" ", "_")
                    out.mkdir(parents=True, exist_ok=True)
                    seconds, loaded = run_job(checkouts[name], kind, options[name][kind], Path(args.data), out)
                    cpu.setdefault((kind, name), []).append(seconds)
                    heavy[(kind, name)] = loaded
                    print(f"  {r}: {kind:<30} {name:<6} {seconds:6.2f} s CPU  {loaded}", file=sys.stderr, flush=True)
    print(f"{'job kind':<30} {'before s':>9} {'after s':>9} {'ratio':>6}   heavy modules before -> after")
    for kind in kinds:
        b, a = statistics.median(cpu[(kind, "before")]), statistics.median(cpu[(kind, "after")])
        print(f"{kind:<30} {b:9.2f} {a:9.2f} {b / a:6.2f}   {','.join(heavy[(kind, 'before')]) or '-'} -> {','.join(heavy[(kind, 'after')]) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
