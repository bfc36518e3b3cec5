"""What a Snakemake start of this workflow costs, paired against another checkout.

    python benchmarks/startup_bench.py --base /tmp/base [--rounds 3] [--demo] [--out benchmarks/out/startup]

For this checkout ("new") and the one at ``--base`` ("base", e.g. ``git worktree add /tmp/base <commit>``),
each run in a scratch copy of its own Snakefile, workflow, config and resources, with its own ``src`` first
on PYTHONPATH, base and new interleaved round by round so both see the same machine load:

* ``dry (scratch)``: ``snakemake -n --cores 2`` on the demo in a fresh copy (no .snakemake and an empty code-version
  cache of its own, ``$MEDFC_CODEVERSION_CACHE``: every cache cold),
  with the CPU seconds the steps' code versions took inside it (``code versions (scratch)``: every call of
  ``medfc.common.codeversion.versioned`` timed in the Snakemake process, which runs through a small wrapper
  that times it and then runs Snakemake's own ``main``);
* ``dry (again)``: the same dry run once more in that copy (what a second start costs);
* ``dry (scratch, user cache)``: a dry run in another fresh copy with the checkout's default place for the code
  versions: a checkout that keeps them in the user's cache folder finds those of the sources it ran before (a
  folder of the benchmark's stands for the user's), one that keeps them in ``.snakemake`` computes them again;
* ``paper dry (scratch)``: ``-n --configfile config/paper.yaml`` in a fresh copy;
* with ``--demo``: the whole demo (``--cores 2``) once per checkout in a fresh copy (its wall time, the CPU
  seconds of the run and all its jobs, the job count, CPU seconds per rule from results/timings/), then
  ``no-op`` reruns interleaved (a run with nothing to do), and a byte comparison of the two demos' results
  (every file under results/ but the timings in results/timings/ and the index; for each JSON or .jsonl.gz file that
  differs, the keys whose values differ, e.g. a training's seconds or a page's fetch time).

Both checkouts run with the environment's packages: whether the SLURM executor plugin is installed (it imports
pandas at every start) is printed with the results. Where the SLURM client is installed (slurm-wlm), start its cluster first (``bash scripts/ci/services.sh start``):
with the controller down, every Snakemake start waits about 9 s for ``scontrol show config``, which
snakemake-executor-plugin-slurm runs when Snakemake loads its plugins (it answers at once from a cluster).

Both checkouts' ``src`` are byte-compiled first (``compileall``), so every start imports the library from
bytecode as an installed checkout does, also where ``PYTHONDONTWRITEBYTECODE`` is set (it keeps Python
from writing the ``__pycache__`` files, not from reading them).

CPU seconds are user + system of snakemake and every process it waited for (its jobs), from
``getrusage(RUSAGE_CHILDREN)``. Prints medians, new/base ratios and the load average, then the headline
figures (fresh dry-run CPU, the code versions' share of it, no-op rerun CPU, demo wall time); writes the
numbers as JSON under ``--out``.
"""

from __future__ import annotations

import argparse
import compileall
import csv
import gzip
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CACHE_ENV = "MEDFC_CODEVERSION_CACHE"
COPY = ["Snakefile", "workflow", "config", "profiles", "envs", "resources"]


# runs Snakemake's main in this process, the time spent in the code versions printed at exit
TIMED_SNAKEMAKE = """
import atexit, sys, time
from medfc.common import codeversion
spent = [0.0]
untimed = codeversion.versioned
def versioned(*args):
    t = time.process_time()
    try:
        return untimed(*args)
    finally:
        spent[0] += time.process_time() - t
codeversion.versioned = versioned
atexit.register(lambda: print(f"code versions CPU s: {spent[0]:.3f}", file=sys.stderr))
from snakemake.cli import main
sys.argv[0] = "snakemake"
sys.exit(main())
"""


def snakemake_bin() -> str:
    exe = Path(sys.executable).with_name("snakemake")
    return str(exe) if exe.exists() else "snakemake"


