"""The CliniFact systems are one registry (medfc.experiments.clinifact.systems): the plan's run matrix, options,
checks and prerequisites, the tables' row names and the rules' declarations follow its records; a test-only
system added to it and to the plan's builders is planned, named, placed, sized and checked; neither the plan nor
the tables compare anything with a system's name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from medfc.experiments.clinifact import systems as C
from medfc.plan import Plan, cluster, job_specs, resources
from medfc.config.checks import check_plan
from medfc.plan.experiments import ExperimentsPlan, _local_model, _system_models
from medfc.plan.jobs import job
from medfc.plan.resources import ModelRow
from medfc.scoring.options import PairsScoreOptions
from medfc.config.prerequisites import _llms
from medfc.tables.clinifact import table8
from medfc.tables.common import clinifact_name
from tests.helpers.config import SCHEMA, defaults
from tests.helpers.workflow import REPO

RULES = REPO / "workflow" / "rules"
# each system's rules: it predicts, it scores, [an ensemble's, a stacked member's inner CV]
SYSTEM_RULES = {"discriminative": ("pairs_experiment", "pairs_score", "pairs_ensemble", "pairs_inner_cv"),
                "zero_shot": ("clinifact_zero_shot", "clinifact_zero_shot_score"),
                "fine_tuned": ("clinifact_fine_tune", "clinifact_fine_tune_score")}


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
    """Each record's rule writes its run folder's predictions with the options of the plan's function of its name,
    its score rule scores them as its system, and its ensemble rule (discriminative only) writes the same folder."""
    experiments, scoring = rule_blocks(RULES / "experiments.smk"), rule_blocks(RULES / "scoring.smk")
    table = job_specs()
    plan = Plan(defaults())
    assert list(SYSTEM_RULES) == list(C.CLINIFACT_SYSTEMS)
    for spec in C.CLINIFACT_SYSTEMS.values():
        rule, score_rule, *ensemble = SYSTEM_RULES[spec.name]
        # the one path's system: its rules' folder is every pairs dataset's (CliniFact's is <experiments>/clinifact/<model>)
        folder = "{EXP_DIR}/{{dataset}}/{{model}}" if spec.pairs else spec.run_dir("{EXP_DIR}", "{{model}}")
        made = experiments[rule]
        assert f'predictions=f"{folder}/predictions.jsonl"' in made, rule
        assert f"options=PLAN.options_of(ExperimentsPlan.{rule})" in made, rule
        assert table[rule].function is getattr(ExperimentsPlan, rule), rule
        assert table[rule].placement == spec.placement, rule
        score = scoring[score_rule]
        assert f"predictions=rules.{rule}.output.predictions" in score, score_rule
        assert f'scores=f"{folder}/scores.json"' in score, score_rule
        assert f"options=PLAN.options_of(ExperimentsPlan.{score_rule})" in score, score_rule
        w = {"dataset": "clinifact", "model": "tfidf"} if spec.pairs else {"model": "tfidf"}
        scored = plan.options(score_rule, w)
        assert scored["system"] == spec.name and scored["dataset"] == "clinifact"
        assert bool(ensemble) == spec.pairs == (C.ensembling_system() is spec), spec.name
        if ensemble:
            assert f'predictions=f"{folder}/predictions.jsonl"' in experiments[ensemble[0]], ensemble[0]
    made = {r for rules in SYSTEM_RULES.values() for r in rules[:1] + rules[2:]}
    ours = ("clinifact_", "pairs_")
    assert made | {"pairs_final"} == {r for r in experiments if r.startswith(ours)}  # the final model: a row's
    assert {rules[1] for rules in SYSTEM_RULES.values()} == {r for r in scoring if r.startswith(ours)}


def test_the_row_names_and_the_papers_rows_systems():
    assert [clinifact_name({"model": "m", "system": s}) for s in C.CLINIFACT_SYSTEMS] == ["m", "m (zero-shot)", "m (fine-tuned)"]
    assert clinifact_name({"model": "m"}) == "m"
    assert [C.system_of_row(r) for r in ("BioBERT", "Llama3-70B (zero-shot)", "OpenBioLLM-70B (fine-tuned)")] == \
        ["discriminative", "zero_shot", "fine_tuned"]


FEW_SHOT = C.CliniFactSystem("few_shot", section="zero_shot", title="few-shot", folder="few_shot", suffix=" (few-shot)",
                             asks_llm=True, placement="model", resources="llm")


def clinifact_few_shot(self, model):
    return self.clinifact_zero_shot(model)


def clinifact_few_shot_score(self, model):
    return self.pairs_score_options(FEW_SHOT.name, "clinifact")


def test_a_system_registered_in_a_test_is_planned_named_and_checked(monkeypatch, tmp_path):
    """A system joins with its record and its two rules' functions (here set on the plan's class by the test)."""
    monkeypatch.setitem(C.CLINIFACT_SYSTEMS, "few_shot", FEW_SHOT)
    few_shot = job(FEW_SHOT.placement, _system_models(FEW_SHOT.name), inputs=ExperimentsPlan.clinifact_zero_shot_inputs,
                   resources=ModelRow(FEW_SHOT), local_model=_local_model(FEW_SHOT))(clinifact_few_shot)
    monkeypatch.setattr(ExperimentsPlan, "clinifact_few_shot", few_shot, raising=False)
    monkeypatch.setattr(ExperimentsPlan, "clinifact_few_shot_score",
                        job("light", _system_models(FEW_SHOT.name), options_class=PairsScoreOptions)(clinifact_few_shot_score), raising=False)
    cfg = defaults()
    cfg["models"]["aliases"]["remote-llm"] = "org/remote-llm"
    cfg["models"]["clinifact"] = {"discriminative": ["tfidf"], "zero_shot": [], "fine_tuned": [], "few_shot": ["remote-llm"]}
    cfg["experiments"]["clinifact"]["model_zero_shot"] = {"remote-llm": {"backend": "openai", "base_url": "http://gpu7:8000/v1",
                                                                          "api_key_env": "MEDFC_TEST_NO_SUCH_KEY"}}
    plan = Plan(cfg)
    runs = plan.experiments.clinifact_runs()
    assert [(r["model"], r["system"], r["dir"]) for r in runs] == [
        ("tfidf", "discriminative", "results/experiments/clinifact/tfidf"),
        ("remote-llm", "few_shot", "results/experiments/clinifact/few_shot/remote-llm")]
    assert runs[1]["benchmark"] == "results/timings/experiments/clinifact/few_shot/remote-llm.tsv"
    assert plan.job_options("clinifact_few_shot", {"model": "remote-llm"}).to_mapping() == plan.experiments.clinifact_zero_shot("remote-llm").to_mapping()
    assert plan.tables.table_inputs("clinifact_table8")["scores"][1] == "results/experiments/clinifact/few_shot/remote-llm/scores.json"
    assert [clinifact_name(e) for e in plan.tables.table("clinifact_table8")["entries"]] == ["tfidf", "remote-llm (few-shot)"]
    monkeypatch.setattr(plan, "stage_enabled", lambda stage: stage == "experiments")
    rules = ("pairs_experiment", "clinifact_few_shot")
    planned = [(s.rule, w) for s, w in plan.planned_jobs() if s.rule.startswith(rules)]
    assert planned == [("pairs_experiment", {"dataset": "clinifact", "model": "tfidf"}),
                       ("clinifact_few_shot", {"model": "remote-llm"}),
                       ("clinifact_few_shot_score", {"model": "remote-llm"})]
    monkeypatch.delenv("MEDFC_TEST_NO_SUCH_KEY", raising=False)
    problems = [p for p in _llms(plan) if p]
    assert len(problems) == 1 and "experiments.clinifact.model_zero_shot.remote-llm.api_key_env" in problems[0]
    assert "the few-shot model remote-llm is asked" in problems[0]
    # its rules' places and its jobs' resources: a model rule, run where Snakemake runs while its model is served
    rows = cfg["experiments"]["resources"]
    assert "clinifact_few_shot" in cluster.local_rules(cfg) and "clinifact_few_shot" not in cluster.cluster_rules(cfg)
    assert "clinifact_few_shot_score" in cluster.local_rules(cfg) and "clinifact_few_shot" in job_specs()
    assert plan.job_resources("clinifact_few_shot", {"model": "remote-llm"}) == {"gpu": 0, **rows["server"]}
    cfg["experiments"]["clinifact"]["model_zero_shot"]["remote-llm"]["backend"] = "transformers"  # now run in the job
    assert "clinifact_few_shot" in cluster.cluster_rules(cfg)
    assert Plan(cfg).job_resources("clinifact_few_shot", {"model": "remote-llm"}) == {"gpu": cfg["experiments"]["gpu"], **rows["llm"]}
    cfg["models"]["clinifact"]["few_shot"] = ["nope"]
    with pytest.raises(ValueError, match=r"config: models\.clinifact\.few_shot: 'nope' names no model"):
        check_plan(Plan(cfg))
    # the paper's rows of the system's kind follow it into Table 8
    score = tmp_path / "scores.json"
    score.write_text('{"n": 2, "accuracy": 0.5, "macro_precision": 0.5, "macro_recall": 0.5, "macro_f1": 0.5}', encoding="utf-8")
    papers = {"clinifact": {"cite": "P", "table8": {"X (few-shot)": {"accuracy": 1, "macro_f1": 2}, "Y (zero-shot)": {"accuracy": 3, "macro_f1": 4}}}}
    t8, _ = table8([str(score)], [{"model": "remote-llm", "system": "few_shot"}], papers, "cpu")
    assert list(t8["model"]) == ["remote-llm (few-shot)", "X (few-shot)"] and list(t8["system"]) == ["few_shot", "few_shot"]


SRC = REPO / "src" / "medfc"


def test_the_placement_and_resources_of_a_systems_rules_are_its_records():
    """plan/cluster.py and plan/resources.py name no rule of a CliniFact system in their code (only in their
    docstrings): the places and the resources rows follow each record's placement and resources."""
    rules = {r for system_rules in SYSTEM_RULES.values() for r in system_rules}
    for spec in C.CLINIFACT_SYSTEMS.values():
        assert spec.placement in ("compute", "model") and (spec.placement == "compute" or spec.asks_llm), spec.name
        assert spec.resources == resources.MODEL_KIND or spec.resources in resources.LLM_ROWS[::2], spec.name
    compute = cluster.rules_placed("compute")
    assert [SYSTEM_RULES[n][0] in compute for n in C.CLINIFACT_SYSTEMS] == [True, False, True]
    assert cluster.rules_placed("model")[1] == "clinifact_zero_shot"
    rows = resources.model_rows(Plan(defaults()))
    systems = C.CLINIFACT_SYSTEMS
    assert [rows[SYSTEM_RULES[n][0]].system for n in systems] == [None, systems["zero_shot"], systems["fine_tuned"]]
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
