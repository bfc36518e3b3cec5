"""The CliniFact systems are one registry (medfc.experiments.clinifact_systems): the plan's run matrix, options,
checks and prerequisites, the tables' row names and the rules' declarations follow its records; a test-only
system added to it alone is planned, named and checked, and one with a runner of its own, defined here, is
planned, sized, placed, run by the generic step and scored; neither the plan nor the tables compare anything
with a system's name."""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

import medfc.experiments.steps as experiment_steps
import medfc.scoring.steps as scoring_steps
from medfc.common.labels import CLINIFACT_LABELS
from medfc.common.options import OptionsError, Runtime
from medfc.common.stepfiles import StepFiles
from medfc.experiments import clinifact_systems as C
from medfc.experiments.records import CliniFactPrediction, RunInfo
from medfc.common.codeversion import versioned
from medfc.plan import Plan, cluster, job_spec, jobs, resources
from medfc.plan.experiments import CLINIFACT_WILDCARDS
from medfc.plan.prerequisites import _llms, planned_job_options
from medfc.tables.clinifact import table8
from medfc.tables.common import clinifact_name
from tests.helpers.config import SCHEMA, call_step, defaults
from tests.helpers.workflow import REPO

RULES = REPO / "workflow" / "rules"


def rule_blocks(path) -> dict[str, str]:
    """rule name → its text, for every rule of one .smk file."""
    text = path.read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in re.finditer(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.M | re.S)}


def test_the_registry_names_the_schemas_model_lists_in_their_order():
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    lists = schema["properties"]["models"]["properties"]["clinifact"]["properties"]
    assert list(C.CLINIFACT_SYSTEMS) == list(lists) == ["discriminative", "zero_shot", "fine_tuned"]
    fig3 = schema["properties"]["experiments"]["properties"]["clinifact"]["properties"]["fig3_pair"]
    assert fig3["items"]["properties"]["system"]["enum"] == list(C.CLINIFACT_SYSTEMS)
    clinifact = schema["properties"]["experiments"]["properties"]["clinifact"]["properties"]
    for spec in C.CLINIFACT_SYSTEMS.values():  # its options' section and overrides are config sections
        assert spec.section in clinifact and spec.overrides in clinifact, spec.name
    with pytest.raises(ValueError, match=r"unknown CliniFact system 'few_shot' \(discriminative \| zero_shot \| fine_tuned\)"):
        C.clinifact_system("few_shot")


