"""The shared demo run's plan on a real SLURM through profiles/slurm (snakemake-executor-plugin-slurm).

Needs the SLURM executor plugin (`MEDFC_SLURM=1 bash scripts/install.sh`) and a SLURM cluster whose `sinfo`
and `sacct` answer: `sudo bash scripts/ci/services.sh start` starts a one-node test cluster (partition `debug`,
account `medfc`, one fake GPU), as .ci/run does. Without either the module skips and says so (fails under
MEDFC_REQUIRE_SERVICES=1); it never installs or starts anything.

The plan is the shared full demo run's (tests/workflow/conftest.py: config/test_experiments.yaml and its
tiny random models: both datasets built from the demo, every HealthFC system of the plan with a tiny
random BERT on two folds, CliniFact with it and a tiny GPT-2 zero-shot, the tables and the figure) plus
one resource line, translation asking for a GPU (as config/live.yaml). That local run already exists, so
this module runs only what a real cluster can show. One dry run of the whole plan through the real
profile gives every job's resources (partition, account) and the plan's shape; one SLURM run of a fresh
copy (the same sources, the same tiny models, the shared run's warm HTTP cache) makes a slice of the
plan (``SLICE``): every rule the cluster runs (the translation with its GPU, HealthFC trainings on both
folds, CliniFact's encoder and zero-shot LLM) and the local rules around them (the crawl, the datasets,
the evidence retrieval, scoring, a table, the figure), 22 of the plan's 54 jobs; the other jobs of the
plan are more of the same rules. Its outputs must be byte-identical to the shared run's.
(benchmarks/slurm_layout.py measures the layout on config/test_slurm_paper.yaml with all five folds.)

What it proves, in that one SLURM run:
- the rules that went through `sbatch` (a PATH shim records each call) are exactly the plan's cluster
  rules (medfc.plan.cluster.cluster_rules) among the rules of the run, one call per planned job of them;
  every other job ran where Snakemake runs (`localrule`), among them every `healthfc_score`, the tables,
  the crawl and the datasets; `sacct` lists the same jobs (by the plugin's
  `rule_<rule>[_wildcards_<values>]` comment) as COMPLETED under the run's job name;
- the rule that asks for a GPU (translation) is submitted with `--gpus=N` (or `--gres=gpu...`) and SLURM
  allocates `gres/gpu` to it; the other rules ask for no GPU; every submitted job's `--mem`, `-t` and
  `--cpus-per-task` are the plan's for its model's kind and size (medfc.plan.resources);
- every output it made is byte-identical to the shared local `snakemake --cores 2` run's;
- the plugin keeps one log per job under the profile's slurm-logdir.
The wall time of the SLURM run is printed and recorded as the junit property `slurm_wall_s`.

And in one more dry run through the real profile, a GPU run (``experiments.gpu: 1``) with models of every
kind (``KINDS_LINES``: TF-IDF, GBM, frozen features, an ensemble, the tiny encoder, the tiny causal LM
zero-shot and LoRA-tuned and sized large by ``models.resources``, and zero-shot through a server), each
job's resources are its kind's row: no GPU and the small rows for TF-IDF, GBM, frozen features and the
server, a GPU for the encoder and the LLM jobs, none for ensembles, scoring and tables.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections import Counter
from datetime import datetime, timedelta

import pytest
import yaml

from medfc.plan import Plan
from medfc.plan import cluster as cluster_layout
from medfc.plan import resources as R
from tests.helpers import slurm as S
from tests.helpers.services import require_slurm_plugin, slurm_up, unavailable
from tests.helpers.workflow import WorkflowCopy

pytestmark = pytest.mark.workflow

GPU_CONFIG = "config/slurm_gpu.yaml"  # written into the copy: the one line the SLURM run adds (a resource)
GPU_LINES = "# the translation asks for a GPU on a cluster, as config/live.yaml\nhealthfc:\n  translation:\n    gpu: 1\n"
KINDS_CONFIG = "config/slurm_kinds.yaml"  # written into the copy for a dry run: a GPU run with models of every kind


def kinds_lines(tinylm: str) -> str:
    return yaml.safe_dump({
        "experiments": {"gpu": 1, "clinifact": {"model_zero_shot": {"tinyserver": {"backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                                                                                    "api_key_env": "", "tokenizer": tinylm}}}},
        "models": {"aliases": {"tinyserver": tinylm},
                   "healthfc": {"en": ["tiny", "tfidf", "frozen-minilm"]},
                   "clinifact": {"discriminative": ["tiny", "tfidf", "gbm", "frozen-minilm", "tfidf+gbm"],
                                 "zero_shot": ["tinylm", "tinyserver"], "fine_tuned": ["tinylm"]},
                   "resources": {"tinylm": {"size": "large"}, "tfidf": {"mem_mb": 1536}}},
    })


# what the SLURM run makes: targets whose jobs include every rule of the plan that the cluster runs
SLICE = [
    "results/experiments/healthfc/en/tiny/pipeline/fold0/scores.json",  # evidence selection, METEOR scoring
    "results/experiments/healthfc/en/tiny/retrieved_web/fold1/scores.json",  # the other fold, web evidence
    "results/tables/clinifact_table8.csv",  # CliniFact's encoder and zero-shot rows
    "results/figures/clinifact_fig3.png",
]


@pytest.fixture(scope="module")
def cluster():
    require_slurm_plugin()
    if not slurm_up():
        unavailable("no SLURM cluster answers (sinfo / sacct)")
    parts = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, check=True).stdout.split()
    assert S.TEST_PARTITION in parts, f"test partition {S.TEST_PARTITION!r} missing from sinfo: {parts}"


@pytest.fixture(scope="module")
def documented(cluster, full_demo_run, tmp_path_factory):
    """A fresh copy of the workflow for the shared run's plan (its config files, its tiny models, its warm
    HTTP cache: the crawl stamps pages with the server's Date header, which the cache keeps, so the copy's
    crawl gives the shared run's bytes), and the plan through the real profiles/slurm as docs/slurm.md runs
    it: one dry run of every job (``-n --forceall``), for the plan's jobs per rule and each job's resources,
    and one of the slice the SLURM run makes."""
    tmp = tmp_path_factory.mktemp("slurm")
    root = WorkflowCopy(tmp / "slurm").root
    configs = [a for a in full_demo_run.args if a.startswith("config/")]
    for rel in configs:
        shutil.copy2(full_demo_run.path(rel), root / rel)
    (root / GPU_CONFIG).write_text(GPU_LINES)
    cache = S.validated_config(configs, full_demo_run.root)["cache_dir"]
    shutil.copytree(full_demo_run.path(cache), root / cache)
    configs.append(GPU_CONFIG)
    profile = str(S.edited_profile(tmp / "edited-profile"))  # the shipped profile with the cluster's partition and account
    proc = S.run_snakemake(root, ["-n", "--forceall", "--profile", profile, "--configfile", *configs])
    jobs = [j for j in S.jobs_in_log(proc.stdout + proc.stderr) if j["rule"] != "all"]
    proc = S.run_snakemake(root, [*SLICE, "-n", "--profile", profile, "--configfile", *configs])
    sliced = Counter(j["rule"] for j in S.jobs_in_log(proc.stdout + proc.stderr))
    (root / KINDS_CONFIG).write_text(kinds_lines(S.validated_config(configs, root)["models"]["aliases"]["tinylm"]))
    kinds_configs = [*configs, KINDS_CONFIG]
    proc = S.run_snakemake(root, ["-n", "--forceall", "--profile", profile, "--configfile", *kinds_configs])
    kinds = [j for j in S.jobs_in_log(proc.stdout + proc.stderr) if j["rule"] != "all"]
    return {"tmp": tmp, "root": root, "configs": configs, "jobs": jobs, "planned": Counter(j["rule"] for j in jobs),
            "sliced": sliced, "kinds": kinds, "kinds_plan": Plan(S.validated_config(kinds_configs, root))}


@pytest.fixture(scope="module")
def slurm_run(documented):
    tmp, root = documented["tmp"], documented["root"]
    planned = documented["sliced"]
    cfg = S.validated_config(documented["configs"], root)
    submitted_rules = set(cluster_layout.cluster_rules(cfg))
    profile = S.test_profile(tmp / "profile")
    bindir, calls = S.sbatch_shim(tmp)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    since = (datetime.now() - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S")
    t0 = time.monotonic()
    proc = S.run_snakemake(root, [*SLICE, "--profile", str(profile), "--configfile", *documented["configs"]], env=env)
    wall = time.monotonic() - t0
    return {
        "root": root,
        "ran": [j for j in S.jobs_in_log(proc.stdout + proc.stderr) if j["rule"] != "all"],  # the jobs it announced
        "submissions": S.submissions(calls),
        "wall_s": wall,
        "since": since,
        "profile": yaml.safe_load((profile / "config.yaml").read_text()),
        "planned": planned,
        "expected_remote": Counter({r: n for r, n in planned.items() if r in submitted_rules}),
        "plan": Plan(cfg),
    }


def test_the_plan_has_the_papers_shape(documented, full_demo_run):
    """Every rule class of the paper-scale plan is in the run: training (both datasets, every system of the
    plan on two folds), the models run on the cluster (translation, zero-shot), fetching, scoring, tables,
    the figure; and it is the shared local run's plan."""
    planned = documented["planned"]
    cfg = S.validated_config(documented["configs"], documented["root"])
    n_systems, folds = len(cfg["experiments"]["healthfc"]["systems"]), cfg["experiments"]["healthfc"]["folds"]
    assert n_systems >= 6 and folds == [0, 1]
    assert planned["healthfc_experiment"] == planned["healthfc_score"] == n_systems * len(folds)
    assert planned["pairs_experiment"] == 1 and planned["clinifact_zero_shot"] == 1
    assert planned["table"] == 8 and planned["clinifact_fig3"] == 1  # five of the papers' tables and three companions
    cluster = set(cluster_layout.cluster_rules(cfg))
    assert cluster & set(planned) == {"healthfc_experiment", "pairs_experiment", "healthfc_translate", "clinifact_zero_shot"}
    # the SLURM run's slice has every rule the cluster runs, and the local rules around them
    sliced = documented["sliced"]
    assert cluster & set(sliced) == cluster & set(planned)
    assert sliced["healthfc_experiment"] == sliced["healthfc_score"] == 2
    assert {"healthfc_crawl", "clinifact_fetch_studies", "healthfc_dataset", "healthfc_folds", "healthfc_retrieve",
            "pairs_score", "clinifact_zero_shot_score", "table", "clinifact_fig3"} <= set(sliced)
    assert sliced - planned == Counter()
    # the GPU line is the only difference from the shared run's configuration, and it is a resource
    shared = S.validated_config(documented["configs"][:-1], full_demo_run.root)
    assert cfg["healthfc"]["translation"].pop("gpu") == 1 and shared["healthfc"]["translation"].pop("gpu") == 0
    assert cfg == shared


