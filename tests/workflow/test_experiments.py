"""The experiments stage end to end on the demo (the shared full run: config/test_experiments.yaml with every
stage on and tiny random models, see conftest.py):
every experiment, score, table and figure; and the rerun set when one training parameter changes."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from medfc.common.io import read_jsonl
from tests.helpers.workflow import planned_jobs

pytestmark = pytest.mark.workflow

CONFIG = "config/test_experiments.yaml"
SYSTEMS = ["pipeline", "joint", "oracle", "claims_only", "gold_explanations", "level_of_evidence"]


def _job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a (dry) run: rule → number of jobs."""
    m = re.search(r"Job stats:\s*\n\s*job\s+count\s*\n[-\s]+\n(.*?)\n\s*total\s+(\d+)", output, re.S)
    assert m, output[-3000:]
    counts = {}
    for line in m.group(1).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


@pytest.fixture(scope="module")
def exp_run(full_demo_run):
    return full_demo_run


def test_every_experiment_has_predictions_and_scores(exp_run):
    folds = pd.read_csv(exp_run.path("results/healthfc/folds/folds.csv"))
    for system in SYSTEMS:
        for fold in (0, 1):
            d = f"results/experiments/healthfc/en/tiny/{system}/fold{fold}"
            recs = list(read_jsonl(exp_run.path(f"{d}/predictions.jsonl")))
            test_ids = sorted(folds[folds["fold"] == fold]["id"].astype(str))
            if system == "level_of_evidence":
                assert recs and {r["label"] for r in recs} <= {"high", "moderate", "low"}
            else:
                assert [r["id"] for r in recs] == test_ids
            scores = json.loads(exp_run.path(f"{d}/scores.json").read_text())
            assert scores["system"] == system and scores["n"] == len(recs)
            assert ("evidence" in scores) == (system in ("pipeline", "joint"))
            if system in ("pipeline", "joint"):
                assert 0 <= scores["fever"]["strict"] <= 1 and "0.25" in scores["averitec"]["score"]
                assert scores["evidence"]["n_sentences"] > 0
    for d in ("tiny", "zero_shot/tinylm"):
        recs = list(read_jsonl(exp_run.path(f"results/experiments/clinifact/{d}/predictions.jsonl")))
        test = pd.read_csv(exp_run.path("results/clinifact/pairs/test_set.csv"), dtype=str, keep_default_na=False)
        assert len(recs) == len(test) and {r["split"] for r in recs} == {"test"}
        assert json.loads(exp_run.path(f"results/experiments/clinifact/{d}/scores.json").read_text())["n"] == len(test)


def test_tables_and_figures_have_the_expected_rows(exp_run):
    t3 = pd.read_csv(exp_run.path("results/tables/healthfc_table3.csv"), keep_default_na=False)
    ours = t3[t3["source"] == "ours"]
    assert list(ours["system"]) == ["pipeline", "joint", "oracle"] and set(ours["folds"]) == {2} and set(ours["scale"]) == {"smoke"}
    paper = t3[t3["source"] != "ours"]
    assert [float(x) for x in paper[paper.model == "DeBERTa"]["veracity F1"]] == [65.1, 67.5, 81.9]  # pipeline, joint, oracle
    assert "SMOKE-SIZED" in exp_run.path("results/tables/healthfc_table3.md").read_text()
    t5 = pd.read_csv(exp_run.path("results/tables/healthfc_table5.csv"), keep_default_na=False)
    assert list(t5[t5.source == "ours"]["experiment"]) == ["claims_only", "retrieved_web", "gold_explanations", "level_of_evidence"]
    assert [float(x) for x in t5[t5.source != "ours"]["F1"]] == [39.3, 44.4, 51.2, 42.2]
    sig = pd.read_csv(exp_run.path("results/tables/healthfc_significance.csv"))
    assert [tuple(x) for x in sig[["system A", "system B"]].values] == [("pipeline", "joint"), ("pipeline", "oracle"), ("claims_only", "gold_explanations")]
    assert (sig["CI low"] <= sig["CI high"]).all()
    t8 = pd.read_csv(exp_run.path("results/tables/clinifact_table8.csv"), keep_default_na=False)
    assert list(t8[t8.source == "ours"]["model"]) == ["tiny", "tinylm (zero-shot)"]
    assert [float(x) for x in t8[t8.source != "ours"]["accuracy"]] == [80.2, 77.9, 75.4, 43.4, 37.3, 33.2]
    cf_sig = pd.read_csv(exp_run.path("results/tables/clinifact_significance.csv"))
    assert [tuple(x) for x in cf_sig[["system A", "system B"]].values] == [("tiny", "tinylm (zero-shot)")]
    fig3 = pd.read_csv(exp_run.path("results/tables/clinifact_fig3.csv"))
    assert set(fig3["panel"]) == {"class", "test_type", "disease"}  # the demo studies give disease classes
    for ext in ("csv", "md", "tex"):
        for name in ("healthfc_table3", "healthfc_table3_extra", "healthfc_table5", "healthfc_table5_extra", "healthfc_significance",
                     "clinifact_table8", "clinifact_table8_extra", "clinifact_significance", "clinifact_fig3"):
            assert exp_run.path(f"results/tables/{name}.{ext}").stat().st_size > 0
    for ext in ("png", "pdf"):
        assert exp_run.path(f"results/figures/clinifact_fig3.{ext}").stat().st_size > 1000