def test_the_rules_are_the_records_rules_folders_and_options():
    """Each record's rule writes its run folder's predictions with the options its record names, its score rule
    scores them as its system, and its ensemble rule (discriminative only) writes the same folder; the generic
    pair runs and scores any system with a runner of its own in its folder, ``{system}`` taking their names."""
    experiments, scoring = rule_blocks(RULES / "experiments.smk"), rule_blocks(RULES / "scoring.smk")
    for spec in C.CLINIFACT_SYSTEMS.values():
        assert spec.runner is None and spec.options is not None  # the paper's systems have rules of their own
        folder = spec.run_dir("{EXP_DIR}", "{{model}}")
        assert hasattr(Plan, spec.options), spec.options
        made = experiments[spec.rule]
        assert f'predictions=f"{folder}/predictions.jsonl"' in made, spec.rule
        assert f'options=lambda w: PLAN.options("{spec.rule}", w)' in made, spec.rule
        assert job_spec(spec.rule).options == jobs.call(spec.options, "model"), spec.rule  # the job table's record
        assert job_spec(spec.rule).inputs == jobs.call(spec.inputs), spec.rule
        score = scoring[spec.score_rule]
        assert f"predictions=rules.{spec.rule}.output.predictions" in score, spec.score_rule
        assert f'scores=f"{folder}/scores.json"' in score, spec.score_rule
        assert f'options=lambda w: PLAN.options("{spec.score_rule}", w)' in score, spec.score_rule
        assert job_spec(spec.score_rule).options == jobs.call("clinifact_score_options", args=(spec.name,)), spec.score_rule
        if spec.ensemble_rule:
            assert f'predictions=f"{folder}/predictions.jsonl"' in experiments[spec.ensemble_rule], spec.ensemble_rule
    # the generic pair: one job per system with a runner of its own and model, in <experiments>/clinifact/<system>/<model>
    made, score = experiments[C.SYSTEM_RULE], scoring[C.SYSTEM_SCORE_RULE]
    folder = "{EXP_DIR}/clinifact/{{system}}/{{model}}"
    assert f'predictions=f"{folder}/predictions.jsonl"' in made and f'scores=f"{folder}/scores.json"' in score
    assert 'system=CLINIFACT_WILDCARDS["system"],' in made and 'system=CLINIFACT_WILDCARDS["system"],' in score
    assert 'step=lambda w: versioned("experiments.steps:clinifact_system", runner_of(w.system)),' in made  # its runner's code counts
    assert f"predictions=rules.{C.SYSTEM_RULE}.output.predictions" in score and 'step=versioned("scoring.steps:clinifact")' in score
    assert job_spec(C.SYSTEM_RULE).wildcards == job_spec(C.SYSTEM_SCORE_RULE).wildcards == ("system", "model")
    assert job_spec(C.SYSTEM_RULE).options == jobs.call("clinifact_system_options", "system", "model")
    assert job_spec(C.SYSTEM_RULE).inputs == jobs.call("clinifact_system_inputs", "system")
    assert job_spec(C.SYSTEM_SCORE_RULE).options == jobs.call("clinifact_score_options", "system")
    assert CLINIFACT_WILDCARDS["system"] == C.wildcard_pattern() == "(?!)"  # none registered: a pattern that matches nothing
    assert re.fullmatch(C.wildcard_pattern(), "") is None and re.fullmatch(C.wildcard_pattern(), "zero_shot") is None
    made = {spec.rule for spec in C.CLINIFACT_SYSTEMS.values()} | {s.ensemble_rule for s in C.CLINIFACT_SYSTEMS.values() if s.ensemble_rule}
    made |= {s.inner_cv_rule for s in C.CLINIFACT_SYSTEMS.values() if s.inner_cv_rule}
    assert made | {C.SYSTEM_RULE} == {r for r in experiments if r.startswith("clinifact_")}
    assert {spec.score_rule for spec in C.CLINIFACT_SYSTEMS.values()} | {C.SYSTEM_SCORE_RULE} == {r for r in scoring if r.startswith("clinifact_")}


def test_the_row_names_and_the_papers_rows_systems():
    assert [clinifact_name({"model": "m", "system": s}) for s in C.CLINIFACT_SYSTEMS] == ["m", "m (zero-shot)", "m (fine-tuned)"]
    assert clinifact_name({"model": "m"}) == "m"
    assert [C.system_of_row(r) for r in ("BioBERT", "Llama3-70B (zero-shot)", "OpenBioLLM-70B (fine-tuned)")] == \
        ["discriminative", "zero_shot", "fine_tuned"]


FEW_SHOT = C.CliniFactSystem("few_shot", options="clinifact_zero_shot_options", section="zero_shot", rule="clinifact_few_shot",
                             score_rule="clinifact_few_shot_score", title="few-shot", folder="few_shot", suffix=" (few-shot)",
                             asks_llm=True, placement="model", resources="llm")


