"""The default run on the demo snapshot, end to end: crawl and parse, caching, reruns, config errors."""

import json
import re

import pytest
import yaml

from medfc.common.io import read_jsonl
from tests.helpers.services import require_slurm_plugin
from tests.helpers.workflow import REPO, WorkflowCopy

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def demo_run(full_demo_run, tmp_path_factory):
    """The default HealthFC run (config/config.yaml + config/test.yaml): a copy of the shared full demo run
    (conftest.py), whose HealthFC section is the same (tests/workflow/test_shared_runs.py checks it), so its
    HealthFC outputs are those of config/test.yaml and a run with it is up to date."""
    return full_demo_run.clone(tmp_path_factory.mktemp("demo") / "wf")


def test_demo_crawl_never_fetches_the_disallowed_path_and_parses_every_article(demo_run):
    stats = json.loads(demo_run.path("results/healthfc/crawl/stats.json").read_text())
    pages = list(read_jsonl(demo_run.path("results/healthfc/crawl/pages.jsonl.gz")))
    assert stats["finish_reason"] == "finished"
    assert stats["robots_forbidden"] >= 1
    assert not [p for p in pages if "/intern/" in p["url"]]
    report = json.loads(demo_run.path("results/healthfc/parsed/report.json").read_text())
    reasons = report["skipped_by_reason"]
    assert reasons.get("truncated_html") == 1
    assert reasons.get("listing_page") == 1
    assert reasons.get("no_verdict_box") == 1
    articles = list(read_jsonl(demo_run.path("results/healthfc/parsed/articles.jsonl")))
    claims = list(read_jsonl(demo_run.path("results/healthfc/parsed/claims.jsonl")))
    assert len(pages) == len(articles) + report["n_skipped"]
    assert len(articles) >= 24
    assert {a["layout"] for a in articles} == {"current", "2014_2017", "pre_2014"}
    assert sum(a["n_claims"] for a in articles) == len(claims)


def test_demo_dataset_is_built_offline_from_the_shipped_memory_and_release(demo_run):
    translated = json.loads(demo_run.path("results/healthfc/translated/report.json").read_text())
    assert translated["n_model"] == 0 and translated["n_memory_hits"] + translated["n_corrections"] == translated["n_unique"]
    records = list(read_jsonl(demo_run.path("results/healthfc/dataset/healthfc.jsonl")))
    claims = list(read_jsonl(demo_run.path("results/healthfc/parsed/claims.jsonl")))
    assert len([r for r in records if r["source"] != "release"]) == len(claims)
    for r in records:
        assert len(r["sentences_de"]) == len(r["sentences_en"])
        assert all(0 <= i < len(r["sentences_de"]) for i in r["evidence_ids"])
        assert r["claim_en"] and r["label"] in ("SUPPORTED", "REFUTED", "NOT ENOUGH INFO")
    folds = demo_run.path("results/healthfc/folds/folds.csv").read_text().splitlines()
    assert len(folds) == len(records) + 1
    for name in ("table2.csv", "fig1_claims_per_year.png", "fig2_top_topics.png", "fig3_level_by_verdict.png"):
        assert demo_run.path(f"results/healthfc/stats/{name}").stat().st_size > 0


def test_demo_diff_against_the_release_shows_every_category(demo_run):
    import pandas as pd

    from medfc.healthfc.diff import CATEGORIES

    counts = pd.read_csv(demo_run.path("results/healthfc/diff/diff_counts.csv"))
    assert dict(zip(counts["category"], counts["rows"])) == {
        "verdict_agrees": 26, "verdict_differs": 1, "claim_whitespace_only": 0, "claim_text_changed": 1, "page_gone": 1,
        "published_after_release": 1, "crawl_only": 2, "article_updated": 1}
    assert list(counts["category"]) == list(CATEGORIES)
    rows = pd.read_csv(demo_run.path("results/healthfc/diff/diff_rows.csv"), keep_default_na=False)
    by = {c: g for c, g in rows.groupby("category")}
    assert by["verdict_differs"][["claim_id", "release_label", "crawl_label"]].values.tolist() == [["handy-hirntumor#0", "NOT ENOUGH INFO", "REFUTED"]]
    assert by["claim_text_changed"][["claim_id", "score"]].values.tolist() == [["zucker-hyperaktive-kinder#0", "75.36"]]
    assert by["page_gone"]["url"].tolist() == ["https://www.medizin-transparent.at/intern/entwurf-vitamin-d/"]
    assert by["published_after_release"]["claim_id"].tolist() == ["sport-depression#0"]
    assert sorted(by["crawl_only"]["claim_id"]) == ["homoeopathie-heuschnupfen#0", "melatonin-schlaf-jetlag#2"]
    assert by["article_updated"][["release_article_date", "crawl_article_date"]].values.tolist() == [["2018-06-07", "2023-09-12"]]
    md = demo_run.path("results/healthfc/diff/diff.md").read_text()
    assert "Claims in both: 27" in md and all(f"| {c} " in md for c in CATEGORIES)