def test_changing_one_training_parameter_reruns_exactly_what_depends_on_it(exp_run):
    proc = exp_run.run("-n", *exp_run.args)
    assert "Nothing to be done" in proc.stdout + proc.stderr

    # the learning rate of one HealthFC system: its folds' training and scoring, and the tables using it
    exp_run.path("config/lr.yaml").write_text("experiments:\n  healthfc:\n    system_train:\n      pipeline: {lr: 5.0e-4}\n")
    proc = exp_run.run("-n", *exp_run.args, "config/lr.yaml")
    counts = _job_counts(proc.stdout + proc.stderr)
    assert counts == {"healthfc_experiment": 2, "healthfc_score": 2, "table": 3, "healthfc_table4": 1, "error_browser": 1, "main_tex": 1,
                      "index": 1, "all": 1}
    assert [j for j in planned_jobs(proc.stdout) if j.startswith("table")] == ["table[table=healthfc_significance]", "table[table=healthfc_table3]",
                                                                               "table[table=healthfc_table3_extra]"]
    trained = re.findall(r"rule healthfc_experiment:\n(?:    .*\n)*?    output: (\S+),", proc.stdout + proc.stderr)
    assert sorted(trained) == [f"results/experiments/healthfc/en/tiny/pipeline/fold{k}/predictions.jsonl" for k in (0, 1)]

    # the CliniFact learning rate: the discriminative model, not the zero-shot one
    exp_run.path("config/cf_lr.yaml").write_text("experiments:\n  clinifact:\n    train: {lr: 5.0e-4}\n")
    proc = exp_run.run("-n", *exp_run.args, "config/cf_lr.yaml")
    counts = _job_counts(proc.stdout + proc.stderr)
    assert counts == {"pairs_experiment": 1, "pairs_score": 1, "table": 3, "clinifact_fig3": 1, "error_browser": 1, "main_tex": 1,
                      "index": 1, "all": 1}
    assert [j for j in planned_jobs(proc.stdout) if j.startswith("table")] == ["table[table=clinifact_significance]", "table[table=clinifact_table8]",
                                                                               "table[table=clinifact_table8_extra]"]

    # a scoring setting reruns scoring and tables only, no training
    exp_run.path("config/lam.yaml").write_text("scoring:\n  max_pred_evidence: 3\n")
    proc = exp_run.run("-n", *exp_run.args, "config/lam.yaml")
    # significance and the error browser read predictions; Table 4 chooses its row by the scores
    assert _job_counts(proc.stdout) == {"healthfc_score": 4, "table": 2, "healthfc_table4": 1, "main_tex": 1, "index": 1, "all": 1}
    assert "table[table=healthfc_table3]" in planned_jobs(proc.stdout)