def test_a_system_registered_in_a_test_is_planned_named_and_checked(monkeypatch, tmp_path):
    monkeypatch.setitem(C.CLINIFACT_SYSTEMS, "few_shot", FEW_SHOT)
    cfg = defaults()
    cfg["models"]["aliases"]["remote-llm"] = "org/remote-llm"
    cfg["models"]["clinifact"] = {"discriminative": ["tfidf"], "zero_shot": [], "fine_tuned": [], "few_shot": ["remote-llm"]}
    cfg["experiments"]["clinifact"]["model_zero_shot"] = {"remote-llm": {"backend": "openai", "base_url": "http://gpu7:8000/v1",
                                                                          "api_key_env": "MEDFC_TEST_NO_SUCH_KEY"}}
    plan = Plan(cfg)
    runs = plan.clinifact_runs()
    assert [(r["model"], r["system"], r["dir"]) for r in runs] == [
        ("tfidf", "discriminative", "results/experiments/clinifact/tfidf"),
        ("remote-llm", "few_shot", "results/experiments/clinifact/few_shot/remote-llm")]
    assert runs[1]["benchmark"] == "results/timings/experiments/clinifact/few_shot/remote-llm.tsv"
    assert plan.clinifact_options("few_shot", "remote-llm").to_mapping() == plan.clinifact_zero_shot_options("remote-llm").to_mapping()
    assert plan.table_inputs("clinifact_table8")["scores"][1] == "results/experiments/clinifact/few_shot/remote-llm/scores.json"
    assert [clinifact_name(e) for e in plan.table_options("clinifact_table8")["entries"]] == ["tfidf", "remote-llm (few-shot)"]
    monkeypatch.setattr(plan, "stage_enabled", lambda stage: stage == "experiments")
    assert [w for _, w, _ in planned_job_options(plan) if w.startswith(("clinifact_experiment", "clinifact_few_shot"))] == [
        "clinifact_experiment (tfidf)", "clinifact_few_shot (remote-llm)", "clinifact_few_shot_score (remote-llm)"]
    monkeypatch.delenv("MEDFC_TEST_NO_SUCH_KEY", raising=False)
    problems = [p for p in _llms(plan) if p]
    assert len(problems) == 1 and "experiments.clinifact.model_zero_shot.remote-llm.api_key_env" in problems[0]
    assert "the few-shot model remote-llm is asked" in problems[0]
    # its rules' places and its jobs' resources: a model rule, run where Snakemake runs while its model is served
    rows = cfg["experiments"]["resources"]
    assert "clinifact_few_shot" in cluster.local_rules(cfg) and "clinifact_few_shot" not in cluster.cluster_rules(cfg)
    assert "clinifact_few_shot_score" in cluster.local_rules(cfg) and "clinifact_few_shot" in cluster.all_rules()
    assert plan.job_resources("clinifact_few_shot", {"model": "remote-llm"}) == {"gpu": 0, **rows["server"]}
    cfg["experiments"]["clinifact"]["model_zero_shot"]["remote-llm"]["backend"] = "transformers"  # now run in the job
    assert "clinifact_few_shot" in cluster.cluster_rules(cfg)
    assert Plan(cfg).job_resources("clinifact_few_shot", {"model": "remote-llm"}) == {"gpu": cfg["experiments"]["gpu"], **rows["llm"]}
    cfg["models"]["clinifact"]["few_shot"] = ["nope"]
    with pytest.raises(ValueError, match=r"config: models\.clinifact\.few_shot: 'nope' names no model"):
        Plan(cfg).check()
    # the paper's rows of the system's kind follow it into Table 8
    score = tmp_path / "scores.json"
    score.write_text('{"n": 2, "accuracy": 0.5, "macro_precision": 0.5, "macro_recall": 0.5, "macro_f1": 0.5}', encoding="utf-8")
    papers = {"clinifact": {"cite": "P", "table8": {"X (few-shot)": {"accuracy": 1, "macro_f1": 2}, "Y (zero-shot)": {"accuracy": 3, "macro_f1": 4}}}}
    t8 = table8([str(score)], [{"model": "remote-llm", "system": "few_shot"}], papers, "demo")
    assert list(t8["model"]) == ["remote-llm (few-shot)", "X (few-shot)"] and list(t8["system"]) == ["few_shot", "few_shot"]


# ------------------------------------------------------------------------ a system with a runner of its own


@dataclass(frozen=True)
class ToyOptions(C.CliniFactRunnerOptions):
    """A test-only system's options: the label it always answers and its probability (its section's keys), a cap
    it shares with experiments.smoke, and the two paths its record asks the plan for."""

    answer: str
    confidence: float
    max_examples: int | None
    cache_dir: str
    save_dir: str


