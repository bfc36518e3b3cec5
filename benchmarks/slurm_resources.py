"""What the paper-scale plan asks SLURM for, job by job: resources by model kind and size, beside one value for
every job.

    python benchmarks/slurm_resources.py [CONFIG ...]      # default: config/live.yaml config/paper.yaml

A dry run of the plan through the real profiles/slurm (``-n --forceall`` in a scratch copy of the
workflow; no cluster needed) prints every job's resources as Snakemake would submit them. This script
groups the training and inference jobs by rule and by their row of ``experiments.resources``
(medfc.plan.resources: the model's kind and size) and prints, per group, the jobs, GPUs, memory, time
limit and threads; then the jobs that ask for a GPU and the GPU-hours and memory-hours they reserve
(GPUs or GB × the time limit), against a layout where every job of the four training and inference rules
asks for one experiments.gpu / mem_mb / runtime / threads (:data:`ONE_VALUE`: paper.yaml's 1 GPU,
32000 MB, 240 minutes, 4 threads), the same jobs with those values in place of their rows'.

The live config's contact checks are met with a scratch config and NCBI_EMAIL (nothing is fetched), and
SERPER_API_KEY gets a dummy value when unset.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from medfc.plan import Plan  # noqa: E402
from medfc.plan import resources as R  # noqa: E402
from tests.helpers import slurm as S  # noqa: E402
from tests.helpers.workflow import WorkflowCopy  # noqa: E402

PAPER_SCALE = ["config/live.yaml", "config/paper.yaml"]
CONTACT = "medfc-benchmark@uni-klinikum.de"
ONE_VALUE = {"gpu": 1, "threads": 4, "mem_mb": 32000, "runtime": 240}  # one value for every training and inference job
JOB = re.compile(r"^(?:local)?rule (\S+):\n((?:    .*\n)*)", re.M)


def dry_run_jobs(configs: list[str], tmp: Path) -> tuple[list[dict], Path, list[str]]:
    """Every job of the plan with its wildcards (by name) and resources, from a dry run (which does not
    print threads: those are the plan's, :meth:`medfc.plan.Plan.job_resources`)."""
    wf = WorkflowCopy(tmp / "wf").root
    (wf / "config/bench_contact.yaml").write_text(f"healthfc: {{crawl: {{contact: {CONTACT}}}}}\n")
    configs = [*configs, "config/bench_contact.yaml"]
    os.environ["NCBI_EMAIL"] = CONTACT
    os.environ.setdefault("SERPER_API_KEY", "dry-run")
    proc = S.run_snakemake(wf, ["-n", "--forceall", "--profile", S.PROFILE, "--configfile", *configs])
    jobs = []
    for rule, body in JOB.findall(proc.stdout + proc.stderr):
        if rule == "all":
            continue
        fields = dict(re.findall(r"^    (\w+): (.*)$", body, re.M))
        wildcards = dict(kv.split("=", 1) for kv in fields.get("wildcards", "").split(", ") if "=" in kv)
        res = dict(kv.split("=", 1) for kv in fields.get("resources", "").split(", ") if "=" in kv)
        jobs.append({"rule": rule, "wildcards": wildcards, "gpu": S.gpus_asked(res), "mem_mb": int(res.get("mem_mb", 0)), "runtime": int(res.get("runtime", 0))})
    return jobs, wf, configs


def main(argv: list[str] | None = None) -> int:
    configs = list(argv if argv is not None else sys.argv[1:]) or PAPER_SCALE
    tmp = Path(tempfile.mkdtemp(prefix="medfc-slurm-resources-"))
    try:
        jobs, wf, configs = dry_run_jobs(configs, tmp)
        plan = Plan(S.validated_config(configs, wf))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    model_rows = R.model_rows(plan)
    model_rules = (*model_rows, "healthfc_translate")
    groups: dict[tuple, Counter] = defaultdict(Counter)
    for j in jobs:
        if j["rule"] not in model_rules:
            continue
        row = model_rows[j["rule"]].row(plan, j["wildcards"]["model"]) if j["rule"] in model_rows else "translation"
        j["threads"] = plan.job_resources(j["rule"], j["wildcards"])["threads"]
        groups[(j["rule"], row, j["gpu"], j["mem_mb"], j["runtime"], j["threads"])]["jobs"] += 1

    print(f"plan ({' + '.join(configs[:-1])}, --profile {S.PROFILE}, dry run): {len(jobs)} jobs; training, inference, translation:")
    print("| rule | row (kind, size) | jobs | gpu | mem_mb | runtime (min) | threads (the plan's) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (rule, row, gpu, mem, runtime, threads), n in sorted(groups.items()):
        print(f"| {rule} | {row} | {n['jobs']} | {gpu} | {mem} | {runtime} | {threads} |")

    def totals(items: list[dict]) -> dict:
        gpu = [j for j in items if j["gpu"]]
        return {"gpu_jobs": len(gpu), "gpu_hours": sum(j["gpu"] * j["runtime"] for j in gpu) / 60,
                "mem_gb_hours": sum(j["mem_mb"] * j["runtime"] for j in items) / 1000 / 60,
                "big": sum(1 for j in items if j["mem_mb"] >= ONE_VALUE["mem_mb"] and j["runtime"] >= ONE_VALUE["runtime"])}

    by_kind = [j for j in jobs if j["rule"] in model_rules]
    one_value = [{**j, **ONE_VALUE} if j["rule"] in model_rows else j for j in by_kind]
    tfidf = [j for j in by_kind if j["rule"] in ("healthfc_experiment", "pairs_experiment")
             and model_rows[j["rule"]].row(plan, j["wildcards"]["model"]) == "tfidf"]
    print(f"\nTF-IDF jobs: {len(tfidf)}, asking for a GPU: {sum(1 for j in tfidf if j['gpu'])} (before: {len(tfidf)})")
    print("| layout | jobs asking for a GPU | GPU-hours reserved | memory GB-hours reserved | jobs with >= 32 GB and >= 240 min |")
    print("| --- | --- | --- | --- | --- |")
    for name, items in (("before (one value for every job)", one_value), ("after (by model kind and size)", by_kind)):
        t = totals(items)
        print(f"| {name} | {t['gpu_jobs']} | {t['gpu_hours']:.0f} | {t['mem_gb_hours']:.0f} | {t['big']} |")
    by_rule = Counter(j["rule"] for j in by_kind if j["gpu"])
    print("GPU jobs after, by rule: " + ", ".join(f"{r} {n}" for r, n in sorted(by_rule.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