def test_a_stack_trains_each_member_on_inner_folds_once_and_its_meta_model_reruns_alone(exp_run, tmp_path_factory):
    """A stacked CliniFact ensemble (tfidf+gbm, config.yaml's): each member's inner cross-validation is one job
    that reads train and validation only; changing the meta-model's C reruns the ensemble and what reads it,
    no member; changing the inner folds reruns the inner CV and the ensemble, not the members' own runs."""
    wf = exp_run.clone(tmp_path_factory.mktemp("stack") / "wf")
    wf.path("config/stack.yaml").write_text("models:\n  clinifact: {discriminative: [tiny, tfidf, gbm, tfidf+gbm]}\n")
    args = [*wf.args, "config/stack.yaml"]
    proc = wf.run("-n", *args)
    assert _job_counts(proc.stdout) == {"pairs_experiment": 2, "pairs_inner_cv": 2, "pairs_ensemble": 1, "pairs_score": 3,
                                        "table": 3, "clinifact_fig3": 1, "error_browser": 1, "main_tex": 1, "index": 1, "all": 1}
    wf.run(*args)
    info = json.loads(wf.path("results/experiments/clinifact/tfidf+gbm/info.json").read_text())
    assert info["method"] == "stack" and set(info["weights"]) == {"tfidf", "gbm"} and info["inner_cv"]["chosen"]
    pool = sum(len(pd.read_csv(wf.path(f"results/clinifact/pairs/{s}_set.csv"))) for s in ("train", "validation"))
    for member in ("tfidf", "gbm"):
        inner = list(read_jsonl(wf.path(f"results/experiments/inner_cv/clinifact/{member}/predictions.jsonl")))
        assert len(inner) == len({r["id"] for r in inner}) == pool and {r["split"] for r in inner} == {"train", "validation"}
    assert info["skips"]["counts"]["inner_items"] == pool
    # Table 8 says when the stack kept its best member (its row then repeats that member's)
    t8 = pd.read_csv(wf.path("results/tables/clinifact_table8.csv"), keep_default_na=False)
    kept = info["inner_cv"]["chosen"].endswith(" alone")
    assert t8[t8.model == "tfidf+gbm"]["note"].iloc[0] == (f"kept its best member, {info['selected'][0]}" if kept else "")
    assert ("the stack kept its best member" in wf.path("results/tables/clinifact_table8.tex").read_text()) == kept

    wf.path("config/c.yaml").write_text("experiments:\n  stacking: {C_grid: [0.1]}\n")
    proc = wf.run("-n", *args, "config/c.yaml")
    assert _job_counts(proc.stdout) == {"pairs_ensemble": 1, "pairs_score": 1, "table": 3, "error_browser": 1, "main_tex": 1, "index": 1,
                                        "all": 1}  # Fig. 3 shows other runs
    wf.path("config/k.yaml").write_text("experiments:\n  stacking: {inner_folds: 3}\n")
    proc = wf.run("-n", *args, "config/k.yaml")
    assert _job_counts(proc.stdout) == {"pairs_inner_cv": 2, "pairs_ensemble": 1, "pairs_score": 1, "table": 3, "error_browser": 1,
                                        "main_tex": 1, "index": 1, "all": 1}


# the heavy libraries a job kind must not load (the runner names those a job loaded in its log's last line);
# what a step uses it loads: the crawl Scrapy, the folds and the pair split scikit-learn, the plots matplotlib,
# the claims' embedder torch, the PubMed client and the evidence search requests, METEOR (evidence scoring) NLTK
# (without the scikit-learn and scipy.stats that nltk's package would load: medfc.common.nltk_import)
NOT_LOADED = {
    "scoring.steps": ("torch", "transformers", "requests", "matplotlib", "scrapy", "sklearn", "pandas"),
    "tables.steps": ("torch", "transformers", "sklearn", "requests", "scrapy", "nltk"),
    "healthfc.steps": ("torch", "transformers", "nltk"),
    "clinifact.steps": ("nltk", "scrapy"),
}
ONLY_WHERE_USED = {"sklearn": {"healthfc.steps:folds", "clinifact.steps:build_pairs"},
                   "requests": {"healthfc.steps:retrieve", "clinifact.steps:fetch_abstracts"},
                   "matplotlib": {"healthfc.steps:stats", "clinifact.steps:clinifact_stats", "tables.steps:clinifact_fig3"},
                   "scrapy": {"healthfc.steps:crawl"}, "torch": {"clinifact.steps:build_claims"},
                   "transformers": {"clinifact.steps:build_claims"}}


def test_every_job_ran_its_step_as_a_workflow_job(exp_run):
    """workflow/scripts/step.py calls run_step, which finds itself in a Snakemake job and runs the step under
    medfc.cli.job_process (its log says so); the script itself is unchanged, so no rule reran for it."""
    logs = [log.read_text(encoding="utf-8", errors="replace") for log in exp_run.path("results/logs").rglob("*.log")]
    steps = [text for text in logs if " finished in " in text]
    assert len(steps) > 50 and all("a workflow job: garbage collection" in text for text in steps)


def test_light_jobs_loaded_only_the_libraries_they_use(exp_run):
    finished = re.compile(r"step (\w+\.steps):(\w+)@\w+ finished in [\d.]+ s; heavy libraries loaded: (.+)$", re.M)
    loaded: dict[str, list[set[str]]] = {}
    for log in exp_run.path("results/logs").rglob("*.log"):
        for module, step, libs in finished.findall(log.read_text(encoding="utf-8", errors="replace")):
            loaded.setdefault(f"{module}:{step}", []).append(set() if libs == "none" else set(libs.split(", ")))
    assert {k.split(":")[0] for k in loaded} >= set(NOT_LOADED)
    for spec, runs in sorted(loaded.items()):
        module = spec.split(":")[0]
        for libs in runs:
            if module in NOT_LOADED:
                assert not libs & set(NOT_LOADED[module]), (spec, libs)
                assert all(spec in ONLY_WHERE_USED[lib] for lib in libs & set(ONLY_WHERE_USED)), (spec, libs)
    # a score job that scores no evidence loads nothing heavy (METEOR's NLTK only for the pipeline and joint runs)
    assert set() in loaded["scoring.steps:healthfc"] and loaded["scoring.steps:pairs"] == [set()] * len(loaded["scoring.steps:pairs"])