def test_second_run_runs_no_jobs(demo_run):
    """config/test.yaml's outputs are the full run's: only the run's main.tex and index, which list this config's
    targets, are made again; a rerun then runs nothing."""
    proc = demo_run.run("--cores", "2", "--configfile", "config/test.yaml")
    assert re.findall(r"^(?:local)?rule (\w+):", proc.stdout + proc.stderr, re.M) == ["main_tex", "index", "all"]
    proc = demo_run.run("--cores", "2", "--configfile", "config/test.yaml")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_forced_recrawl_fetches_nothing(demo_run, tmp_path):
    """The crawl rule alone, forced, in a copy of the run (what follows it is not rerun: only the crawl's
    statistics are asserted)."""
    wf = demo_run.clone(tmp_path / "wf")
    proc = wf.run("results/healthfc/crawl/stats.json", "--cores", "2", "--configfile", "config/test.yaml", "--forcerun", "healthfc_crawl")
    assert "healthfc_crawl" in proc.stdout + proc.stderr
    stats = json.loads(wf.path("results/healthfc/crawl/stats.json").read_text())
    assert stats["fetched"] == 0
    assert stats["from_cache"] == stats["pages"] > 0
    assert stats["mirror_requests"] == 0


def test_changing_a_crawl_setting_reruns_the_crawl_because_of_its_params(demo_run):
    override = demo_run.path("config/override.yaml")
    override.write_text("healthfc:\n  crawl:\n    mirror_dir: resources/demo/site\n    retry_times: 3\n")
    proc = demo_run.run("-n", "--cores", "2", "--configfile", "config/test.yaml", "config/override.yaml")
    out = proc.stdout + proc.stderr
    assert "healthfc_crawl" in out and "params changed" in out.replace("Params have changed", "params changed")


# a bad config (stages.healthfcc) and an unknown ensemble member: tests/unit/config/test_config_mistakes.py, in-process


def test_own_aliases_keep_the_built_in_ones(demo_run):
    demo_run.path("config/own.yaml").write_text(
        "models:\n  aliases: {mine: 'offline:minilm'}\n  healthfc: {en: [mine, tfidf+minilm]}\n"
        "  clinifact: {discriminative: [mine], zero_shot: []}\n")
    proc = demo_run.run("-n", "--configfile", "config/test_experiments.yaml", "config/own.yaml")
    assert "healthfc_ensemble" in proc.stdout  # tfidf and minilm are built in: the default ensemble still plans


