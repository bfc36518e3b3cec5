"""Jobs submitted to SLURM and wall time: every rule with an action submitted ("before") against the checkout's
layout, where only real work is submitted ("after").

    sudo bash scripts/ci/services.sh start            # the one-node test cluster (docs/slurm.md)
    python benchmarks/slurm_layout.py [--folds all|0,1,...] [--keep DIR] [--no-runs]

1. The real paper-scale plan (config/live.yaml + config/paper.yaml under profiles/slurm, its partition and
   account set for the dry run: the shipped placeholders stop a run), a dry run: its
   jobs by rule, and how many are submitted "before" (every rule with an action a SLURM job) and "after"
   (medfc.plan.cluster.cluster_rules; the rest runs where Snakemake runs). Needs no cluster.
2. The paper-shaped plan config/test_slurm_paper.yaml (both datasets from the demo, every HealthFC
   system, TF-IDF and a tiny random BERT, CliniFact with the same two and a tiny GPT-2 zero-shot,
   smoke caps; `--folds`: all five by default) run twice on the test cluster from identical copies
   with the same warm cache: "before" with every rule submitted (the copy's Snakefile without its
   `workflow.localrules(...)` line; the checkout is never changed) and "after" with the layout of the
   checkout. An sbatch shim counts the submissions. Both runs use profiles/slurm with the test cluster's
   partition and account, no retries and a 2 s first status check (tests/helpers/slurm.py), and must
   produce byte-identical results.

Prints a table with jobs, jobs submitted and wall time per layout, and the ratios before / after. The
test cluster's one node has the machine's CPUs; Snakemake's local jobs share them with the SLURM jobs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from medfc.plan import cluster as cluster_layout  # noqa: E402
from tests.helpers import slurm as S  # noqa: E402
from tests.helpers.workflow import WorkflowCopy  # noqa: E402

PAPER_SCALE = ["config/live.yaml", "config/paper.yaml"]


def paper_scale_counts(tmp: Path) -> dict:
    """The dry run of the real paper-scale plan: jobs by rule, submitted before and after."""
    wf = WorkflowCopy(tmp / "paper-scale").root
    # the live config's prerequisites, met for a dry run (nothing is fetched): a contact and the keys
    (wf / "config/bench_contact.yaml").write_text("healthfc: {crawl: {contact: medfc-bench@uni-muenchen.de}}\n")
    os.environ.setdefault("NCBI_EMAIL", "medfc-bench@uni-muenchen.de")
    os.environ.setdefault("SERPER_API_KEY", "dry-run")
    # the shipped profile with a partition and account of the dry run's own: its placeholders rightly stop a run
    profile = S.edited_profile(wf / "profiles" / "dry-run").relative_to(wf).as_posix()
    proc = S.run_snakemake(wf, ["-n", "--forceall", "--profile", profile, "--configfile", *PAPER_SCALE, "config/bench_contact.yaml"])
    jobs = Counter(j["rule"] for j in S.jobs_in_log(proc.stdout + proc.stderr) if j["rule"] != "all")
    submitted = set(cluster_layout.cluster_rules(S.validated_config(PAPER_SCALE, wf)))
    after = Counter({r: n for r, n in jobs.items() if r in submitted})
    return {"jobs": jobs, "before": sum(jobs.values()), "after": after}


def run_layout(name: str, root: Path, tmp: Path) -> dict:
    """One SLURM run of the paper-shaped plan in ``root``: jobs, submissions, wall time."""
    profile = S.test_profile(tmp / f"profile-{name}")
    shim_tmp = tmp / f"shim-{name}"
    shim_tmp.mkdir()
    bindir, calls = S.sbatch_shim(shim_tmp)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    t0 = time.monotonic()
    proc = S.run_snakemake(root, ["--profile", str(profile), *S.PAPER_ARGS], env=env, timeout=4 * 3600)
    wall = time.monotonic() - t0
    ran = [j for j in S.jobs_in_log(proc.stdout + proc.stderr) if j["rule"] != "all"]
    subs = S.submissions(calls)
    assert all(s["rc"] == 0 for s in subs), [s for s in subs if s["rc"]]
    by_rule = Counter(S.rule_of_comment(S.option(s["argv"], "--comment")) for s in subs)
    return {"jobs": len(ran), "submitted": len(subs), "by_rule": by_rule, "wall_s": wall}


def _rules(counter: Counter) -> str:
    return ", ".join(f"{r} {n}" for r, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", default="all", help="HealthFC folds of the paper-shaped runs: all (five) or e.g. 0,1")
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it (default: a temporary one)")
    ap.add_argument("--no-runs", action="store_true", help="only the paper-scale dry run (no cluster needed)")
    args = ap.parse_args(argv)
    folds = None if args.folds == "all" else [int(f) for f in args.folds.split(",")]

    tmp = args.keep or Path(tempfile.mkdtemp(prefix="medfc-slurm-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        counts = paper_scale_counts(tmp)
        n_after = sum(counts["after"].values())
        print(f"paper-scale plan ({' + '.join(PAPER_SCALE)}, --profile {S.PROFILE}, dry run): {counts['before']} jobs")
        print(f"  submitted before: {counts['before']} (every rule with an action)")
        print(f"  submitted after:  {n_after} ({_rules(counts['after'])})")
        print(f"  local after:      {counts['before'] - n_after}")
        print(f"  ratio submitted before / after: {counts['before'] / n_after:.2f}x")
        if args.no_runs:
            return 0

        from tests.helpers.services import slurm_up

        if not slurm_up():
            print("no SLURM cluster answers (sinfo / sacct); start it with `sudo bash scripts/ci/services.sh start`",
                  file=sys.stderr)
            return 2
        nodes = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %c %m %G"], capture_output=True, text=True).stdout.strip()
        queued = subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip().splitlines()
        print(f"\ntest cluster: {nodes} (CPUs, MB, gres); {len(queued)} jobs queued before the runs; "
              f"this machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        copies = S.paper_shaped_copies(tmp, ("before", "after"), folds=folds)
        S.submit_everything(copies["before"])
        results = {}
        for name in ("before", "after"):
            results[name] = run_layout(name, copies[name], tmp)
            r = results[name]
            print(f"  {name}: {r['submitted']} of {r['jobs']} jobs submitted in {r['wall_s']:.0f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
        a, b = S.digests(copies["before"]), S.digests(copies["after"])
        same = sorted(a) == sorted(b) and all(a[p] == b[p] for p in a)

        shape = "all five folds" if folds is None else f"folds {folds}"
        print(f"\npaper-shaped plan ({S.PAPER_CONFIG}, {shape}) on the test cluster:")
        print("| layout | jobs | submitted to SLURM | run where Snakemake runs | wall time |")
        print("| --- | --- | --- | --- | --- |")
        for name in ("before", "after"):
            r = results[name]
            print(f"| {name} | {r['jobs']} | {r['submitted']} | {r['jobs'] - r['submitted']} | {r['wall_s']:.0f} s |")
        rb, ra = results["before"], results["after"]
        print(f"ratio before / after: jobs submitted {rb['submitted'] / ra['submitted']:.2f}x, "
              f"wall time {rb['wall_s'] / ra['wall_s']:.2f}x")
        print(f"submitted after: {_rules(ra['by_rule'])}")
        print(f"results byte-identical between the layouts: {'yes' if same else 'NO'}")
        return 0 if same else 1
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