def test_documented_command_passes_partition_and_account_to_every_job(documented):
    """profiles/slurm with the partition and account set, as docs/slurm.md runs it: every job carries them."""
    jobs = documented["jobs"]
    assert jobs
    for j in jobs:
        assert j["resources"].get("slurm_partition") == S.TEST_PARTITION, j
        assert j["resources"].get("slurm_account") == S.TEST_ACCOUNT, j


def test_exactly_the_cluster_rules_went_through_sbatch_and_sacct(slurm_run, record_property):
    ran = slurm_run["ran"]
    remote = [j for j in ran if not j["local"]]
    subs = slurm_run["submissions"]
    record_property("slurm_wall_s", round(slurm_run["wall_s"], 1))
    record_property("slurm_jobs_submitted", len(subs))
    print(f"\nSLURM run of a slice of the shared demo run's plan: {len(subs)} of {len(ran)} jobs submitted, "
          f"wall time {slurm_run['wall_s']:.1f} s")
    assert all(s["rc"] == 0 for s in subs), [s for s in subs if s["rc"]]
    # every planned job ran, once
    assert Counter(j["rule"] for j in ran) == slurm_run["planned"]
    # the shim saw one sbatch per planned job of the cluster rules, and no other
    assert Counter(S.rule_of_comment(S.option(s["argv"], "--comment")) for s in subs) == slurm_run["expected_remote"]
    assert Counter(S.option(s["argv"], "--comment") for s in subs) == Counter(S.comment(j) for j in remote)
    # every other job ran where Snakemake runs: scoring, tables, the figure, datasets, fetching
    local = Counter(j["rule"] for j in ran if j["local"])
    assert local == slurm_run["planned"] - slurm_run["expected_remote"]
    assert local["healthfc_score"] == slurm_run["planned"]["healthfc_experiment"]
    assert {"healthfc_crawl", "clinifact_fetch_studies", "healthfc_dataset", "table", "clinifact_fig3"} <= set(local)

    # every call went to the test partition/account, under one run id
    assert {S.option(s["argv"], "-p") for s in subs} == {S.TEST_PARTITION}
    assert {S.option(s["argv"], "-A") for s in subs} == {S.TEST_ACCOUNT}
    run_ids = {S.option(s["argv"], "--job-name") for s in subs}
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
    assert Counter(r[1] for r in rows) == Counter(S.comment(j) for j in remote)
    assert {(r[2], r[3], r[4]) for r in rows} == {("COMPLETED", S.TEST_PARTITION, S.TEST_ACCOUNT)}