def toy_run(inputs: StepFiles, options: ToyOptions, runtime: Runtime) -> tuple[Sequence[CliniFactPrediction], RunInfo]:
    """Answer ``options.answer`` for the first ``max_examples`` test pairs, with ``confidence`` on it."""
    from medfc.experiments.clinifact_data import load_pairs, prediction_record

    pairs = load_pairs(str(inputs["test"]))[: options.max_examples]
    rest = (1 - options.confidence) / (len(CLINIFACT_LABELS) - 1)
    probs = np.array([options.confidence if label == options.answer else rest for label in CLINIFACT_LABELS])
    records = [prediction_record(p, "test", "toy", CLINIFACT_LABELS, probs) for p in pairs]
    return records, {"system": "toy", "n_test": len(records), "threads": runtime.threads}


TOY = C.CliniFactSystem("toy", title="toy", suffix=" (toy)", runner=f"{__name__}:toy_run", options_class=f"{__name__}:ToyOptions",
                        cache="toy", save_dir=True)


def toy_config() -> dict:
    cfg = defaults()
    cfg["stages"] = {"healthfc": False, "clinifact": False, "experiments": True, "medsnip": False}
    cfg["experiments"]["healthfc"]["langs"] = []
    cfg["models"]["clinifact"] = {"discriminative": ["tfidf"], "zero_shot": [], "fine_tuned": [], "toy": ["tfidf", "minilm"]}
    cx = cfg["experiments"]["clinifact"]
    cx["toy"] = {"answer": "evidence", "confidence": 0.8, "max_examples": None, "cache_dir": None}
    cx["model_toy"] = {"minilm": {"confidence": 0.6}}
    cfg["experiments"]["scale"], cfg["experiments"]["smoke"] = "smoke", {"max_examples": 2}  # a cap toy's section shares
    return cfg


