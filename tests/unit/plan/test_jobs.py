"""The plan as a table of job specs: every rule asks its options, config-dependent inputs, prompts and resources
through one entry point each (``PLAN.options``, ``PLAN.inputs``, ``PLAN.prompts``, ``PLAN.job_resources``,
naming itself), never a per-rule method of the plan; the job table (:func:`medfc.plan.job_specs`) has a record
for every rule, and each record's functions are methods or functions of the plan, named by reference, and take
only wildcards of its rule; ``Plan.build_jobs`` is one loop over the table."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import typing

import pytest

from medfc.cli import resolve_step, step_arguments
from medfc.common.options import Options, Runtime
from medfc.plan import Plan, job_specs
from medfc.plan.config_errors import merged_config, plan_for
from medfc.plan.jobs import JobSpec, PlanCall
from medfc.plan.part import PARTS
from tests.helpers.config import defaults
from tests.helpers.workflow import REPO

RULES = REPO / "workflow" / "rules"
ENTRY = {"options": "options", "inputs": "inputs", "prompts": "prompts", "job_resources": "resources"}


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


def test_the_rules_ask_the_plan_through_its_entry_points_only():
    """No rule calls a per-rule method of the plan (``PLAN.<x>_options``, ``_inputs``, ``_prompts``,
    ``medsnip_resources``...): a rule's params ``options`` and ``prompts`` are ``PLAN.options`` / ``PLAN.prompts``
    of its own name, its unpacked or computed inputs ``PLAN.inputs``, its threads and resources ``PLAN.job_resources``."""
    allowed = {"options", "inputs", "prompts", "job_resources", "layout", "models.model_alias_pattern", "experiments.inner_cv_dir"}
    for rule, body in BLOCKS.items():
        called = {f"{a}.{b}" if a in PARTS else a for a, b in re.findall(r"PLAN\.(\w+)(?:\.(\w+))?", body)}
        assert called <= allowed, f"{rule} calls PLAN.{sorted(called - allowed)}"
        for entry in ("options", "inputs", "prompts", "job_resources"):
            for name in re.findall(rf"PLAN\.{entry}\(\"?(\w*)", body):
                assert name == rule, f"{rule} asks PLAN.{entry} for {name!r}"
            for call in re.findall(rf"PLAN\.{entry}\([^)]*\)", body):
                assert call in (f'PLAN.{entry}("{rule}", w)',), f"{rule}: {call}"
        params = section(body, "params")
        option = re.findall(r"^        options=(.*)$", params, re.M)
        assert option in ([], [f'lambda w: PLAN.options("{rule}", w),']), f"{rule}: options={option}"
        prompts = re.findall(r"^        prompts=(.*)$", params, re.M)
        assert prompts in ([], [f'lambda w: PLAN.prompts("{rule}", w),']), f"{rule}: prompts={prompts}"
        inputs = section(body, "input")
        for line in re.findall(r"^        (unpack\(.*|lambda .*|\w+=(?:lambda|\w+\().*)$", inputs, re.M):
            assert line in (f'unpack(lambda w: PLAN.inputs("{rule}", w)),', f'lambda w: PLAN.inputs("{rule}", w),'), f"{rule}: {line}"


def test_every_rule_with_options_has_its_record_and_every_record_its_rule():
    with_options = {r for r, body in BLOCKS.items() if re.search(r"^        options=", section(body, "params"), re.M)}
    assert with_options == set(TABLE), (sorted(with_options - set(TABLE)), sorted(set(TABLE) - with_options))
    assert set(TABLE) == set(BLOCKS) - {"all", "datasets", "tables", "figures"}  # the named targets have no jobs of their own
    for rule, spec in TABLE.items():
        body = BLOCKS[rule]
        assert spec.rule == rule and spec.options is not None, rule
        asks = {ENTRY[e] for e in ENTRY if f"PLAN.{e}(" in body}
        has = {part for part in ENTRY.values() if getattr(spec, part) is not None}
        assert asks == has, f"{rule}: the rule asks for {sorted(asks)}, its record builds {sorted(has)}"


def test_each_record_names_the_rules_wildcards_and_methods_of_the_plan():
    for rule, spec in TABLE.items():
        in_paths = list(dict.fromkeys(re.findall(r"\{\{(\w+)\}\}", section(BLOCKS[rule], "output"))))
        assert sorted(spec.wildcards) == sorted(in_paths), f"{rule}: record {spec.wildcards}, paths {in_paths}"
        for part in ("options", "inputs", "prompts"):
            fn = getattr(spec, part)
            if isinstance(fn, PlanCall):  # a method of the plan, or a function of medfc.plan taking the plan first
                function = fn.function
                assert getattr(Plan, function.__name__, None) is function or function.__module__.startswith("medfc.plan."), (rule, part)
                assert list(inspect.signature(function).parameters)[0] == ("self" if "." in function.__qualname__ else "plan"), (rule, part)
                assert set(fn.axes) <= set(spec.wildcards), f"{rule}.{part}: {fn.axes} not among {spec.wildcards}"
            else:
                assert fn is None, f"{rule}.{part}: a function that is no PlanCall"


def test_the_entry_points_give_what_the_methods_give():
    plan = Plan(defaults())
    w = {"lang": "en", "model": "tfidf", "system": "oracle", "fold": "1"}
    assert plan.options("healthfc_experiment", w) == plan.healthfc.healthfc_experiment_options("en", "tfidf", "oracle", "1").to_mapping()
    assert plan.inputs("healthfc_experiment", w) == plan.healthfc.healthfc_experiment_inputs("oracle")
    assert plan.options("healthfc_score", w) == plan.healthfc.healthfc_score_options("en", "oracle")
    assert plan.options("pairs_score", {"dataset": "clinifact", "model": "tfidf"}) == plan.experiments.pairs_score_options("discriminative", "clinifact")
    assert plan.inputs("clinifact_zero_shot", {"model": "x"}) == plan.experiments.clinifact_zero_shot_inputs()
    assert plan.options("healthfc_crawl") == {**plan.config["healthfc"]["crawl"], "http_cache_dir": "cache/healthfc/http",
                                              "jobdir": "cache/healthfc/crawl-job"}
    assert plan.options("medsnip_table", {"dataset": "bench"}) == {"title": "MedSNIP-Bench", "dataset": "bench"}
    assert plan.inputs("healthfc_parse") == {} and plan.prompts("table", {"table": "clinifact_table8"}) == {}
    with pytest.raises(ValueError, match="no_such_rule is not a rule of the plan's job table"):
        plan.options("no_such_rule", {})
    with pytest.raises(ValueError, match="table has fixed resources in its rule"):
        plan.job_resources("table", {"table": "clinifact_table8"})


def test_build_jobs_is_one_loop_over_the_table(monkeypatch):
    """Every planned job of every record is built once, in the table's order; a record's mistake stops it."""
    from medfc.plan import jobs

    cfg = defaults()
    cfg["stages"]["experiments"] = True
    plan = Plan(cfg)
    built: list[tuple[str, str]] = []
    table = {rule: dataclasses.replace(spec, options=lambda p, w, rule=rule: built.append((rule, str(sorted(w.items())))),
                                       options_class=None, inputs=None, prompts=None) for rule, spec in TABLE.items()}
    jobs.build_all(plan, table)
    planned = [(rule, str(sorted(w.items()))) for rule, spec in TABLE.items() if spec.checked for w in spec.planned(plan)]
    assert built == planned and len(set(built)) == len(built) and built
    assert {rule for rule, _ in built} >= {"healthfc_experiment", "healthfc_score", "table", "pairs_experiment", "healthfc_dataset"}

    def broken(plan, w):
        raise ValueError("config: experiments.healthfc.train.lr: broken")

    monkeypatch.setitem(job_specs.__globals__, "dataset_jobs", lambda: [])  # the defaults name no HealthFC release
    monkeypatch.setitem(job_specs.__globals__, "experiment_jobs", lambda: [JobSpec("healthfc_experiment", "compute", options=broken,
                                                                                   planned=lambda plan: [{}])])
    with pytest.raises(ValueError, match="broken"):
        plan.build_jobs()
    assert plan.job_spec("healthfc_experiment").options is broken
    assert plan.job_table is plan.job_table  # built once per plan


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