def test_gpu_rule_is_submitted_with_a_gpu_request_and_gets_one(slurm_run):
    planned_gpu = {j["rule"] for j in slurm_run["ran"] if not j["local"] and S.gpus_asked(j["resources"])}
    assert planned_gpu == {"healthfc_translate"}, planned_gpu  # healthfc.translation.gpu: 1, experiments.gpu: 0
    by_rule: dict[str, list[dict]] = {}
    for s in slurm_run["submissions"]:
        by_rule.setdefault(S.rule_of_comment(S.option(s["argv"], "--comment")), []).append(s)
    gpu_flag = re.compile(r"^--(gpus(=|$)|gres=.*gpu)")
    by_comment = {S.comment(j): j for j in slurm_run["ran"] if not j["local"]}
    for rule, calls in sorted(by_rule.items()):
        for s in calls:
            flags = [a for a in s["argv"] if gpu_flag.match(a)]
            if rule in planned_gpu:
                assert flags, f"{rule} asks for a GPU but was submitted as {S.short(s['argv'])}"
            else:
                assert not flags, f"{rule} asks for no GPU but was submitted as {S.short(s['argv'])}"
        print(f"{'GPU' if rule in planned_gpu else 'CPU'} rule {rule} ({len(calls)} jobs): {S.short(calls[0]['argv'])}")
        for s in calls:  # memory, time limit and threads: the plan's for the job's model (medfc.plan.resources)
            if rule in (*R.model_rows(slurm_run["plan"]), "healthfc_translate"):
                job = by_comment[S.option(s["argv"], "--comment")]
                want = slurm_run["plan"].job_resources(rule, job["named"])
                asked = {"mem_mb": S.option(s["argv"], "--mem"), "runtime": S.option(s["argv"], "-t"),
                         "threads": S.option(s["argv"], "--cpus-per-task")}
                assert asked == {k: str(want[k]) for k in asked}, f"{rule} {job['named']}: {S.short(s['argv'])}"
        if rule in planned_gpu:
            for s in calls:
                jobid = s["stdout"].strip().split(";")[0]
                tres = subprocess.run(["sacct", "-X", "-n", "-P", "-j", jobid, "-o", "AllocTRES"],
                                      capture_output=True, text=True, check=True).stdout
                assert "gres/gpu=" in tres, f"job {jobid} ({rule}) was allocated {tres!r}"