def test_cpu_config_plans_both_papers_tables_from_local_releases(demo_run):
    """config/cpu.yaml with the releases read from local files (the demo's, in the official formats): release
    mode, no crawl, no translation, no ClinicalTrials.gov; every model and ensemble of both tables."""
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())  # the demo files' hashes, pinned there
    cf = {"source": "resources/demo/clinifact_release", "sha256": demo["clinifact"]["diff"]["release_sha256"]}
    proc = demo_run.run("-n", "--configfile", "config/cpu.yaml", "--config", f"clinifact={json.dumps({'release': cf})}",
                        f"healthfc={json.dumps({'release': demo['healthfc']['release']})}")
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", proc.stdout.split("Job stats:")[1], re.M))
    assert {k: int(v) for k, v in counts.items() if k != "total"} == {
        "healthfc_release": 1, "healthfc_dataset": 1, "healthfc_folds": 1, "healthfc_stats": 1,  # in its own runs/cpu
        "healthfc_export": 1,  # the dataset for `datasets`: each fold's views, then the card
        "healthfc_experiment": 60,  # tfidf, tfidf-wc, minilm x oracle, claims only, gold explanations, level of evidence x 5 folds
        "healthfc_ensemble": 40, "healthfc_score": 100,  # two ensembles
        "healthfc_inner_cv": 40,  # the stacked tfidf+tfidf-wc's members, once per system and fold
        "clinifact_import_release": 1, "pairs_experiment": 2, "pairs_ensemble": 1, "pairs_score": 3,  # tfidf, gbm, tfidf+gbm
        "pairs_inner_cv": 2,  # the stack's members
        "clinifact_fig3": 1, "table": 10, "provenance": 1, "index": 1, "all": 1,  # the five tables, three companions, two time tables
        "healthfc_table1": 1, "clinifact_table5": 1, "clinifact_table7": 1, "error_browser": 1, "main_tex": 1,
        "healthfc_final": 1, "pairs_final": 1}  # its best rows kept for medfc predict (experiments.final)


def test_slurm_profile_stops_on_its_placeholders_then_plans_the_demo(demo_run):
    """The shipped profile's partition and account are placeholders: a run through it stops before its first
    job, one line for each, exit status 1; with both set it plans the demo."""
    require_slurm_plugin()
    args = ("-n", "--profile", "profiles/slurm", "--configfile", "config/test.yaml", "--forcerun", "healthfc_parse")
    proc = demo_run.run(*args, check=False)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("cluster: ")]
    assert proc.returncode == 1 and "healthfc_parse" not in proc.stdout
    assert [line.split(" is ")[0] for line in lines] == ["cluster: default-resources: slurm_partition", "cluster: default-resources: slurm_account"]
    proc = demo_run.run(*args, "--default-resources", "slurm_partition=debug", "slurm_account=medfc", "mem_mb=4096")
    assert "healthfc_parse" in proc.stdout


def test_lint_is_clean(demo_run):
    proc = demo_run.run("--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------- release mode

RELEASE_MODE = "healthfc:\n  dataset:\n    mode: release\n"


@pytest.fixture(scope="module")
def release_run(tmp_path_factory):
    """The HealthFC stage in release mode: no crawl, no translation stage, the configured Opus-MT never loaded."""
    wf = WorkflowCopy(tmp_path_factory.mktemp("release") / "wf")
    wf.path("config/release.yaml").write_text(RELEASE_MODE)
    wf.run("--cores", "2", "--configfile", "config/test.yaml", "config/release.yaml")
    return wf


def test_release_mode_runs_offline_from_the_release_english(release_run):
    report = json.loads(release_run.path("results/healthfc/dataset/report.json").read_text())
    assert report["mode"] == "release"
    assert report["counts"]["english/unique_texts"] == 0  # nothing sent to a translator: no model, no network
    assert "english/untranslated" not in report["counts"]
    records = list(read_jsonl(release_run.path("results/healthfc/dataset/healthfc.jsonl")))
    assert len(records) == 28 and {r["source"] for r in records} == {"release"}
    for r in records:
        assert r["claim_en_origin"] == "release" and r["sentences_en_origin"] == "release"
        assert len(r["sentences_en"]) == len(r["sentences_de"]) == len(r["evidence_ids"]) > 0
    assert not release_run.path("results/healthfc/crawl").exists()
    assert not release_run.path("results/healthfc/translated").exists()
    for name in ("folds/folds.csv", "stats/table2.csv", "stats/fig3_level_by_verdict.png"):
        assert release_run.path(f"results/healthfc/{name}").stat().st_size > 0


def test_release_mode_without_pipeline_or_joint_plans_no_crawl(release_run):
    """(With pipeline or joint the config check stops the run: tests/unit/config/test_config_mistakes.py, in-process.)"""
    experiments = "stages:\n  experiments: true\n"
    release_run.path("config/exp.yaml").write_text(
        experiments + "experiments:\n  healthfc:\n    systems: [oracle, claims_only, gold_explanations, level_of_evidence]\n")
    proc = release_run.run("-n", "--configfile", "config/test_experiments.yaml", "config/release.yaml", "config/exp.yaml")
    assert "healthfc_crawl" not in proc.stdout
