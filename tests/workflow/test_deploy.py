"""The workflow deployed as Snakemake workflows are: the catalog's layout, ``snakedeploy deploy-workflow`` into
an empty folder and a dry run of the demo from there (no hand edit of the workflow), the software environment of
the rules, snakefmt, config/README.md and .snakemake-workflow-catalog.yml.

snakedeploy deploys from a local folder as from GitHub: it copies ``config/`` and ``profiles/`` and writes
``workflow/Snakefile`` with a ``module`` of the source's ``workflow/Snakefile`` and ``use rule * from``
it. From GitHub it names the file as ``github("owner/repo", path="workflow/Snakefile", tag=...)``; from a
local folder snakedeploy 0.17 writes the bare ``"workflow/Snakefile"``, which Snakemake reads relative to
the deployment's own ``workflow/`` (``<dest>/workflow/workflow/Snakefile``, a file that does not exist), so
the test points it at the source's file, as the GitHub declaration does. Nothing else is edited.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.helpers.workflow import JOB_BLOCKS, REPO, WorkflowCopy, planned_jobs, snakemake_bin

pytestmark = pytest.mark.workflow

# snakemake started with no medfc importable (the editable install's src/ taken off the search path), as for
# a user who deployed the workflow without installing the package: the module's Snakefile then puts the
# source's src/ on it
WITHOUT_MEDFC = """
import importlib.util, os, sys
sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or ".", "medfc"))]
assert importlib.util.find_spec("medfc") is None, "medfc is still importable"
from snakemake.cli import main
sys.argv = ["snakemake", *sys.argv[1:]]
sys.exit(main())
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if "NLTK_DATA" not in env and (REPO / ".nltk_data").is_dir():  # the scorers' data is the checkout's, not the copy's
        env["NLTK_DATA"] = str(REPO / ".nltk_data")
    env.update(extra)
    return env


def _tool(name: str) -> str | None:
    exe = Path(sys.executable).with_name(name)
    return str(exe) if exe.exists() else shutil.which(name)


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> WorkflowCopy:
    """The workflow as a repository ships it (workflow/, config/, profiles/, resources/, src/), in a folder
    named as the repository, with the demo's dry run there (what the checkout plans)."""
    wf = WorkflowCopy(tmp_path_factory.mktemp("source") / "medfc")
    wf.planned = planned_jobs(wf.run("-n", "--cores", "2", timeout=600).stdout)
    return wf


