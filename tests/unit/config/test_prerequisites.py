"""Every prerequisite of the planned rules is checked when the run is planned, before the first job: a live run
that lacks a contact e-mail, an API key or a local file stops at once, one line per missing thing naming the key
and the fix. Checked in-process through the workflow's entry point (``plan_for(..., prerequisites=True)``);
tests/workflow/test_config_errors.py runs snakemake on it once. A job that was given a GPU and whose torch sees
none fails instead of training on the CPU."""

from __future__ import annotations

import pytest
import torch

from medfc.common import device as D
from medfc.common import job as J
from medfc.config.validate import ConfigError, merged_config, plan_for
from medfc.config.prerequisites import SKIP_ENV, checked_here, cuda_problem, email_problem, is_loopback
from tests.helpers.workflow import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
LIVE = [REPO / "config" / "config.yaml", REPO / "config" / "live.yaml", REPO / "config" / "paper.yaml"]
ME = "a.researcher@uni-example-hospital.de"
KEYS = ("NCBI_EMAIL", "SERPER_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "MEDFC_TEST_KEY", J.ENV)


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.chdir(REPO)
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


def missing(files=LIVE, **overrides) -> list[str]:
    """The lines the workflow prints for this config (then exit status 1); [] when it may start."""
    try:
        plan_for(merged_config(list(files), overrides), SCHEMA, prerequisites=True)
    except ConfigError as exc:
        return str(exc).splitlines()
    return []


def test_a_live_paper_run_without_keys_lists_every_missing_one_before_any_job():
    lines = missing()
    assert lines == [
        "prerequisite: healthfc.crawl.contact 'CHANGE-ME@example.org' is a placeholder: the crawl of "
        "https://www.medizin-transparent.at sends it in its user agent so the site's operators can reach you; set it to your e-mail address",
        "prerequisite: clinifact.pubmed.email (or NCBI_EMAIL) is empty: PubMed's E-utilities ask for a contact e-mail with every "
        "request (clinifact_fetch_abstracts); set it to your e-mail address (e.g. export NCBI_EMAIL=you@your-institution.org)",
        "prerequisite: SERPER_API_KEY (named by healthfc.retrieval.web.api_key_env) is not set: the web evidence of the HealthFC "
        "systems *_web is searched live (healthfc_retrieve); export SERPER_API_KEY=<your key>, or set healthfc.retrieval.web.file "
        "to a prepared evidence file",
        "prerequisite: healthfc.retrieval.pubmed.email (or NCBI_EMAIL) is empty: the pubmed evidence of the HealthFC systems "
        "*_pubmed is searched live (healthfc_retrieve); set it to your e-mail address (e.g. export NCBI_EMAIL=you@your-institution.org)",
    ]


def test_the_same_run_with_its_keys_set_plans(monkeypatch):
    monkeypatch.setenv("NCBI_EMAIL", ME)
    monkeypatch.setenv("SERPER_API_KEY", "k")
    assert missing(healthfc={"crawl": {"contact": ME}}) == []


def test_the_demo_and_a_mirror_crawl_need_nothing_from_outside():
    assert missing([REPO / "config" / "config.yaml"]) == []
    # a crawl of a mirror sends nothing to the site: its placeholder contact is fine
    assert missing([REPO / "config" / "config.yaml"], healthfc={"crawl": {"contact": "CHANGE-ME@example.org"}}) == []


def test_meteors_nltk_data_is_looked_for_where_a_planned_system_selects_evidence(tmp_path, monkeypatch):
    """Without WordNet the demo stops at planning with one line; NLTK itself is asked only where the files are
    not in its folders (here it finds none either); a data folder with the files plans, without importing NLTK."""
    from medfc.config import prerequisites as P
    from medfc.scoring import nltk_data as N

    asked = []

    def nltk_search(**kw):
        asked.append(kw)
        raise N.NltkDataMissing(N._missing_message("WordNet", N.nltk_data_dir()))

    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(P, "nltk_search_dirs", lambda: [N.nltk_data_dir()])
    monkeypatch.setattr(N, "ensure_nltk_data", nltk_search)
    demo = [REPO / "config" / "config.yaml"]
    assert missing(demo) == [
        f"prerequisite: NLTK WordNet data not found (looked in {tmp_path / 'data'} and NLTK's default paths); install it "
        f"offline with bash scripts/install_nltk_data.sh {tmp_path / 'data'}, or set NLTK_DATA to the folder that has it "
        "(healthfc_score computes METEOR for the evidence of pipeline, joint)"]
    assert len(asked) == 1
    assert missing(demo, experiments={"healthfc": {"systems": ["oracle", "claims_only"]}}) == []  # no evidence scored
    wordnet, punkt = tmp_path / "data" / "corpora" / "wordnet", tmp_path / "data" / "tokenizers" / "punkt_tab" / "english"
    punkt.mkdir(parents=True)
    wordnet.mkdir(parents=True)
    for name in (*N.WORDNET_REQUIRED, "lexnames"):
        (wordnet / name).write_text("")
    assert missing(demo) == [] and len(asked) == 1


def test_a_run_in_another_folder_reads_the_checkouts_nltk_data_unless_it_has_or_names_its_own(tmp_path, monkeypatch):
    import os

    from medfc.config.prerequisites import use_checkout_nltk_data

    checkout, run = tmp_path / "checkout", tmp_path / "run"
    (checkout / ".nltk_data").mkdir(parents=True)
    run.mkdir()
    monkeypatch.chdir(run)
    monkeypatch.setenv("NLTK_DATA", "")  # restored after the test, however the function sets it
    monkeypatch.delenv("NLTK_DATA")
    assert use_checkout_nltk_data(None) is None and "NLTK_DATA" not in os.environ  # a module from GitHub: no checkout
    assert use_checkout_nltk_data(str(checkout)) == os.environ["NLTK_DATA"] == str(checkout / ".nltk_data")
    monkeypatch.setenv("NLTK_DATA", "/elsewhere")
    assert use_checkout_nltk_data(str(checkout)) is None and os.environ["NLTK_DATA"] == "/elsewhere"
    monkeypatch.delenv("NLTK_DATA")
    (run / ".nltk_data").mkdir()
    assert use_checkout_nltk_data(str(checkout)) is None and "NLTK_DATA" not in os.environ


def test_a_local_release_file_that_does_not_exist_stops_the_run(tmp_path):
    gone = str(tmp_path / "Datensatz.csv")
    lines = missing([REPO / "config" / "config.yaml"], healthfc={"release": {"source": gone}})
    assert lines == [f"prerequisite: healthfc.release.source {gone!r}: no such file (relative paths are read from {REPO}); "
                     "fix the path or fetch the file"]


def test_a_missing_bulk_zip_and_release_split_are_named(tmp_path):
    lines = missing([REPO / "config" / "config.yaml"], clinifact={"studies": {"bulk_zip": str(tmp_path / "s.zip")},
                                                                   "diff": {"release": str(tmp_path)}})
    assert [line.split(" '")[0] for line in lines] == [
        "prerequisite: clinifact.studies.bulk_zip", "prerequisite: clinifact.diff.release (train split)",
        "prerequisite: clinifact.diff.release (validation split)", "prerequisite: clinifact.diff.release (test split)"]


def test_an_llm_endpoint_needs_its_key_unless_local_or_keyless(monkeypatch):
    medsnip = {"datasets": {"healthfc": {"enabled": False}, "bench": {"enabled": True}},
               "llm": {"base_url": "https://openrouter.ai/api/v1", "api_key_env": "OPENROUTER_API_KEY", "model": "m"},
               "verifiers": [{"name": "claim", "kind": "claim_only"}]}
    base = [REPO / "config" / "config.yaml"]
    stages = {"healthfc": False, "clinifact": False, "experiments": False, "medsnip": True}
    lines = missing(base, stages=stages, medsnip=medsnip)
    assert lines == [
        "prerequisite: OPENROUTER_API_KEY (named by medsnip.llm.api_key_env) is not set: medsnip.decomposer calls m at "
        "https://openrouter.ai/api/v1; export OPENROUTER_API_KEY=<your key>, or set medsnip.llm.api_key_env: '' for a server that needs no key",
        "prerequisite: OPENROUTER_API_KEY (named by medsnip.llm.api_key_env) is not set: medsnip.verifiers[0].llm calls m at "
        "https://openrouter.ai/api/v1; export OPENROUTER_API_KEY=<your key>, or set medsnip.llm.api_key_env: '' for a server that needs no key",
    ]
    assert missing(base, stages=stages, medsnip={**medsnip, "llm": {**medsnip["llm"], "api_key_env": ""}}) == []
    assert missing(base, stages=stages, medsnip={**medsnip, "llm": {**medsnip["llm"], "base_url": "http://127.0.0.1:8000/v1"}}) == []
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-1")
    assert missing(base, stages=stages, medsnip=medsnip) == []


@pytest.mark.parametrize(("value", "problem"), [
    ("", "is empty"), ("CHANGE-ME@example.org", "is a placeholder"), ("me@example.com", "is a placeholder"),
    ("your-email@uni.edu", "is a placeholder"), ("not-an-address", "is not an e-mail address"), (ME, None),
    # the shipped placeholders and every reserved example domain are refused; a real address is not
    ("medfc-demo@example.org", "is a placeholder"), ("you@your-institution.org", "is a placeholder"),
    ("a@lab.example.net", "is a placeholder"), ("a@uni.example", "is a placeholder"), ("a@host.invalid", "is a placeholder"),
    ("a@lab.test", "is a placeholder"), ("me@uni.edu", None), ("you@uni.edu", None), ("user@testing.org", None),
    ("name@example.edu", None),
])
def test_contact_emails(value, problem):
    assert (email_problem(value) or "").endswith(problem or "") and (problem is None) == (email_problem(value) is None)


def test_loopback_urls():
    assert is_loopback("http://127.0.0.1:8000/v1") and is_loopback("http://localhost:11434/v1") and is_loopback("http://[::1]:80/")
    assert not is_loopback("https://api.openai.com/v1") and not is_loopback("http://gpu-node-7:8000/v1")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_device_cuda_on_a_machine_without_cuda_stops_a_local_run():
    config = merged_config([REPO / "config" / "config.yaml"], {"experiments": {"healthfc": {"train": {"device": "cuda"}}}})
    plan = plan_for(config, SCHEMA, prerequisites=True)  # planning passes: on a cluster the nodes have the GPUs
    problem = cuda_problem(plan)  # the workflow's onstart asks this on a local run
    assert problem.startswith("prerequisite: 14 planned jobs (healthfc_experiment: 14 jobs, e.g. healthfc_experiment (en, minilm, pipeline, 0)) "
                              "set device cuda")
    assert f"set device cuda, but torch {torch.__version__} sees no CUDA device on this machine" in problem
    assert cuda_problem(plan_for(merged_config([REPO / "config" / "config.yaml"], {}), SCHEMA)) is None


@pytest.mark.parametrize(("resources", "gpus"), [
    ({"gpu": 1}, 1), ({"gpu": 0, "mem_mb": 4096}, 0), ({"gpus": "2"}, 2), ({"gres": "gpu:a100:4"}, 4), ({"gres": "gpu:2"}, 2), ({"gres": "gpu"}, 1),
    ({"gres": "tmpdisk:10"}, 0), ({}, 0),
])
def test_the_gpus_a_job_asked_for(resources, gpus):
    assert J.gpus_requested(resources) == gpus


def test_only_a_scheduler_gives_gpus():
    """A local run's ``gpu`` resource is a counter: device auto may use the CPU there (config/live.yaml's
    translation asks a GPU for its cluster runs); inside a SLURM allocation it is a GPU the job must use."""
    assert J.gpus_given({"gpu": 1}, environ={}) == 0
    assert J.gpus_given({"gpu": 1}, environ={"SLURM_JOB_ID": "42"}) == 1
    assert J.gpus_given({"gpu": 0}, environ={"SLURM_JOB_ID": "42"}) == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_device_auto_falls_back_to_the_cpu_only_where_no_gpu_was_asked_for(monkeypatch):
    assert D.resolve_device("auto").type == "cpu"
    monkeypatch.setenv(J.ENV, "1")
    with pytest.raises(RuntimeError, match=r"^device auto: this job's resources ask for 1 GPU\(s\) but no CUDA device is visible to torch"):
        D.resolve_device("auto")
    assert D.resolve_device("cpu").type == "cpu"  # an explicit CPU is the user's choice


def test_commands_that_run_no_job_plan_without_the_checks(monkeypatch):
    monkeypatch.delenv(SKIP_ENV, raising=False)
    assert checked_here(["snakemake", "--cores", "4", "--configfile", "config/live.yaml"])
    assert checked_here(["snakemake", "-n", "--configfile", "config/live.yaml"])  # a dry run checks
    for flag in ("--unlock", "--report=report.html", "--list", "--summary", "--cleanup-metadata"):
        assert not checked_here(["snakemake", flag, "--configfile", "config/live.yaml"]), flag
    monkeypatch.setenv(SKIP_ENV, "1")
    assert not checked_here(["snakemake", "--cores", "4"])