def test_a_system_with_a_runner_of_its_own_is_planned_sized_placed_run_and_scored(monkeypatch, tmp_path):
    """Registered here alone (its record, its runner and its options class): the generic rules plan its runs, the
    generic builder makes its options, its jobs take its model's resources row on the cluster, the generic step
    runs it and scoring.steps:clinifact scores it."""
    monkeypatch.setitem(C.CLINIFACT_SYSTEMS, "toy", TOY)
    assert TOY.folder == TOY.section == "toy" and TOY.rule == C.SYSTEM_RULE and TOY.score_rule == C.SYSTEM_SCORE_RULE
    assert C.wildcard_pattern() == "toy" and re.fullmatch(C.wildcard_pattern(), "toy") and not re.fullmatch(C.wildcard_pattern(), "zero_shot")
    # the rule's step param, as Snakemake evaluates it: a runner outside medfc is versioned by its module's source
    step = versioned("experiments.steps:clinifact_system", C.runner_of("toy"))
    assert re.fullmatch(r"experiments\.steps:clinifact_system@[0-9a-f]{12}\+[0-9a-f]{12}", step), step
    cfg = toy_config()
    plan = Plan(cfg)
    plan.check()  # every planned job's options built and typed (ToyOptions, CliniFactSystemOptions)
    runs = plan.clinifact_runs()
    assert [(r["model"], r["system"], r["dir"]) for r in runs] == [
        ("tfidf", "discriminative", "results/experiments/clinifact/tfidf"),
        ("tfidf", "toy", "results/experiments/clinifact/toy/tfidf"), ("minilm", "toy", "results/experiments/clinifact/toy/minilm")]
    assert runs[2]["benchmark"] == "results/timings/experiments/clinifact/toy/minilm.tsv"
    # the job table: the generic pair plans its runs, the discriminative rules only their own
    toy_jobs = [{"system": "toy", "model": "tfidf"}, {"system": "toy", "model": "minilm"}]
    assert job_spec(C.SYSTEM_RULE).planned(plan) == job_spec(C.SYSTEM_SCORE_RULE).planned(plan) == toy_jobs
    assert job_spec("clinifact_experiment").planned(plan) == [{"model": "tfidf"}]
    targets = plan.targets()
    assert {"results/experiments/clinifact/toy/minilm/predictions.jsonl", "results/experiments/clinifact/toy/minilm/scores.json"} <= set(targets)
    # its options: toy < model_toy[model] < the smoke cap it shares, its model's name, its cache and save dirs
    w = toy_jobs[1]
    own = {"answer": "evidence", "confidence": 0.6, "max_examples": 2, "model": plan.model_name("minilm"),
           "cache_dir": "cache/toy", "save_dir": "results/checkpoints/clinifact/toy/minilm"}
    assert plan.options(C.SYSTEM_RULE, w) == {"options": own, "system": "toy"} and plan.clinifact_options("toy", "minilm").to_mapping() == own
    assert plan.clinifact_runner_options("toy", "tfidf").confidence == 0.8
    assert plan.inputs(C.SYSTEM_RULE, w) == plan.clinifact_split_inputs()
    assert plan.options(C.SYSTEM_SCORE_RULE, w) == plan.clinifact_score_options("toy")
    assert [clinifact_name(e) for e in plan.table_options("clinifact_table8")["entries"]] == ["tfidf", "tfidf (toy)", "minilm (toy)"]
    # its place and its jobs' resources: the generic rule is a training rule; each job its model's kind's row
    rows = cfg["experiments"]["resources"]
    assert C.SYSTEM_RULE in cluster.cluster_rules(cfg) and C.SYSTEM_SCORE_RULE in cluster.local_rules(cfg)
    assert plan.job_resources(C.SYSTEM_RULE, toy_jobs[0]) == {"gpu": 0, **rows["tfidf"]}
    cfg["experiments"]["gpu"] = 1
    assert Plan(cfg).job_resources(C.SYSTEM_RULE, w) == {"gpu": 1, **rows["encoder"]}
    # a mistake in its section stops the plan naming the key
    bad = toy_config()
    bad["experiments"]["clinifact"]["model_toy"] = {"minilm": {"confidnce": 0.6}}
    with pytest.raises(ValueError, match=r"experiments\.clinifact\.model_toy\.minilm\.confidnce is not a key of experiments\.clinifact\.toy"):
        Plan(bad).check()
    del bad["experiments"]["clinifact"]["model_toy"]["minilm"], bad["experiments"]["clinifact"]["toy"]["answer"]
    with pytest.raises(OptionsError, match=r"missing experiments\.clinifact\.toy\[tfidf\]\.answer"):
        Plan(bad).check()
    # the generic step runs its runner on a tiny test split; scoring.steps:clinifact scores its predictions
    test_csv = tmp_path / "test_set.csv"
    with test_csv.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["index", "claim", "article_title", "article_abstract", "label"])
        writer.writeheader()
        for i, code in enumerate((1, 0, 1)):  # evidence, inconclusive, evidence: only two are read (max_examples)
            writer.writerow({"index": f"p{i}", "claim": f"claim {i}", "article_title": "t", "article_abstract": "an abstract", "label": code})
    run_dir = tmp_path / "toy" / "minilm"
    outputs = {"predictions": str(run_dir / "predictions.jsonl"), "info": str(run_dir / "info.json")}
    info = call_step(experiment_steps.clinifact_system, {**plan.inputs(C.SYSTEM_RULE, w), "test": str(test_csv)}, outputs,
                     plan.options(C.SYSTEM_RULE, w), threads=3)
    records = [json.loads(line) for line in Path(outputs["predictions"]).read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["system"], r["label"], r["pred_label"], r["probs"]["evidence"]) for r in records] == [
        ("p0", "toy", "evidence", "evidence", 0.6), ("p1", "toy", "inconclusive", "evidence", 0.6)]
    written = json.loads(Path(outputs["info"]).read_text(encoding="utf-8"))
    assert written == info and (written["n_test"], written["threads"], written["model_config_name"]) == (2, 3, plan.model_name("minilm"))
    assert "provenance" in written
    scores = {"scores": str(run_dir / "scores.json"), "report": str(run_dir / "scores.skipped.json")}
    call_step(scoring_steps.clinifact, {"predictions": outputs["predictions"]}, scores, plan.options(C.SYSTEM_SCORE_RULE, w))
    scored = json.loads(Path(scores["scores"]).read_text(encoding="utf-8"))
    assert (scored["system"], scored["n"], scored["accuracy"]) == ("toy", 2, 0.5)
    # the generic step's options take only a system with a runner, and its runner's options class
    with pytest.raises(OptionsError, match=r"'zero_shot' is not one of \['toy'\]"):
        C.CliniFactSystemOptions.from_mapping({"system": "zero_shot", "options": own})
    with pytest.raises(OptionsError, match=r"missing x\.options\.answer"):
        C.CliniFactSystemOptions.from_mapping({"system": "toy", "options": {k: v for k, v in own.items() if k != "answer"}}, where="x")


