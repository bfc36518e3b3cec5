"""MedSNIP's answer sources are one registry (``ANSWER_SOURCES`` of :mod:`medfc.medsnip.options`): the plan, the
prepare step and the scoring look a source up. A test-only source, registered here and nowhere else, is planned (its
jobs, the file its answers are read from, its modes, its scoring level) and read by the prepare step through its own
loader; neither the plan nor the MedSNIP steps and scoring compare anything with a source's name."""

from __future__ import annotations

import json
import re
import sys
import types

from medfc.medsnip import steps
from medfc.medsnip.options import ANSWER_SOURCES, AnswerSource
from medfc.plan import Plan, cluster
from medfc.config import checks
from tests.helpers.config import call_step, defaults
from tests.helpers.medsnip import prepare_opts
from tests.helpers.workflow import REPO


def _quiz_answers(path, report, options):
    """The test-only source's loader: one answer per line of a text file, TRUE when it says so."""
    out = []
    for n, line in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        text, _, label = line.partition("|")
        out.append({"answer_id": f"q{n}", "source": "quiz", "query": text, "text": text, "subset": "consumer", "label": label or None,
                    "split": None, "shared_context": {}})
        report.count("answers")
    return out


def test_a_source_registered_in_a_test_is_planned_and_prepared(monkeypatch, tmp_path):
    module = types.ModuleType("medfc_test_quiz")
    module.load = _quiz_answers
    monkeypatch.setitem(sys.modules, "medfc_test_quiz", module)
    monkeypatch.setitem(ANSWER_SOURCES, "quiz", AnswerSource("quiz", "Quiz", "medfc_test_quiz:load", human_units=True, own_level=True))
    quiz = tmp_path / "quiz.txt"
    quiz.write_text("Vitamin C cures colds.|FALSE\nWater is wet.|TRUE\n", encoding="utf-8")
    cfg = defaults()
    cfg["stages"] = {stage: stage == "medsnip" for stage in cfg["stages"]}
    ds = cfg["medsnip"]["datasets"]
    ds["healthfc"]["enabled"] = ds["bench"]["enabled"] = False
    ds["quiz"] = {"enabled": True, "path": str(quiz), "limit": 0, "human_units": True, "level": "answer", "baseline_mode": "atoms"}
    plan = Plan(cfg)
    assert plan.medsnip.medsnip_datasets() == ["quiz"] and not plan.healthfc_data_planned()
    assert plan.inputs("medsnip_prepare", {"dataset": "quiz"}) == {"source": str(quiz)}
    assert plan.medsnip.medsnip_modes("quiz") == [*cfg["medsnip"]["modes"], "human_atoms", "human_snippets"]
    assert plan.options("medsnip_score", {"dataset": "quiz"})["level"] == "answer"
    assert plan.options("medsnip_table", {"dataset": "quiz"}) == {"title": "Quiz", "dataset": "quiz"}
    assert plan.options("medsnip_prepare", {"dataset": "quiz"})["rewrite_claims"] is False  # a source that rewrites nothing
    assert not cluster.runs_a_local_model(cfg, "medsnip_prepare")  # nothing rewritten: it runs where Snakemake runs
    cfg["medsnip"]["llm"].update(model="org/llm", base_url="http://127.0.0.1:8000/v1")
    checks.check_medsnip(plan)  # its section's path is a file
    # the prepare step reads it through its loader
    out = {"answers": tmp_path / "answers.jsonl", "info": tmp_path / "info.json", "report": tmp_path / "report.json"}
    info = call_step(steps.prepare, {"source": str(quiz)}, out, prepare_opts(source="quiz", splits=[]))
    answers = [json.loads(line) for line in out["answers"].read_text(encoding="utf-8").splitlines()]
    assert info["n_answers"] == 2 and info["labels"] == {"FALSE": 1, "TRUE": 1}
    assert [(a["answer_id"], a["label"]) for a in answers] == [("q1", "FALSE"), ("q2", "TRUE")]


def test_no_plan_or_step_code_compares_a_sources_name():
    files = ["src/medfc/plan/medsnip.py", "src/medfc/plan/__init__.py", "src/medfc/config/prerequisites.py", "src/medfc/plan/cluster.py",
             "src/medfc/medsnip/steps.py",
             "src/medfc/medsnip/evaluate.py", "src/medfc/medsnip/options.py"]
    names = "|".join(map(re.escape, ANSWER_SOURCES))
    pattern = re.compile(rf"""(==|!=|\bin)\s*\(?["']({names})["']|["']({names})["']\s*(==|!=|\bin\b)""")
    for file in files:
        text = (REPO / file).read_text(encoding="utf-8")
        assert not pattern.search(text), f"{file}: {pattern.search(text).group(0)}"


def test_the_prepare_rules_code_version_covers_its_sources_loader(monkeypatch, tmp_path):
    """The loader is reached by name (importlib), which the code version cannot follow: the rule names it, so an edit
    of a source's loader reruns that source's prepare job (and only the step's code otherwise)."""
    from medfc.common import codeversion

    smk = (REPO / "workflow" / "rules" / "medsnip.smk").read_text(encoding="utf-8")
    assert 'step=lambda w: versioned("medsnip.steps:prepare", answer_source(w.dataset).loader),' in smk
    versions = {name: codeversion.versioned("medsnip.steps:prepare", s.loader) for name, s in ANSWER_SOURCES.items()}
    assert versions["healthfc"] != codeversion.versioned("medsnip.steps:prepare")
    assert len(set(versions.values())) == len(versions)  # each source's loader is part of its jobs' version