def test_the_catalogs_layout():
    """workflow/Snakefile (snakemake finds it from the root; nothing at the root), config/README.md,
    .snakemake-workflow-catalog.yml with the catalog's keys."""
    assert (REPO / "workflow/Snakefile").is_file() and not (REPO / "Snakefile").exists()
    assert not (REPO / "envs").exists() and (REPO / "workflow/envs").is_dir()
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    usage = catalog["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert set(usage["mandatory-flags"]) == {"desc", "flags"}
    assert set(usage["software-stack-deployment"]) == {"conda", "apptainer", "apptainer+conda"}
    assert usage["report"] is True


def test_config_readme_describes_every_config_file_and_key_group():
    readme = (REPO / "config/README.md").read_text()
    for path in sorted((REPO / "config").glob("*.yaml")):
        assert f"`{path.name}`" in readme, f"config/README.md does not describe {path.name}"
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    for key in schema["properties"]:
        assert f"`{key}`" in readme, f"config/README.md does not describe the key group {key}"


def test_snakedeploy_deploys_the_demo_into_an_empty_folder(source, tmp_path):
    """``snakedeploy deploy-workflow`` into an empty folder, then ``snakemake -n`` there plans the demo's jobs,
    exactly those of the dry run in the source, with no medfc installed: the module's Snakefile imports the
    source's src/, and the demo's shipped files are read from the source (the deployment has no resources/)."""
    snakedeploy = _tool("snakedeploy")
    if snakedeploy is None:
        pytest.skip("snakedeploy is not installed (pip install -e '.[test]' installs it on Python < 3.13)")
    dest = tmp_path / "project"
    proc = subprocess.run([snakedeploy, "deploy-workflow", str(source.root), str(dest), "--branch", "main"],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["config", "profiles", "workflow"]
    assert sorted(p.name for p in (dest / "config").iterdir()) == sorted(p.name for p in source.path("config").iterdir())
    snakefile = dest / "workflow/Snakefile"
    text = snakefile.read_text()
    assert re.search(r"^module medfc:$", text, re.M) and "use rule * from medfc" in text
    assert text.count('"workflow/Snakefile"') == 1  # snakedeploy's declaration of a local source (see above)
    # the user's own rule beside the module's: not the plan's, never asked for by rule all
    own_rule = '\n\nrule my_notes:\n    output:\n        "notes.txt",\n    shell:\n        "touch {output}"\n'
    snakefile.write_text(text.replace('"workflow/Snakefile"', f'"{source.path("workflow/Snakefile")}"') + own_rule)

    proc = subprocess.run([sys.executable, "-c", WITHOUT_MEDFC, *JOB_BLOCKS, "-n", "--cores", "2"], cwd=dest, capture_output=True,
                          text=True, timeout=600, env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert planned_jobs(proc.stdout) == source.planned
    assert len(source.planned) > 50
    assert f"input: {source.path('resources/demo/healthfc_release/Datensatz.csv')}" in proc.stdout
    assert not (dest / "results").exists() and not (dest / "resources").exists()


def test_a_script_job_in_another_python_imports_the_medfc_snakemake_imports(tmp_path):
    """What a rule's job in a conda env relies on for the package (workflow/envs/medfc.yaml does not install
    it): Snakemake appends the search path of its own process to a Python script job's, so a job run by
    another interpreter, one without medfc, imports medfc from where Snakemake's process does. The other
    interpreter here is a bare venv put first on PATH for an ``envmodules`` rule (conda is not available to
    the tests; ``module`` is a no-op stand-in)."""
    bare, bin_dir = tmp_path / "bare", tmp_path / "bin"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    bin_dir.mkdir()
    (bin_dir / "module").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "module").chmod(0o755)
    (tmp_path / "Snakefile").write_text('rule probe:\n    output:\n        "out.txt",\n    envmodules:\n        "bare",\n'
                                        '    script:\n        "probe.py"\n')
    (tmp_path / "probe.py").write_text("import sys\nimport medfc\n\n"
                                       'open(snakemake.output[0], "w").write(f"{sys.executable}\\n{medfc.__file__}\\n")\n')
    no_medfc = subprocess.run([bare / "bin/python", "-c", "import medfc"], capture_output=True, timeout=60)
    assert no_medfc.returncode != 0  # the bare interpreter has no medfc of its own
    path = os.pathsep.join([str(bare / "bin"), str(bin_dir), os.environ.get("PATH", "")])
    proc = subprocess.run([snakemake_bin(), "--sdm", "env-modules", "--cores", "1", "--workflow-profile", "none"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=_env(PATH=path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    executable, medfc_file = (tmp_path / "out.txt").read_text().splitlines()
    import medfc

    assert Path(executable).parent == bare / "bin"
    assert Path(medfc_file) == Path(medfc.__file__)


def test_the_rules_software_environment_installs_no_path_and_every_dependency():
    """Every rule names workflow/envs/medfc.yaml; the file pins every dependency of the package (Snakemake
    aside: the job's script gets it from Snakemake's process) and installs nothing by path: Snakemake copies
    it to .snakemake/conda/<hash>.yaml, where a relative path (such as ``-e ..``) names another folder."""
    envs = sorted((REPO / "workflow/envs").glob("*.yaml"))
    assert [p.name for p in envs] == ["medfc.yaml"]
    for smk in [REPO / "workflow/Snakefile", *sorted((REPO / "workflow/rules").glob("*.smk"))]:
        text = smk.read_text()
        scripts = len(re.findall(r"^    script:$", text, re.M))
        assert len(re.findall(r'^    conda:\n        "\.\./envs/medfc\.yaml"$', text, re.M)) == scripts, smk.name
    env = yaml.safe_load(envs[0].read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    for spec in pip:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][A-Za-z0-9_.+-]*", spec), f"not a pinned package from an index: {spec}"
    pinned = {spec.split("==")[0].lower().replace("_", "-") for spec in pip}
    assert "medfc" not in pinned
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower().replace("_", "-") for d in deps}
    assert names - {"snakemake", "snakemake-executor-plugin-slurm"} <= pinned, sorted(names - pinned)


def test_snakefmt_leaves_the_workflow_unchanged():
    snakefmt = _tool("snakefmt")
    if snakefmt is None:
        pytest.skip("snakefmt is not installed (pip install -e '.[test]' installs it)")
    proc = subprocess.run([snakefmt, "--check", "workflow/"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr + "\nrun: snakefmt workflow/"


def test_the_job_table_plans_the_dry_runs_jobs(source):
    """The plan's job table (medfc.plan.job_specs) plans exactly the jobs the demo's dry run
    plans, rule by rule: Plan.build_jobs builds the inputs and options of those jobs and of no other."""
    from medfc.plan import job_specs
    from medfc.config.validate import plan_for

    def named(rule: str, wildcards: dict[str, str]) -> str:
        return rule + (f"[{','.join(f'{k}={v}' for k, v in sorted(wildcards.items()))}]" if wildcards else "")

    config = yaml.safe_load(source.path("config/config.yaml").read_text())
    plan = plan_for(config, source.path("workflow/schemas/config.schema.yaml"), base_dir=str(source.root))
    table = job_specs()
    planned = sorted(named(rule, w) for rule, spec in table.items() for w in spec.planned(plan))
    dry = [j.split("[")[0] for j in source.planned]
    dry_run = sorted(named(rule, dict(kv.split("=", 1) for kv in j[len(rule) + 1:-1].split(",")) if "[" in j else {})
                     for rule, j in zip(dry, source.planned) if rule in table)
    assert planned == dry_run and len(planned) > 50
    assert set(dry) - set(table) == {"all"}  # every other rule of the demo has its record
