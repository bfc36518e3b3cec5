"""Each rule is declared once: its name, wildcards and paths in its rule, which names the plan's function of its
name (``PLAN.options_of(HealthFCPlan.healthfc_experiment)``, ``PLAN.inputs_of``, ``PLAN.prompts_of``,
``PLAN.threads_of``, ``PLAN.resources_of``); that function carries the rule's record (:func:`medfc.plan.jobs.job`),
whose other functions it names by reference and which take only wildcards of its rule; ``Plan.build_jobs`` is one
loop over the records."""

from __future__ import annotations

import dataclasses
import json
import re
import typing

import pytest

from medfc.cli import resolve_step, step_arguments
from medfc.common.options import Options, Runtime
from medfc.plan import Plan, job_specs
from medfc.config.validate import merged_config, plan_for
from medfc.plan.jobs import job, parameters
from medfc.plan.jobs import PARTS
from tests.helpers.config import defaults
from tests.helpers.workflow import REPO

RULES = REPO / "workflow" / "rules"
ENTRY = {"options_of": "options", "inputs_of": "inputs", "prompts_of": "prompts", "threads_of": "resources", "resources_of": "resources"}


def rule_blocks() -> dict[str, str]:
    """rule name → its text, for every rule of every .smk file."""
    blocks: dict[str, str] = {}
    for smk in sorted(RULES.glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        for m in re.finditer(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", text, re.M | re.S):
            assert m.group(1) not in blocks, m.group(1)
            blocks[m.group(1)] = m.group(2)
    return blocks


def section(body: str, name: str) -> str:
    """One directive's lines of a rule (``input:``, ``output:``, ``params:``...)."""
    m = re.search(rf"^    {name}:\n((?:        .*\n|\n)*)", body, re.M)
    return m.group(1) if m else ""


BLOCKS = rule_blocks()
TABLE = job_specs()
CLASSES = {cls.__name__: cls for cls in {type(getattr(Plan(defaults()), part)) for part in PARTS}}


def test_the_rules_name_the_plan_function_of_their_own_name_only():
    """A rule reaches the plan through its function (``PLAN.options_of(<Part>.<its name>)``...), never by a name in a
    string, nor through another rule's function or a per-rule method of the plan."""
    allowed = {*ENTRY, "layout", "models.model_alias_pattern", "experiments.inner_cv_dir"}
    for rule, body in BLOCKS.items():
        called = {f"{a}.{b}" if a in PARTS else a for a, b in re.findall(r"PLAN\.(\w+)(?:\.(\w+))?", body)}
        assert called <= allowed, f"{rule} calls PLAN.{sorted(called - allowed)}"
        assert not re.search(r'PLAN\.\w+\("', body), f"{rule} names a rule in a string"
        for owner, name in re.findall(r"PLAN\.(?:options_of|inputs_of|prompts_of|threads_of|resources_of)\((\w+)\.(\w+)\)", body):
            assert name == rule and getattr(CLASSES[owner], name) is TABLE[rule].function, f"{rule} names {owner}.{name}"
        params = section(body, "params")
        option = re.findall(r"^        options=(.*)$", params, re.M)
        assert option in ([], [f"PLAN.options_of({TABLE[rule].function.__qualname__}),"]), f"{rule}: options={option}"


def test_every_rule_has_its_record_and_every_record_its_rule():
    with_options = {r for r, body in BLOCKS.items() if re.search(r"^        options=", section(body, "params"), re.M)}
    assert with_options == set(TABLE), (sorted(with_options - set(TABLE)), sorted(set(TABLE) - with_options))
    assert set(TABLE) == set(BLOCKS) - {"all", "datasets", "tables", "figures"}  # the named targets have no jobs of their own
    for rule, spec in TABLE.items():
        body = BLOCKS[rule]
        assert spec.rule == rule == spec.function.__name__, rule
        asks = {ENTRY[e] for e in ENTRY if f"PLAN.{e}(" in body}
        has = {"options", *(facet for facet in ("inputs", "prompts", "resources") if getattr(spec, facet) is not None)}
        assert asks == has, f"{rule}: the rule asks for {sorted(asks)}, its record builds {sorted(has)}"


def output_wildcards(rule: str) -> set[str]:
    """The wildcards of a rule's output paths."""
    return set(re.findall(r"\{\{(\w+)\}\}", section(BLOCKS[rule], "output")))


def test_each_records_functions_take_wildcards_of_its_rule():
    for rule, spec in TABLE.items():
        in_paths = output_wildcards(rule)
        for facet in ("function", "inputs", "prompts", "resources"):
            fn = getattr(spec, facet)
            if fn is not None:
                assert set(parameters(fn)) - {"rule", "wildcards"} <= in_paths, f"{rule}.{facet}: {parameters(fn)} not among {in_paths}"
        for w in spec.planned(Plan(defaults())):
            assert set(w) == in_paths, (rule, w)


def test_the_entry_points_give_what_the_methods_give():
    plan = Plan(defaults())
    w = {"lang": "en", "model": "tfidf", "system": "oracle", "fold": "1"}
    assert plan.options("healthfc_experiment", w) == plan.healthfc.healthfc_experiment("en", "tfidf", "oracle", "1").to_mapping()
    assert plan.options_of(type(plan.healthfc).healthfc_experiment)(w) == plan.options("healthfc_experiment", w)
    assert plan.inputs("healthfc_experiment", w) == plan.healthfc.healthfc_experiment_inputs("oracle")
    assert plan.options("healthfc_score", w) == plan.healthfc.healthfc_score("en", "oracle")
    assert plan.options("pairs_score", {"dataset": "clinifact", "model": "tfidf"}) == plan.experiments.pairs_score_options("discriminative", "clinifact")
    assert plan.inputs("clinifact_zero_shot", {"model": "x"}) == plan.experiments.clinifact_zero_shot_inputs()
    assert plan.options("healthfc_crawl") == {**plan.config["healthfc"]["crawl"], "http_cache_dir": "cache/healthfc/http",
                                              "jobdir": "cache/healthfc/crawl-job"}
    assert plan.options("medsnip_table", {"dataset": "bench"}) == {"title": "MedSNIP-Bench", "dataset": "bench"}
    assert plan.inputs("healthfc_parse") == {} and plan.prompts("table", {"table": "clinifact_table8"}) == {}
    resources = plan.resources_of(type(plan.healthfc).healthfc_experiment)
    assert {k: f(w) for k, f in resources.items()} == {k: v for k, v in plan.job_resources("healthfc_experiment", w).items() if k != "threads"}
    with pytest.raises(ValueError, match="no_such_rule is not a rule of the plan's job table"):
        plan.options("no_such_rule", {})
    with pytest.raises(ValueError, match="table has fixed resources in its rule"):
        plan.job_resources("table", {"table": "clinifact_table8"})
    with pytest.raises(ValueError, match="Plan.planned_jobs builds no job's options"):
        plan.options_of(Plan.planned_jobs)


def test_build_jobs_is_one_loop_over_the_records(monkeypatch):
    """Every planned job of every record is built once, in the records' order; a record's mistake stops it."""
    from medfc.plan import jobs

    cfg = defaults()
    cfg["stages"]["experiments"] = True
    plan = Plan(cfg)
    built: list[tuple[str, str]] = []
    monkeypatch.setattr(plan, "job_options", lambda rule, w: built.append((rule, str(sorted(w.items())))))
    monkeypatch.setattr(jobs, "build", lambda *args: {})
    plan.__dict__["job_table"] = TABLE
    plan.build_jobs()
    planned = [(rule, str(sorted(w.items()))) for rule, spec in TABLE.items() if spec.checked for w in spec.planned(plan)]
    assert built == planned and len(set(built)) == len(built) and built
    assert {rule for rule, _ in built} >= {"healthfc_experiment", "healthfc_score", "table", "pairs_experiment", "healthfc_dataset"}
    monkeypatch.undo()

    def healthfc_experiment(self):
        raise ValueError("config: experiments.healthfc.train.lr: broken")

    broken = dataclasses.replace(TABLE["healthfc_experiment"], function=healthfc_experiment, planned=lambda plan: [{}])
    plan = Plan(cfg)
    plan.__dict__["job_table"] = {"healthfc_experiment": broken}
    with pytest.raises(ValueError, match="broken"):
        plan.build_jobs()
    fresh = Plan(cfg)
    assert fresh.job_table is fresh.job_table and plan.job_spec("healthfc_experiment") is broken  # built once per plan
    assert job("light", lambda plan: [])(healthfc_experiment).job.rule == "healthfc_experiment"  # the function's name is the rule's


# ---------------------------------------------------------------------- the options a job receives
CONFIGS = [["config.yaml"], ["config.yaml", "paper.yaml"], ["live.yaml", "paper.yaml"], ["cpu.yaml"], ["cpu.yaml", "cpu-finetuned.yaml"],
           ["cpu.yaml", "cpu-gbm-embeddings.yaml"], ["test_experiments.yaml"], ["test_medsnip.yaml"], ["test_slurm_paper.yaml"]]
STEPS = {rule: m.group(1) for rule, body in BLOCKS.items() if (m := re.search(r'versioned\(f?"([^"]+)"', body))}


def step_of(rule: str, wildcards: dict[str, str]) -> str:
    return STEPS[rule].replace("{w.table}", wildcards.get("table", ""))


def options_hint(step: str) -> type | None:
    """The class a step's ``options`` is annotated with (None: it takes a plain mapping)."""
    hint = typing.get_type_hints(resolve_step(step)).get("options")
    return hint if isinstance(hint, type) and issubclass(hint, Options) else None


def test_each_records_options_class_is_its_steps():
    for rule, spec in TABLE.items():
        if isinstance(spec.options_class, type):
            assert spec.options_class is options_hint(step_of(rule, {})), rule


@pytest.mark.parametrize("names", CONFIGS, ids="+".join)
def test_each_planned_job_receives_the_object_the_plan_made(names):
    """The plan types a job's options once (``Plan.job_options``: of its step's class) and the rule's params are
    that object serialised (``Plan.options``: plain JSON values, every options object's keys sorted); the job
    builds from them (``medfc.cli.step_arguments``, as the runner does) an object equal to the plan's."""
    plan = plan_for(merged_config([REPO / "config" / n for n in names]), REPO / "workflow" / "schemas" / "config.schema.yaml")
    typed_jobs = 0
    for spec, w in plan.planned_jobs():
        assert set(w) == output_wildcards(spec.rule), (spec.rule, w)  # the job's wildcards are its rule's paths'
        made, params = plan.job_options(spec.rule, w), plan.options(spec.rule, w)
        assert json.loads(json.dumps(params)) == params, spec.rule
        step = step_of(spec.rule, w)
        cls = options_hint(step)
        if cls is None:
            assert not isinstance(made, Options) and params == made, spec.rule
            continue
        assert type(made) is cls, (spec.rule, w)
        received, _ = step_arguments(resolve_step(step), params, Runtime(threads=1, log_file=None))
        assert received == made, (spec.rule, w)
        assert list(params) == sorted(params) and plan.job_options(spec.rule, w) is made  # built once, kept
        typed_jobs += 1
    assert typed_jobs >= 10
