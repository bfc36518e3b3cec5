"""The tiny config submitted to a real SLURM through profiles/slurm (snakemake-executor-plugin-slurm).

Needs a SLURM cluster whose `sinfo` and `sacct` answer: `sudo bash scripts/ci/services.sh start` starts
a one-node test cluster (partition `debug`, account `medfc`, one fake GPU), as .ci/run does. Without
one the module skips and says so (fails under MEDFC_REQUIRE_SERVICES=1); it never starts anything.

What it proves, in one SLURM run and one local run of config/test.yaml:
- every non-local job Snakemake ran went through `sbatch` (a PATH shim records each call), exactly once,
  and `sacct` lists the same jobs (by the plugin's `rule_<rule>[_wildcards_<values>]` comment) as
  COMPLETED under the run's job name;
- a rule that asks for a GPU is submitted with `--gpus=N` (or `--gres=gpu...`) and SLURM allocates
  `gres/gpu` to it; the other rules ask for no GPU;
- the outputs are byte-identical to a local `snakemake --cores 2` run of the same config;
- the plugin keeps one log per job under the profile's slurm-logdir.
The wall time of the SLURM run is printed and recorded as the junit property `slurm_wall_s`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config, validate

from medfc.plan import cluster as cluster_layout
from tests.helpers.services import slurm_up, unavailable
from tests.helpers.workflow import REPO, WorkflowCopy, snakemake_bin

pytestmark = pytest.mark.workflow

CONFIG = "config/test.yaml"
PROFILE = "profiles/slurm"
# the test cluster made by scripts/slurm/start_cluster.sh; passed explicitly, never guessed
TEST_PARTITION = "debug"
TEST_ACCOUNT = "medfc"
# outputs that hold timings, not results
VOLATILE_DIRS = ("results/benchmarks/",)
# run statistics inside an output: their time and memory keys are dropped before comparing (all else must match)
RUN_STATS = {"results/healthfc/crawl/stats.json": re.compile(r"time|elapsed|memusage")}


@pytest.fixture(scope="module")
def cluster():
    if not slurm_up():
        unavailable("no SLURM cluster answers (sinfo / sacct)")
    parts = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, check=True).stdout.split()
    assert TEST_PARTITION in parts, f"test partition {TEST_PARTITION!r} missing from sinfo: {parts}"


def _validated(configfile: str) -> dict:
    """config/config.yaml with ``configfile`` on top and the schema's defaults, as Snakemake builds it."""
    cfg: dict = {}
    for path in ("config/config.yaml", configfile):
        update_config(cfg, yaml.safe_load((REPO / path).read_text(encoding="utf-8")) or {})
    validate(cfg, schema=str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return cfg


def _test_profile(dest: Path, gpu_rules: dict[str, int]) -> Path:
    """profiles/slurm with only what the test cluster needs changed: its partition and account, no
    retries (a failure must show), a short first status check, and `gpu` forced on gpu_rules."""
    conf = yaml.safe_load((REPO / PROFILE / "config.yaml").read_text())
    assert conf.get("executor") == "slurm", f"{PROFILE}/config.yaml must set executor: slurm"
    res = conf.get("default-resources") or {}
    if isinstance(res, list):  # ["key=value", ...]
        res = dict(item.split("=", 1) for item in res)
    res.update(slurm_partition=TEST_PARTITION, slurm_account=TEST_ACCOUNT)
    conf["default-resources"] = res
    conf["retries"] = 0
    conf["slurm-init-seconds-before-status-checks"] = 2
    sets = conf.get("set-resources") or {}
    for rule, n in gpu_rules.items():
        sets.setdefault(rule, {})["gpu"] = n
    if sets:
        conf["set-resources"] = sets
    dest.mkdir(parents=True)
    (dest / "config.yaml").write_text(yaml.safe_dump(conf, sort_keys=False))
    return dest


SHIM = """#!/bin/bash
# records every sbatch call (argv, exit code, output), then behaves exactly like the real sbatch
out=$({real} "$@")
rc=$?
{python} -c 'import json, sys; print(json.dumps({{"argv": sys.argv[3:], "rc": int(sys.argv[1]), "stdout": sys.argv[2]}}))' \\
    "$rc" "$out" "$@" > "$(mktemp {calls}/call.XXXXXXXX)"
[ -n "$out" ] && printf '%s\\n' "$out"
exit $rc
"""


def _sbatch_shim(tmp: Path) -> tuple[Path, Path]:
    real = shutil.which("sbatch")
    assert real, "sbatch not on PATH"
    bindir, calls = tmp / "shim", tmp / "sbatch-calls"
    bindir.mkdir()
    calls.mkdir()
    shim = bindir / "sbatch"
    shim.write_text(SHIM.format(real=shlex.quote(real), python=shlex.quote(sys.executable), calls=shlex.quote(str(calls))))
    shim.chmod(0o755)
    return bindir, calls


JOB_BLOCK = re.compile(r"^(localrule|rule) (\S+):\n((?:    .*\n)*)", re.M)


def _jobs_in_log(text: str) -> list[dict]:
    """The jobs Snakemake announced (`rule x:` / `localrule x:` blocks), with wildcards and resources."""
    jobs = []
    for kind, rule, body in JOB_BLOCK.findall(text):
        fields = dict(re.findall(r"^    (\w+): (.*)$", body, re.M))
        wildcards = [kv.split("=", 1)[1] for kv in fields.get("wildcards", "").split(", ") if "=" in kv]
        resources = dict(kv.split("=", 1) for kv in fields.get("resources", "").split(", ") if "=" in kv)
        jobs.append({"local": kind == "localrule", "rule": rule, "wildcards": wildcards, "resources": resources})
    return jobs


def _comment(job: dict) -> str:
    """The --comment snakemake-executor-plugin-slurm gives a job."""
    wc = "_".join(job["wildcards"]).replace("/", "_")
    return f"rule_{job['rule']}" + (f"_wildcards_{wc}" if wc else "")


def _gpus_asked(resources: dict) -> int:
    gpu = resources.get("gpu", "0")
    if gpu.isdigit() and int(gpu) > 0:
        return int(gpu)
    return 1 if "gpu" in resources.get("gres", "") else 0


def _option(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def _digests(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted((root / "results").rglob("*")):
        rel = p.relative_to(root).as_posix()
        if not p.is_file() or rel.startswith(VOLATILE_DIRS):
            continue
        data = p.read_bytes()
        if rel in RUN_STATS:
            data = json.dumps(_drop_keys(json.loads(data), RUN_STATS[rel]), sort_keys=True).encode()
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


def _drop_keys(obj, pattern: re.Pattern):
    if isinstance(obj, dict):
        return {k: _drop_keys(v, pattern) for k, v in obj.items() if not pattern.search(k)}
    if isinstance(obj, list):
        return [_drop_keys(v, pattern) for v in obj]
    return obj


def _why_differ(a: Path, b: Path) -> str:
    """Tell "same lines, other order" apart from real content differences."""
    if a.suffix == ".pdf":
        stamp = re.compile(rb"/(CreationDate|ModDate) \(D:[^)]*\)")
        if stamp.sub(b"", a.read_bytes()) == stamp.sub(b"", b.read_bytes()):
            return "PDFs differ only in /CreationDate (savefig(..., metadata={'CreationDate': None}))"
        return "different PDF content"

    def lines(p):
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        return raw.splitlines()
    try:
        la, lb = lines(a), lines(b)
    except (OSError, gzip.BadGzipFile):
        return "different bytes"
    if la == lb and a.suffix == ".gz":
        return "same content, different gzip header (a file name or mtime in it)"
    if la != lb and sorted(la) == sorted(lb):
        return "same lines in a different order (the step writes in a nondeterministic order)"
    return "different content"


def _run(cwd: Path, args: list[str], env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run([snakemake_bin(), *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    return proc


def _short(argv: list[str]) -> str:
    return "sbatch " + " ".join(shlex.quote(a) if not a.startswith("--wrap") else "--wrap=<snakemake job>" for a in argv)


# The documented cluster command (docs/slurm.md). Snakemake also loads profiles/default as the workflow
# profile and lets it win; the partition/account test guards that it never drops the SLURM profile's
# default-resources (slurm_partition/slurm_account; the plugin would then guess).
SLURM_ARGS = ["--configfile", CONFIG]


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """Identical copies of the workflow for the SLURM and the local run, taken at one moment and with
    the same warm HTTP cache (the crawl stamps pages with the server's Date header, which the cache
    keeps: so both runs see the same bytes, as any cached rerun does)."""
    tmp = tmp_path_factory.mktemp("slurm")
    (tmp / "src").mkdir()
    src = WorkflowCopy(tmp / "src").root
    warm = tmp / "warm"
    shutil.copytree(src, warm)
    _run(warm, ["--cores", "2", "--configfile", CONFIG])
    cache = (yaml.safe_load((src / CONFIG).read_text()) or {}).get("cache_dir", "cache")
    out = {}
    for name in ("slurm", "local"):
        shutil.copytree(src, tmp / name)
        if (warm / cache).is_dir():
            shutil.copytree(warm / cache, tmp / name / cache)
        out[name] = tmp / name
    out["tmp"], out["src"] = tmp, src
    return out


@pytest.fixture(scope="module")
def slurm_run(cluster, copies):
    tmp, root = copies["tmp"], copies["slurm"]
    # which rules ask for a GPU in this config? If none does yet, the test gives one rule gpu=1
    # (through the test profile's set-resources) so that the GPU request path is still checked.
    probe = _run(root, ["-n", "--forceall", "--cores", "2", "--configfile", CONFIG])
    planned = _jobs_in_log(probe.stdout + probe.stderr)
    # a dry run shows every job as a rule of its own: which rules are submitted is the plan's to say
    submitted_rules = set(cluster_layout.cluster_rules(_validated(CONFIG)))
    remote = sorted({j["rule"] for j in planned} & submitted_rules)
    assert remote, f"{CONFIG} plans no job that the cluster layout submits:\n{probe.stdout[-3000:]}"
    declared_gpu = {j["rule"] for j in planned if j["rule"] in submitted_rules and _gpus_asked(j["resources"])}
    forced_gpu = {} if declared_gpu else {remote[-1]: 1}

    profile = _test_profile(tmp / "profile", forced_gpu)
    bindir, calls = _sbatch_shim(tmp)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    since = (datetime.now() - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S")
    t0 = time.monotonic()
    proc = _run(root, ["--profile", str(profile), *SLURM_ARGS], env=env)
    wall = time.monotonic() - t0
    submissions = [json.loads(p.read_text()) for p in sorted(calls.iterdir())]
    return {
        "root": root,
        "log": proc.stdout + proc.stderr,
        "submissions": submissions,
        "wall_s": wall,
        "since": since,
        "profile": yaml.safe_load((profile / "config.yaml").read_text()),
        "forced_gpu": forced_gpu,
        "declared_gpu": declared_gpu,
        "expected_remote": remote,
    }


def test_documented_command_passes_partition_and_account_to_every_job(cluster, copies):
    """The real profiles/slurm, as docs/slurm.md runs it: every job carries its partition and account."""
    conf = yaml.safe_load((REPO / PROFILE / "config.yaml").read_text())
    res = conf.get("default-resources") or {}
    if isinstance(res, list):
        res = dict(item.split("=", 1) for item in res)
    assert res.get("slurm_partition") and res.get("slurm_account"), f"{PROFILE} must name slurm_partition and slurm_account"
    proc = _run(copies["src"], ["-n", "--forceall", "--profile", str(REPO / PROFILE), *SLURM_ARGS])
    jobs = [j for j in _jobs_in_log(proc.stdout + proc.stderr) if not j["local"]]
    assert jobs
    for j in jobs:
        assert j["resources"].get("slurm_partition") == str(res["slurm_partition"]), j
        assert j["resources"].get("slurm_account") == str(res["slurm_account"]), j


def test_every_non_local_job_went_through_sbatch_and_sacct(slurm_run, record_property):
    ran = _jobs_in_log(slurm_run["log"])
    remote = [j for j in ran if not j["local"]]
    subs = slurm_run["submissions"]
    record_property("slurm_wall_s", round(slurm_run["wall_s"], 1))
    print(f"\nSLURM run of {CONFIG}: {len(remote)} jobs submitted, wall time {slurm_run['wall_s']:.1f} s")
    assert remote, "Snakemake ran no non-local job under the SLURM profile"
    assert all(s["rc"] == 0 for s in subs), [s for s in subs if s["rc"]]
    # only the rules that deserve a node were submitted (medfc.plan.cluster); scoring, datasets, stats,
    # diffs and the fetching rules ran where Snakemake runs
    assert sorted({j["rule"] for j in remote}) == slurm_run["expected_remote"]
    assert {j["rule"] for j in ran if j["local"]} >= {"healthfc_crawl", "healthfc_parse", "healthfc_dataset"}

    # the shim saw one sbatch per non-local job, named by the plugin's comment
    assert Counter(_option(s["argv"], "--comment") for s in subs) == Counter(_comment(j) for j in remote)
    # every call went to the test partition/account, under one run id
    assert {_option(s["argv"], "-p") for s in subs} == {TEST_PARTITION}
    assert {_option(s["argv"], "-A") for s in subs} == {TEST_ACCOUNT}
    run_ids = {_option(s["argv"], "--job-name") for s in subs}
    assert len(run_ids) == 1

    # and SLURM's accounting has exactly those jobs, all completed
    jobids = {s["stdout"].strip().split(";")[0] for s in subs}
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "--starttime", slurm_run["since"], "--name", run_ids.pop(),
         "-o", "JobIDRaw,Comment,State,Partition,Account"],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = [line.split("|") for line in out.splitlines() if line.strip()]
    assert {r[0] for r in rows} == jobids
    assert Counter(r[1] for r in rows) == Counter(_comment(j) for j in remote)
    assert {(r[2], r[3], r[4]) for r in rows} == {("COMPLETED", TEST_PARTITION, TEST_ACCOUNT)}


def test_gpu_rule_is_submitted_with_a_gpu_request_and_gets_one(slurm_run):
    gpu_rules = set(slurm_run["declared_gpu"]) | set(slurm_run["forced_gpu"])
    subs = slurm_run["submissions"]
    by_rule = {}
    for s in subs:
        rule = _option(s["argv"], "--comment").removeprefix("rule_").split("_wildcards_")[0]
        by_rule.setdefault(rule, []).append(s)
    assert gpu_rules <= set(by_rule), (gpu_rules, set(by_rule))
    gpu_flag = re.compile(r"^--(gpus(=|$)|gres=.*gpu)")
    for rule, calls in sorted(by_rule.items()):
        for s in calls:
            flags = [a for a in s["argv"] if gpu_flag.match(a)]
            if rule in gpu_rules:
                assert flags, f"{rule} asks for a GPU but was submitted as {_short(s['argv'])}"
            else:
                assert not flags, f"{rule} asks for no GPU but was submitted as {_short(s['argv'])}"
            print(f"{'GPU' if rule in gpu_rules else 'CPU'} rule {rule}: {_short(s['argv'])}")
        if rule in gpu_rules:
            for s in calls:
                jobid = s["stdout"].strip().split(";")[0]
                tres = subprocess.run(["sacct", "-X", "-n", "-P", "-j", jobid, "-o", "AllocTRES"],
                                      capture_output=True, text=True, check=True).stdout
                assert "gres/gpu=" in tres, f"job {jobid} ({rule}) was allocated {tres!r}"
    if slurm_run["forced_gpu"]:
        print(f"note: no rule of {CONFIG} asks for a GPU yet; the test set gpu=1 on {sorted(slurm_run['forced_gpu'])}")


def test_outputs_are_byte_identical_to_a_local_run(slurm_run, copies):
    _run(copies["local"], ["--cores", "2", "--configfile", CONFIG])
    remote, here = _digests(slurm_run["root"]), _digests(copies["local"])
    assert here, "the local run made no files under results/"
    assert sorted(remote) == sorted(here)
    differ = {p: _why_differ(slurm_run["root"] / p, copies["local"] / p) for p in here if remote[p] != here[p]}
    assert not differ, f"outputs differ between the SLURM and the local run: {differ}"


def test_one_slurm_log_per_job_is_kept(slurm_run):
    logdir = slurm_run["profile"].get("slurm-logdir")
    if not logdir or not slurm_run["profile"].get("slurm-keep-successful-logs"):
        pytest.skip(f"{PROFILE} does not keep successful job logs in a slurm-logdir")
    root = slurm_run["root"] / logdir
    for s in slurm_run["submissions"]:
        jobid = s["stdout"].strip().split(";")[0]
        rule = _option(s["argv"], "--comment").removeprefix("rule_").split("_wildcards_")[0]
        hits = list((root / f"rule_{rule}").rglob(f"{jobid}.log"))
        assert len(hits) == 1, f"no log for job {jobid} ({rule}) under {root}"
