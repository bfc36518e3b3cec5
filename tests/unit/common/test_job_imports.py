"""What a workflow job loads before it works: the miniature paper run has 80 experiment and 80 scoring jobs
(200 each at paper scale), each a fresh Python process, so a heavy import nobody uses costs minutes.
An encoder's experiment job does not load scikit-learn (imported where the TF-IDF and gradient-boosting
baselines use it: about 3 s of CPU a job); a score job does not load scipy.optimize (the AVeriTeC
matching imports it when it scores evidence: 1.5 s), nor pandas; the table, figure and dataset jobs load
neither torch, transformers, scikit-learn nor requests unless their step uses them (the folds use
scikit-learn, a crawl Scrapy, a download requests, a plot matplotlib: each imported inside its step). A
TF-IDF or gradient-boosting experiment job loads neither torch nor transformers nor an HTTP client (seconds
of CPU a job), and an ensemble no model library at all: the steps run here as the workflow runs
them, options from the plan. What the jobs of a real run loaded is in their logs (the runner names the
heavy libraries at the end): tests/workflow/test_experiments.py checks those of the shared demo run."""

import csv
import json
import os
import subprocess
import sys

import pytest

NEVER = ("torch", "transformers", "sklearn", "requests")


def _loaded(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    return out.stdout.strip()


# each job in turn in one fresh process (through the runner, as a rule calls it), the heavy modules loaded so far after each
JOBS = """
import json, sys
from medfc.cli import run_step
heavy = json.loads(sys.argv[2])
loaded = {}
for name, spec, inputs, outputs, options in json.loads(open(sys.argv[1]).read()):
    run_step(spec, inputs, outputs, options)
    loaded[name] = sorted(m for m in heavy if m in sys.modules)
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("modules, absent", [
    ("medfc.experiments.steps, medfc.experiments.healthfc.runs", ("sklearn", "scipy.stats", "pandas")),
    ("medfc.experiments.steps, medfc.experiments.models.options, medfc.experiments.healthfc.systems, medfc.experiments.models.kinds", NEVER),
    ("medfc.experiments.models.frozen, medfc.experiments.models.embeddings", ("torch", "transformers", "requests")),  # torch: for texts not stored
    ("medfc.scoring.steps", ("scipy.optimize", "sklearn", "torch", "transformers", "requests", "pandas", "matplotlib")),
    ("medfc.tables.steps", (*NEVER, "matplotlib", "scipy")),
    ("medfc.tables.errors", (*NEVER, "pandas", "numpy", "matplotlib", "scipy")),  # the error browser's options: read when the DAG is planned
    ("medfc.healthfc.steps", (*NEVER, "scrapy", "matplotlib", "scipy")),
    ("medfc.clinifact.steps", (*NEVER, "matplotlib", "scipy")),
    ("medfc.cli", (*NEVER, "pandas", "numpy", "matplotlib", "scipy", "jsonschema")),
])
def test_a_job_imports_only_what_it_uses(modules, absent):
    """The runner (medfc.cli) and the step module of each job kind, as a job imports them."""
    code = f"import sys, medfc.cli, {modules}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    assert _loaded(code) == "[]"


def test_a_snakemake_start_loads_no_library_of_the_steps():
    """What the Snakefile imports to plan (the plan, the systems, the code versions, the validation)."""
    code = ("import sys, medfc.plan, medfc.config.validate, medfc.experiments.healthfc.systems, medfc.common.codeversion; "
            f"print(sorted(m for m in {(*NEVER, 'pandas', 'numpy', 'matplotlib', 'scipy')!r} if m in sys.modules))")
    assert _loaded(code) == "[]"


def test_torch_threads_are_the_jobs_and_at_least_one():
    code = ("import torch; from medfc.common.options import set_torch_threads; set_torch_threads(3); "
            "after = torch.get_num_threads(); set_torch_threads(0); print(after, torch.get_num_threads())")
    assert _loaded(code) == "3 1"


def test_a_job_process_collects_cycles_less_often_and_not_at_exit():
    """medfc.cli.job_process (run_step runs each Snakemake job's step under it): a raised threshold while
    the step runs, cycles still collected during it, everything alive frozen at its end, the old threshold back."""
    code = """
import gc, weakref
from medfc.cli import JOB_GC_THRESHOLD, job_process
class Node: pass
before = gc.get_threshold()
with job_process():
    inside = gc.get_threshold()
    a, b = Node(), Node(); a.other, b.other = b, a   # a cycle: only the collector frees it
    alive = weakref.ref(a); del a, b
    kept = [[] for _ in range(3 * JOB_GC_THRESHOLD)]  # enough allocations for a collection
    collected_in_job = alive() is None
print(before[0], inside[0], collected_in_job, gc.get_threshold() == before, gc.get_freeze_count() > 3 * JOB_GC_THRESHOLD)
"""
    assert _loaded(code) == "700 100000 True True True"


def test_run_step_uses_the_job_policy_only_in_a_snakemake_job():
    """In a Snakemake script job (``__main__.snakemake`` the job's Snakemake object) run_step freezes at the
    step's end; called from Python it leaves the collector alone."""
    code = """
import gc, sys
import medfc.cli as cli
cli.resolve_step = lambda spec: (lambda inputs, outputs, options: "done")
plain = (bool(cli.snakemake_job()), cli.run_step("any:step", {}, {}, {}), gc.get_freeze_count())
class Snakemake:  # what Snakemake's script preamble binds
    params, output = {}, {}
snakemake = Snakemake()
job = (bool(cli.snakemake_job()), cli.run_step("any:step", {}, {}, {}),
       gc.get_freeze_count() > 0, gc.get_threshold()[0])
print(plain, job)
"""
    assert _loaded(code) == "(False, 'done', 0) (True, 'done', True, 700)"


def test_the_runner_script_keeps_its_bytes():
    """Snakemake reruns every rule whose script is newer than its outputs, and every rule runs
    workflow/scripts/step.py: an edit there reruns every job of every existing run (training included).
    Change the library (medfc.cli) instead; change this hash only with a reason worth that."""
    import hashlib
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "workflow" / "scripts" / "step.py"
    assert hashlib.sha256(script.read_bytes()).hexdigest() == "0d77ff9489e6b97e31725d7182cb046343e3b3f04311128cba022398cc7b0aaa"
