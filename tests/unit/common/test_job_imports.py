"""What a workflow job loads before it works: the miniature paper run has 80 experiment and 80 scoring jobs
(200 each at paper scale), each a fresh Python process, so a heavy import nobody uses costs minutes.
An encoder's experiment job does not load scikit-learn (imported where the TF-IDF and gradient-boosting
baselines use it: about 3 s of CPU a job); a score job does not load scipy.optimize (the AVeriTeC
matching imports it when it scores evidence: 1.5 s). A TF-IDF or gradient-boosting experiment job loads
neither torch nor transformers nor an HTTP client (about 2 s of its 4.6 s before), and an ensemble no
model library at all: the steps run here as the workflow runs them, options from the plan."""

import csv
import json
import os
import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "requests", "sklearn")

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
    ("medfc.experiments.steps, medfc.experiments.healthfc", ("sklearn", "scipy.stats")),
    ("medfc.experiments.steps, medfc.experiments.options, medfc.experiments.systems, medfc.experiments.models", HEAVY),
    ("medfc.scoring.steps", ("scipy.optimize", "sklearn")),
])
def test_a_job_imports_only_what_it_uses(modules, absent):
    code = f"import sys, {modules}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "[]"


def _write_data(tmp_path):
    from medfc.common.io import write_jsonl
    from tests.helpers.experiment_data import CLINIFACT_COLUMNS, clinifact_rows, healthfc_records

    recs = healthfc_records()
    write_jsonl(tmp_path / "healthfc.jsonl", recs)
    (tmp_path / "folds.csv").write_text("id,fold\n" + "".join(f"{r['id']},{k % 2}\n" for k, r in enumerate(recs)), encoding="utf-8")
    write_jsonl(tmp_path / "web.jsonl", [{"id": r["id"], "rank": n, "snippet": f"{r['label']} snippet {n}"} for r in recs for n in (1, 2)])
    splits = {}
    for split, (start, n) in {"train": (0, 12), "validation": (12, 6), "test": (18, 6)}.items():
        splits[split] = str(tmp_path / f"{split}_set.csv")
        with open(splits[split], "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=CLINIFACT_COLUMNS)
            w.writeheader()
            w.writerows(clinifact_rows(start, n))
    members = []
    for k, probs in enumerate(({"evidence": 0.6, "inconclusive": 0.3, "NEI": 0.1}, {"evidence": 0.2, "inconclusive": 0.7, "NEI": 0.1})):
        members.append(str(tmp_path / f"member{k}.jsonl"))
        write_jsonl(members[-1], [{"id": "1", "label": "evidence", "pred_label": max(probs, key=probs.get), "probs": probs}])
    return splits, members


def test_tfidf_gbm_and_ensemble_jobs_load_no_torch_transformers_or_http_client(tmp_path):
    from medfc.plan import Plan
    from tests.helpers.config import defaults

    splits, members = _write_data(tmp_path)
    cfg = defaults()
    cfg["models"]["ensembles"] = {"tfidf+gbm": {"members": ["tfidf", "gbm"], "weights": None}}
    plan = Plan(cfg)

    def out(name):
        return {"predictions": str(tmp_path / f"{name}.jsonl"), "info": str(tmp_path / f"{name}.json")}

    hfc = {"dataset": str(tmp_path / "healthfc.jsonl"), "folds": str(tmp_path / "folds.csv")}
    jobs = [  # the ensemble first: nothing else has loaded scikit-learn yet
        ("ensemble", "experiments.steps:ensemble", {"predictions": members}, out("ensemble"), plan.ensemble_options("tfidf+gbm")),
        ("healthfc tfidf pipeline", "experiments.steps:healthfc_experiment", hfc, out("pipeline"),
         plan.healthfc_experiment_options("en", "tfidf", "pipeline", 1)),
        ("healthfc tfidf retrieved_web", "experiments.steps:healthfc_experiment", {**hfc, "evidence": str(tmp_path / "web.jsonl")}, out("web"),
         plan.healthfc_experiment_options("en", "tfidf", "retrieved_web", 1)),
        ("clinifact tfidf", "experiments.steps:clinifact_experiment", splits, out("cf_tfidf"), plan.clinifact_experiment_options("tfidf")),
        ("clinifact gbm", "experiments.steps:clinifact_experiment", splits, out("cf_gbm"), plan.clinifact_experiment_options("gbm")),
    ]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", JOBS, str(tmp_path / "jobs.json"), json.dumps(HEAVY)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == {"ensemble": [], "healthfc tfidf pipeline": ["sklearn"], "healthfc tfidf retrieved_web": ["sklearn"],
                      "clinifact tfidf": ["sklearn"], "clinifact gbm": ["sklearn"]}
    # and each job did its work
    assert len(open(tmp_path / "pipeline.jsonl").readlines()) == 6 and len(open(tmp_path / "cf_gbm.jsonl").readlines()) == 6
    assert json.loads((tmp_path / "web.json").read_text())["config"]["model"] == "sklearn:tfidf"