def test_a_record_with_a_runner_runs_through_the_generic_rules_only():
    """A record with a runner names its options class and leaves its options, rules and folder to the generic ones;
    one without names them all."""
    runner = {"runner": "m:run", "options_class": "m:Options"}
    assert C.CliniFactSystem("toy", title="toy", **runner).folder == "toy"
    for fields, message in [({"runner": "m:run"}, "names its options class"), ({**runner, "options": "clinifact_zero_shot_options"}, "generic method"),
                            ({**runner, "rule": "clinifact_toy"}, "runs through the rules clinifact_system"),
                            ({**runner, "placement": "model"}, "is placed compute"), ({**runner, "ensemble_rule": "clinifact_ensemble"}, "runs no ensembles"),
                            ({**runner, "folder": "elsewhere"}, "in the folder 'toy'")]:
        with pytest.raises(ValueError, match=message):
            C.CliniFactSystem("toy", title="toy", **fields)
    with pytest.raises(ValueError, match="names its options method, its section, its rule and its score rule"):
        C.CliniFactSystem("toy", title="toy", options="clinifact_zero_shot_options", section="zero_shot")
    with pytest.raises(ValueError, match="has no runner"):
        C.CLINIFACT_SYSTEMS["zero_shot"].run_function()


SRC = REPO / "src" / "medfc"


def test_the_placement_and_resources_of_a_systems_rules_are_its_records():
    """plan/cluster.py and plan/resources.py name no rule of a CliniFact system in their code (only in their
    docstrings): the places and the resources rows follow each record's placement and resources."""
    rules = {r for s in C.CLINIFACT_SYSTEMS.values() for r in (s.rule, s.score_rule, s.ensemble_rule, s.inner_cv_rule) if r}
    for spec in C.CLINIFACT_SYSTEMS.values():
        assert spec.placement in ("compute", "model") and (spec.placement == "compute" or spec.asks_llm), spec.name
        assert spec.resources == resources.MODEL_KIND or spec.resources in resources.LLM_ROWS[::2], spec.name
    assert [C.CLINIFACT_SYSTEMS[n].rule in cluster.COMPUTE_RULES for n in C.CLINIFACT_SYSTEMS] == [True, False, True]
    assert C.SYSTEM_RULE in cluster.COMPUTE_RULES and C.SYSTEM_SCORE_RULE in cluster.LIGHT_RULES and C.SYSTEM_RULE in resources.MODEL_RULES
    assert cluster.MODEL_RULES[1] == "clinifact_zero_shot" and resources.MODEL_RULES[1:4] == tuple(s.rule for s in C.CLINIFACT_SYSTEMS.values())
    for module in (cluster, resources):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        named = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings and n.value in rules})
        assert named == [], f"{module.__name__} names {named}: read them from the CliniFact systems' records"


def test_no_comparison_with_a_systems_name_is_left_in_the_plan_or_the_tables():
    """A CliniFact system is looked up in the registry, never tested for by name (``system == "zero_shot"``) nor
    recognised by its row's suffix (``"(zero-shot)" in model``) in medfc/plan or medfc/tables."""
    names = "|".join(map(re.escape, C.CLINIFACT_SYSTEMS))
    suffixes = "|".join(re.escape(s.suffix.strip()) for s in C.CLINIFACT_SYSTEMS.values() if s.suffix)
    compared = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=|(not\s+)?in\b)|["']({suffixes})["']""")
    files = [*sorted((SRC / "plan").glob("*.py")), *sorted((SRC / "tables").glob("*.py"))]
    found = [f"{p.relative_to(SRC)}:{n}: {line.strip()}" for p in files for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if compared.search(line)]
    assert found == []
    assert compared.search('if system == "zero_shot":') and compared.search('"(fine-tuned)" in model')  # the check sees them