def test_outputs_are_byte_identical_to_a_local_run(slurm_run, full_demo_run):
    """The shared run is the local run of the same plan (``snakemake --cores 2``, no profile): every file the
    SLURM run made (the slice's targets and every output its jobs declared) is one of it, byte for byte."""
    remote, here = S.digests(slurm_run["root"]), S.digests(full_demo_run.root)
    assert here, "the local run made no files under results/"
    declared = {o for j in slurm_run["ran"] for o in j["outputs"]
                if o.startswith("results/") and not o.startswith(S.VOLATILE_DIRS)}
    assert set(SLICE) <= declared <= set(remote), sorted((set(SLICE) | declared) - set(remote))
    assert set(remote) <= set(here), sorted(set(remote) - set(here))
    differ = {p: S.why_differ(slurm_run["root"] / p, full_demo_run.root / p) for p in remote if remote[p] != here[p]}
    assert not differ, f"outputs differ between the SLURM and the local run: {differ}"


def test_one_slurm_log_per_job_is_kept(slurm_run):
    logdir = slurm_run["profile"].get("slurm-logdir")
    if not logdir or not slurm_run["profile"].get("slurm-keep-successful-logs"):
        pytest.skip(f"{S.PROFILE} does not keep successful job logs in a slurm-logdir")
    root = slurm_run["root"] / logdir
    for s in slurm_run["submissions"]:
        jobid = s["stdout"].strip().split(";")[0]
        rule = S.rule_of_comment(S.option(s["argv"], "--comment"))
        hits = list((root / f"rule_{rule}").rglob(f"{jobid}.log"))
        assert len(hits) == 1, f"no log for job {jobid} ({rule}) under {root}"