def scratch(checkout: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in COPY:
        src = checkout / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, dest / name)
    return dest


def run(checkout: Path, cwd: Path, args: list[str], timeout: float = 7200, timed_versions: bool = False,
        versions_cache: Path | None = None) -> dict:
    """One Snakemake run; ``timed_versions``: through :data:`TIMED_SNAKEMAKE` (``versions_cpu_s`` in the result);
    ``versions_cache``: the code versions' disk cache (``$MEDFC_CODEVERSION_CACHE``), else the checkout's default."""
    env = dict(os.environ)
    env.pop(CACHE_ENV, None)
    if versions_cache is not None:
        env[CACHE_ENV] = str(versions_cache)
    env["PYTHONPATH"] = os.pathsep.join([str(checkout / "src"), *filter(None, [env.get("PYTHONPATH")])])
    if "NLTK_DATA" not in env and (HERE / ".nltk_data").is_dir():
        env["NLTK_DATA"] = str(HERE / ".nltk_data")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    command = [sys.executable, "-c", TIMED_SNAKEMAKE, *args] if timed_versions else [snakemake_bin(), *args]
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed in {cwd}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = proc.stdout + proc.stderr
    jobs = re.search(r"^total\s+(\d+)$", out, re.M)
    result = {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "jobs": int(jobs.group(1)) if jobs else 0, "log": out}
    if timed_versions:
        found = re.search(r"^code versions CPU s: ([0-9.]+)$", out, re.M)
        result["versions_cpu_s"] = float(found.group(1)) if found else float("nan")
    return result


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def per_rule_cpu(root: Path) -> dict[str, dict[str, float]]:
    """CPU seconds and wall seconds per rule from Snakemake's benchmark files (results/timings/<stage>/...; a checkout
    that keeps them in results/benchmarks/ is read there)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: {"jobs": 0, "cpu_s": 0.0, "wall_s": 0.0})
    folder = root / "results" / "timings"
    folder = folder if folder.is_dir() else root / "results" / "benchmarks"
    for tsv in sorted(folder.rglob("*.tsv")):
        rel = tsv.relative_to(folder).as_posix()
        kind = "/".join(rel.split("/")[:2]) if rel.count("/") >= 1 else rel
        with open(tsv, encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        for row in rows:
            out[kind]["jobs"] += 1
            out[kind]["cpu_s"] += float(row.get("cpu_time") or 0)
            out[kind]["wall_s"] += float(row.get("s") or 0)
    return {k: {kk: round(vv, 2) for kk, vv in v.items()} for k, v in sorted(out.items())}


def digests(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted((root / "results").rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(("results/timings/", "results/benchmarks/", "results/logs/", "results/index.")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _flat(obj, prefix: str = ""):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _flat(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, obj


def what_differs(a: Path, b: Path) -> str:
    """For a JSON file or a gzipped JSON-lines file that differs: the keys whose values differ (e.g. timings)."""
    try:
        if a.name.endswith(".json"):
            records = [(json.loads(a.read_bytes()), json.loads(b.read_bytes()))]
        elif a.name.endswith(".jsonl.gz"):
            la, lb = gzip.decompress(a.read_bytes()).splitlines(), gzip.decompress(b.read_bytes()).splitlines()
            if len(la) != len(lb):
                return f"{len(la)} vs {len(lb)} records"
            records = [(json.loads(x), json.loads(y)) for x, y in zip(la, lb) if x != y]
        else:
            return "bytes"
    except ValueError:
        return "bytes"
    keys: set[str] = set()
    for ra, rb in records:
        fa, fb = dict(_flat(ra)), dict(_flat(rb))
        keys |= {k for k in set(fa) | set(fb) if fa.get(k, "<absent>") != fb.get(k, "<absent>")}
    return "keys " + ", ".join(sorted(keys))


def median(rows: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="the other checkout (its src, Snakefile, workflow, config)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--demo", action="store_true", help="also run the whole demo once per checkout, then no-op reruns")
    ap.add_argument("--out", type=Path, default=HERE / "benchmarks" / "out" / "startup")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies (their path is printed)")
    args = ap.parse_args(argv)
    checkouts = {"base": args.base.resolve(), "new": HERE}
    tmp = Path(tempfile.mkdtemp(prefix="startup_bench."))
    results: dict[str, dict[str, list[dict]]] = {name: defaultdict(list) for name in checkouts}
    for checkout in checkouts.values():
        compileall.compile_dir(checkout / "src", quiet=1)
    # the code versions' cache a user keeps between runs: in the user's cache folder where the checkout keeps it there
    # (a folder of the benchmark's here), in each run folder's .snakemake where it does not
    user_cache = {name: tmp / f"versions-user-{name}" if "def user_cache_dir" in (c / "src/medfc/common/codeversion.py").read_text() else None
                  for name, c in checkouts.items()}
    for name, checkout in checkouts.items():
        if user_cache[name] is not None:  # filled once, by a dry run of another copy
            run(checkout, scratch(checkout, tmp / f"{name}-fill"), ["-n", "--cores", "2"], versions_cache=user_cache[name])
    import importlib.util
    plugin = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None
    print(f"load average at start: {load()}; SLURM executor plugin {'installed' if plugin else 'not installed'}")
    for i in range(args.rounds):
        for name, checkout in (checkouts.items() if i % 2 == 0 else reversed(checkouts.items())):
            root = scratch(checkout, tmp / f"{name}-dry{i}")
            cold = tmp / f"versions-{name}-{i}"  # a cache of its own: nothing computed before
            for label in ("dry (scratch)", "dry (again)"):
                r = run(checkout, root, ["-n", "--cores", "2"], timed_versions=True, versions_cache=cold)
                results[name][label].append({k: v for k, v in r.items() if k not in ("log", "versions_cpu_s")})
                if label == "dry (scratch)":
                    results[name]["code versions (scratch)"].append(
                        {"wall_s": r["versions_cpu_s"], "cpu_s": r["versions_cpu_s"], "jobs": r["jobs"]})
            # another fresh copy, each checkout's default cache: the user's (filled by earlier rounds) where it has one
            clone = scratch(checkout, tmp / f"{name}-clone{i}")
            r = run(checkout, clone, ["-n", "--cores", "2"], versions_cache=user_cache[name])
            results[name]["dry (scratch, user cache)"].append({k: v for k, v in r.items() if k != "log"})
            shutil.rmtree(clone)
            paper = scratch(checkout, tmp / f"{name}-paper{i}")
            r = run(checkout, paper, ["-n", "--cores", "2", "--configfile", "config/paper.yaml"])
            results[name]["paper dry (scratch)"].append({k: v for k, v in r.items() if k != "log"})
            shutil.rmtree(paper)
        print(f"round {i + 1}/{args.rounds} done, load {load()}")

    demo_roots = {}
    if args.demo:
        for name, checkout in checkouts.items():
            root = scratch(checkout, tmp / f"{name}-demo")
            r = run(checkout, root, ["--cores", "2"], versions_cache=user_cache[name])
            results[name]["demo"].append({k: v for k, v in r.items() if k != "log"})
            results[name]["demo per rule"] = per_rule_cpu(root)  # type: ignore[assignment]
            demo_roots[name] = root
            print(f"demo ({name}): {r['jobs']} jobs, {r['wall_s']} s wall, {r['cpu_s']} s CPU, load {load()}")
        for i in range(args.rounds):
            for name, checkout in (checkouts.items() if i % 2 == 0 else reversed(checkouts.items())):
                r = run(checkout, demo_roots[name], ["--cores", "2"], versions_cache=user_cache[name])
                assert "Nothing to be done" in r["log"], r["log"][-2000:]
                results[name]["no-op"].append({k: v for k, v in r.items() if k != "log"})

    print(f"\nload average at the end: {load()}\n")
    print(f"{'':24} {'base wall':>10} {'new wall':>10} {'ratio':>6} {'base CPU':>10} {'new CPU':>10} {'ratio':>6} {'jobs':>5}")
    summary = {}
    for label in results["new"]:
        if label == "demo per rule":
            continue
        b, n = results["base"][label], results["new"][label]
        row = {"base_wall_s": median(b, "wall_s"), "new_wall_s": median(n, "wall_s"), "base_cpu_s": median(b, "cpu_s"),
               "new_cpu_s": median(n, "cpu_s"), "jobs": [b[0]["jobs"], n[0]["jobs"]], "runs": len(n)}
        summary[label] = row
        print(f"{label:24} {row['base_wall_s']:>10} {row['new_wall_s']:>10} {row['new_wall_s'] / row['base_wall_s']:>6.2f} "
              f"{row['base_cpu_s']:>10} {row['new_cpu_s']:>10} {row['new_cpu_s'] / row['base_cpu_s']:>6.2f} {str(row['jobs']):>5}")
    headline = [("fresh dry-run CPU s", "dry (scratch)", "cpu_s"), ("  code versions in it, CPU s", "code versions (scratch)", "cpu_s"),
                ("fresh dry-run, user cache, CPU s", "dry (scratch, user cache)", "cpu_s"),
                ("no-op rerun CPU s", "no-op", "cpu_s"), ("demo wall s", "demo", "wall_s")]
    print("\nheadline (medians; base -> new):")
    for title, label, key in headline:
        if label not in summary:
            continue
        b, n = summary[label][f"base_{key}"], summary[label][f"new_{key}"]
        share = ""
        if label == "code versions (scratch)":
            db, dn = summary["dry (scratch)"]["base_cpu_s"], summary["dry (scratch)"]["new_cpu_s"]
            share = f"   ({b / db:.0%} -> {n / dn:.0%} of the fresh dry run)"
        print(f"  {title:30} {b:>8} -> {n:>8}{share}")
    if args.demo:
        print("\nCPU seconds per job kind (results/timings/; base -> new, jobs, CPU s per job):")
        b, n = results["base"]["demo per rule"], results["new"]["demo per rule"]
        for kind in sorted(set(b) | set(n)):
            bb, nn = b.get(kind, {"jobs": 0, "cpu_s": 0}), n.get(kind, {"jobs": 0, "cpu_s": 0})
            per = lambda r: r["cpu_s"] / r["jobs"] if r["jobs"] else 0.0  # noqa: E731
            print(f"  {kind:34} {bb['jobs']:>3} -> {nn['jobs']:>3} jobs   {bb['cpu_s']:>8.1f} -> {nn['cpu_s']:>8.1f} s   "
                  f"{per(bb):>5.2f} -> {per(nn):>5.2f} s/job")
        db, dn = digests(demo_roots["base"]), digests(demo_roots["new"])
        differ = sorted(p for p in set(db) | set(dn) if db.get(p) != dn.get(p))
        what = {p: what_differs(demo_roots["base"] / p, demo_roots["new"] / p) if p in db and p in dn else "only in one run"
                for p in differ}
        summary["demo byte comparison"] = {"files": len(dn), "differ": differ, "what": what}
        print(f"\ndemo results compared byte for byte: {len(dn)} files, {len(differ)} differ")
        by_what: dict[str, list[str]] = defaultdict(list)
        for p in differ:
            by_what[what[p]].append(p)
        for keys, paths in sorted(by_what.items()):
            print(f"  {len(paths):3} files, {keys}: {', '.join(paths[:3])}{' ...' if len(paths) > 3 else ''}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "startup.json").write_text(json.dumps({"summary": summary, "slurm_plugin": plugin, "runs": results}, indent=1, default=dict))
    print(f"\nnumbers in {args.out / 'startup.json'}")
    if args.keep:
        print(f"scratch copies kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
