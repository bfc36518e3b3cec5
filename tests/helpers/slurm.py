"""Running the workflow on the test SLURM cluster (scripts/slurm/start_cluster.sh) and a local reference run
of the same plan: shared by tests/workflow/test_slurm.py and benchmarks/slurm_layout.py.

- :func:`paper_shaped_copies`: identical workflow copies of config/test_slurm_paper.yaml with tiny random
  models built here and the same warm HTTP cache (the benchmark's; the test runs a slice of the shared demo run's plan);
- :func:`test_profile`: profiles/slurm with only the test cluster's partition/account changed (and no
  retries, a short first status check);
- :func:`sbatch_shim`: an ``sbatch`` on PATH that records each call and then calls the real one;
- :func:`jobs_in_log`, :func:`comment`: the jobs a Snakemake run announced, and the ``--comment`` the
  executor plugin gives each;
- :func:`digests`, :func:`why_differ`: the outputs under ``results/`` for a byte comparison.
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
from collections import Counter
from pathlib import Path

import yaml
from snakemake.utils import update_config, validate

from medfc.plan import cluster as cluster_layout
from tests.helpers.workflow import JOB_BLOCKS, REPO, WorkflowCopy, snakemake_bin

PROFILE = "profiles/slurm"
PAPER_CONFIG = "config/test_slurm_paper.yaml"
MODELS_CONFIG = "config/slurm_models.yaml"  # written into each copy: the tiny models' paths
PAPER_ARGS = ["--configfile", PAPER_CONFIG, MODELS_CONFIG]
# the test cluster made by scripts/slurm/start_cluster.sh; passed explicitly, never guessed
TEST_PARTITION = "debug"
TEST_ACCOUNT = "medfc"
# outputs that hold timings, not results
# runs.jsonl and releases.jsonl: one line per run (its id); the index names the runs
VOLATILE_DIRS = ("results/timings/", "results/logs/", "results/provenance/runs.jsonl", "results/provenance/releases.jsonl", "results/index.")
# run statistics inside an output (path pattern: key pattern): those keys, times and memory, are dropped
# before comparing (from the JSON document, or from each record of a gzipped JSON-lines file); all else must match
RUN_STATS = {
    # Scrapy's times, rates (absent when the crawl took no time) and memory, and where the pages came from (the HTTP
    # cache or the mirror: a run from a warm cache against the run that filled it)
    re.compile(r"results/healthfc/crawl/stats\.json"): re.compile(
        r"time|elapsed|per_minute|memusage|from_cache|fetched|mirror_requests|httpcache"),
    re.compile(r"results/healthfc/crawl/pages\.jsonl\.gz"): re.compile(r"^from_cache$"),  # each page's
    re.compile(r"results/experiments/.+/info\.json"): re.compile(r"seconds|per_second|^provenance$"),  # training's speed, its run
}
# the workflow/Snakefile line that keeps the light rules local; benchmarks/slurm_layout.py drops it in a scratch
# copy for the "before" layout (every rule with an action submitted)
LOCALRULES_LINE = "workflow.localrules(*PLAN.local_rules())"


def validated_config(configfiles: list[str], root: Path = REPO) -> dict:
    """config/config.yaml with ``configfiles`` on top and the schema's defaults, as Snakemake builds it."""
    cfg: dict = {}
    for path in ("config/config.yaml", *configfiles):
        update_config(cfg, yaml.safe_load((root / path).read_text(encoding="utf-8")) or {})
    validate(cfg, schema=str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return cfg


def run_snakemake(cwd: Path, args: list[str], env: dict | None = None, timeout: int = 3600) -> subprocess.CompletedProcess:
    """snakemake in a workflow copy, its own ``src`` first on PYTHONPATH (as WorkflowCopy.run); fails with
    the log's tail."""
    env = dict(os.environ if env is None else env)
    if "NLTK_DATA" not in env and (REPO / ".nltk_data").is_dir():
        env["NLTK_DATA"] = str(REPO / ".nltk_data")
    env["PYTHONPATH"] = os.pathsep.join([str(cwd / "src"), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run([snakemake_bin(), *JOB_BLOCKS, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    return proc


def pristine_copy(tmp: Path, folds: list[int] | None = None) -> Path:
    """A copy of the workflow (``tmp/src``) for config/test_slurm_paper.yaml with a tiny random BERT (alias
    ``tiny``) and GPT-2 (``tinylm``, zero-shot) built under ``tmp/models``. ``folds``: run only these
    HealthFC folds of the five (None: all five, as the paper)."""
    from tests.helpers.experiment_data import build_bert, build_gpt2

    enc = build_bert(tmp / "models" / "tiny-encoder")
    lm = build_gpt2(tmp / "models" / "tiny-lm")
    src = WorkflowCopy(tmp / "src").root
    (src / MODELS_CONFIG).write_text(
        "# the tiny random models built by tests/helpers/slurm.py\n"
        f"models:\n  aliases: {{tiny: '{enc}', tinylm: '{lm}'}}\n  clinifact: {{zero_shot: [tinylm]}}\n"
        + (f"experiments:\n  healthfc:\n    folds: {list(folds)}\n" if folds is not None else "")
    )
    return src


def fetching_rules(planned: Counter) -> list[str]:
    """The plan's rules that fetch (crawl, downloads): their answers are cached, so every copy sees the same."""
    return [r for r in cluster_layout.NETWORK_RULES if r in planned]


def paper_shaped_copies(tmp: Path, names: tuple[str, ...], folds: list[int] | None = None, *, src: Path | None = None,
                        planned: Counter | None = None) -> dict[str, Path]:
    """Identical copies of the workflow (``tmp/<name>``) for config/test_slurm_paper.yaml, taken at one
    moment, with the tiny models of :func:`pristine_copy` (``src``, made here unless given) and the same warm
    HTTP cache: the rules that fetch run once in the copy ``warm`` first (the crawl stamps pages with the
    server's Date header, which the cache keeps; so every copy sees the same bytes, as any cached rerun does).
    ``planned``: the plan's jobs per rule when already known (:func:`planned_rules`). Also ``src``."""
    src = src if src is not None else pristine_copy(tmp, folds)
    warm = "warm"
    shutil.copytree(src, tmp / warm)
    planned = planned if planned is not None else planned_rules(tmp / warm, PAPER_ARGS)
    run_snakemake(tmp / warm, ["--cores", "2", *fetching_rules(planned), *PAPER_ARGS])  # the fetching rules (and what they need)
    cache = validated_config([PAPER_CONFIG, MODELS_CONFIG], src)["cache_dir"]
    out = {"src": src}
    for name in names:
        shutil.copytree(src, tmp / name)
        if (tmp / warm / cache).is_dir():
            shutil.copytree(tmp / warm / cache, tmp / name / cache)
        out[name] = tmp / name
    return out


def planned_rules(root: Path, args: list[str]) -> Counter:
    """rule → number of jobs in a dry run of everything (``-n --forceall``), without ``all``."""
    proc = run_snakemake(root, ["-n", "--forceall", "--cores", "2", *args])
    return Counter(j["rule"] for j in jobs_in_log(proc.stdout + proc.stderr) if j["rule"] != "all")


def edited_profile(dest: Path, **changes: object) -> Path:
    """profiles/slurm as a user edits it for the test cluster (its partition and account set: the shipped
    placeholders stop a run), with ``changes`` to its other keys."""
    conf = yaml.safe_load((REPO / PROFILE / "config.yaml").read_text())
    assert conf.get("executor") == "slurm", f"{PROFILE}/config.yaml must set executor: slurm"
    res = conf.get("default-resources") or {}
    if isinstance(res, list):  # ["key=value", ...]
        res = dict(item.split("=", 1) for item in res)
    res.update(slurm_partition=TEST_PARTITION, slurm_account=TEST_ACCOUNT)
    conf["default-resources"] = res
    conf.update(changes)
    dest.mkdir(parents=True)
    (dest / "config.yaml").write_text(yaml.safe_dump(conf, sort_keys=False))
    return dest


def test_profile(dest: Path) -> Path:
    """:func:`edited_profile` with no retries (a failure must show) and a short first status check."""
    return edited_profile(dest, **{"retries": 0, "slurm-init-seconds-before-status-checks": 2})


test_profile.__test__ = False  # a helper, not a pytest test


SHIM = """#!/bin/bash
# records every sbatch call (argv, exit code, output), then behaves exactly like the real sbatch
out=$({real} "$@")
rc=$?
{python} -c 'import json, sys; print(json.dumps({{"argv": sys.argv[3:], "rc": int(sys.argv[1]), "stdout": sys.argv[2]}}))' \\
    "$rc" "$out" "$@" > "$(mktemp {calls}/call.XXXXXXXX)"
[ -n "$out" ] && printf '%s\\n' "$out"
exit $rc
"""


def sbatch_shim(tmp: Path) -> tuple[Path, Path]:
    """A folder to put first on PATH (its ``sbatch`` records each call into the second folder)."""
    real = shutil.which("sbatch")
    assert real, "sbatch not on PATH"
    bindir, calls = tmp / "shim", tmp / "sbatch-calls"
    bindir.mkdir()
    calls.mkdir()
    shim = bindir / "sbatch"
    shim.write_text(SHIM.format(real=shlex.quote(real), python=shlex.quote(sys.executable), calls=shlex.quote(str(calls))))
    shim.chmod(0o755)
    return bindir, calls


def submissions(calls: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(calls.iterdir())]


def submit_everything(root: Path) -> None:
    """Every rule submitted, in a scratch copy: the Snakefile without its ``localrules`` line, so that every
    rule with an action is a cluster job (for benchmarks/slurm_layout.py, never the checkout)."""
    snakefile = root / "workflow" / "Snakefile"
    text = snakefile.read_text()
    assert text.count(LOCALRULES_LINE) == 1, f"{snakefile} no longer has the line {LOCALRULES_LINE!r}"
    snakefile.write_text(text.replace(LOCALRULES_LINE, "pass  # benchmark: every rule submitted"))


JOB_BLOCK = re.compile(r"^(localrule|rule) (\S+):\n((?:    .*\n)*)", re.M)


def jobs_in_log(text: str) -> list[dict]:
    """The jobs Snakemake announced (`rule x:` / `localrule x:` blocks), with wildcards (their values in order,
    and ``named``: by name), resources and outputs."""
    jobs = []
    for kind, rule, body in JOB_BLOCK.findall(text):
        fields = dict(re.findall(r"^    (\w+): (.*)$", body, re.M))
        named = dict(kv.split("=", 1) for kv in fields.get("wildcards", "").split(", ") if "=" in kv)
        wildcards = list(named.values())
        resources = dict(kv.split("=", 1) for kv in fields.get("resources", "").split(", ") if "=" in kv)
        outputs = [o for o in fields.get("output", "").split(", ") if o]
        jobs.append({"local": kind == "localrule", "rule": rule, "wildcards": wildcards, "named": named, "resources": resources,
                     "outputs": outputs})
    return jobs


def comment(job: dict) -> str:
    """The --comment snakemake-executor-plugin-slurm gives a job."""
    wc = "_".join(job["wildcards"]).replace("/", "_")
    return f"rule_{job['rule']}" + (f"_wildcards_{wc}" if wc else "")


def rule_of_comment(text: str) -> str:
    return text.removeprefix("rule_").split("_wildcards_")[0]


def gpus_asked(resources: dict) -> int:
    gpu = resources.get("gpu", "0")
    if gpu.isdigit() and int(gpu) > 0:
        return int(gpu)
    return 1 if "gpu" in resources.get("gres", "") else 0


def option(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def short(argv: list[str]) -> str:
    return "sbatch " + " ".join(shlex.quote(a) if not a.startswith("--wrap") else "--wrap=<snakemake job>" for a in argv)


def digests(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted((root / "results").rglob("*")):
        rel = p.relative_to(root).as_posix()
        if not p.is_file() or rel.startswith(VOLATILE_DIRS):
            continue
        data = p.read_bytes()
        for path, keys in RUN_STATS.items():
            if path.fullmatch(rel):
                docs = [json.loads(line) for line in gzip.decompress(data).splitlines()] if rel.endswith(".jsonl.gz") else [json.loads(data)]
                data = b"\n".join(json.dumps(_drop_keys(doc, keys), sort_keys=True).encode() for doc in docs)
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


def _drop_keys(obj, pattern: re.Pattern):
    if isinstance(obj, dict):
        return {k: _drop_keys(v, pattern) for k, v in obj.items() if not pattern.search(k)}
    if isinstance(obj, list):
        return [_drop_keys(v, pattern) for v in obj]
    return obj


def why_differ(a: Path, b: Path) -> str:
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