def test_each_jobs_resources_follow_its_models_kind_and_size(documented):
    """The dry run of a GPU run with models of every kind through the real profile: each training and
    inference job asks for its row of experiments.resources (and its alias's models.resources), a GPU only
    where a neural model runs on the job's node; ensembles, scoring, tables and the figure ask for none."""
    plan, jobs = documented["kinds_plan"], documented["kinds"]
    rows, model_rows = plan.config["experiments"]["resources"], R.model_rows(plan)
    seen: Counter = Counter()
    for j in jobs:
        asked = {"gpu": S.gpus_asked(j["resources"]), "mem_mb": int(j["resources"]["mem_mb"]), "runtime": int(j["resources"]["runtime"])}
        if j["rule"] not in model_rows:
            if j["rule"] != "healthfc_translate":
                assert asked["gpu"] == 0, j
            continue
        model = j["named"]["model"]
        row = model_rows[j["rule"]].row(plan, model)
        seen[row] += 1
        want = plan.job_resources(j["rule"], j["named"])
        assert asked == {k: want[k] for k in asked}, (j["rule"], j["named"], asked, want)
        own = plan.config["models"]["resources"].get(model, {}) if row != "server" else {}
        # a stacked member's inner CV
        times = plan.config["experiments"]["stacking"]["inner_folds"] if model_rows[j["rule"]].inner else 1
        expected = {"gpu": 1 if row in R.GPU_ROWS else 0, "mem_mb": rows[row]["mem_mb"], "runtime": rows[row]["runtime"] * times}
        assert asked == {**expected, **{k: v for k, v in own.items() if k in asked}}, (j["rule"], model, row, asked)
    # every kind is in the plan: TF-IDF (its alias's own memory), GBM, frozen, the encoder, the LLM sized large
    # by models.resources (zero-shot and LoRA), a server
    assert set(seen) == {"tfidf", "gbm", "frozen", "encoder", "llm_large", "lora_large", "server"}, seen
    tfidf = [j for j in jobs if j["rule"] in ("healthfc_experiment", "pairs_experiment") and j["named"]["model"] == "tfidf"]
    assert tfidf and {(S.gpus_asked(j["resources"]), j["resources"]["mem_mb"]) for j in tfidf} == {(0, "1536")}
    assert {j["rule"] for j in jobs} >= {"pairs_ensemble", "pairs_inner_cv", "healthfc_score", "pairs_score", "table", "clinifact_fig3"}
    print("\n" + "\n".join(f"{row}: {n} jobs, {R.ROW_KEYS} = {[rows[row][k] for k in R.ROW_KEYS]}" for row, n in sorted(seen.items())))
