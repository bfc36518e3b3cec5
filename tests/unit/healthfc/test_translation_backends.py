"""The translation backends' registry (medfc.healthfc.translation_backends): each backend declared once and
looked up — the translator the step builds, whether its model runs in the job (a cluster job, the section's
GPUs) and the API key a run needs; a backend registered in a test alone runs through the translation step, and
no choice in the factories or the plan compares a backend's name."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.common.options import OptionsError
from medfc.healthfc import steps
from medfc.healthfc.options import TranslateOptions
from medfc.healthfc.translation_backends import TRANSLATION_BACKENDS, ApiKey, TranslationBackend, translation_backend
from medfc.healthfc.translators import BatchCallback, CTranslate2Translator, DeepLTranslator, MarianTranslator
from medfc.plan import Plan
from medfc.plan.cluster import cluster_rules, runs_a_local_model
from medfc.config.prerequisites import missing_prerequisites
from tests.helpers.config import SCHEMA, call_step, defaults, section
from tests.helpers.name_comparisons import comparisons_in, name_comparisons

SRC = Path(__file__).resolve().parents[3] / "src" / "medfc"


def _options(tmp_path: Path, **extra: object) -> dict:
    """The healthfc.translation section as the rule passes it, a model that cannot load, no memory yet."""
    tr = {k: v for k, v in section("healthfc.translation").items() if k not in ("memory_seeds", "corrections", "gpu")}
    return {**tr, "model": str(tmp_path / "no-such-model"), "model_name": "test/echo", "device": "cpu",
            "memory": str(tmp_path / "cache/translation_memory.jsonl"), "ct2_cache": str(tmp_path / "cache/ctranslate2"),
            "splitter": "pysbd", **extra}


def test_the_backends_are_looked_up_and_build_their_translators_unloaded(tmp_path, monkeypatch):
    assert list(TRANSLATION_BACKENDS) == ["marian", "ctranslate2", "deepl"]
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["properties"]["healthfc"]["properties"]["translation"]
    assert schema["properties"]["backend"]["enum"] == list(TRANSLATION_BACKENDS)  # the config takes the registry's names
    assert [b.local for b in TRANSLATION_BACKENDS.values()] == [True, True, False]
    assert translation_backend("deepl").key == ApiKey("DEEPL_AUTH_KEY", "the deepl backend sends every sentence to the DeepL API")
    with pytest.raises(ValueError, match=r"unknown translation backend 'm2m' \(marian \| ctranslate2 \| deepl\)"):
        translation_backend("m2m")
    monkeypatch.setenv("DEEPL_AUTH_KEY", "k:fx")
    built = {}
    for name in TRANSLATION_BACKENDS:
        options = TranslateOptions.from_mapping(_options(tmp_path, backend=name))
        built[name] = translation_backend(options.backend).build(options)
    marian, ct2, deepl = built.values()
    assert type(marian) is MarianTranslator and type(ct2) is CTranslate2Translator and type(deepl) is DeepLTranslator
    assert marian.name == ct2.name == deepl.name == "test/echo"
    assert marian._model is None and ct2.converted is None  # nothing loaded
    assert (marian.model_name_or_path, marian.device_request, marian.batch_size) == (str(tmp_path / "no-such-model"), "cpu", 32)
    assert str(ct2.cache_dir) == str(tmp_path / "cache/ctranslate2") and deepl.base_url == "https://api-free.deepl.com"


class Echo:
    """A test-only backend's translator: ``EN(<text>)``, one batch."""

    origin = "model"

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[str] = []

    def translate(self, texts: Sequence[str], on_batch: BatchCallback | None = None) -> list[str]:
        self.sent += texts
        out = [f"EN({t})" for t in texts]
        if on_batch is not None:
            on_batch(list(texts), out)
        return out


ARTICLE = {"article_id": "a1", "url": "https://example.org/kaffee/", "layout": "current", "title": "Kaffee und Herz",
           "date": None, "authors": [], "reviewers": [], "teaser": "Hilft Kaffee?", "body_paragraphs": ["Kaffee hilft nicht. Tee auch nicht."],
           "studies": "Eine Studie fand nichts.", "references": [], "topics": [], "n_claims": 1, "body": ""}
CLAIM = {"claim_id": "c1", "article_id": "a1", "url": "https://example.org/kaffee/", "claim_index": 0,
         "question": "Schützt Kaffee das Herz?", "explanation": "Das ist unklar."}


def test_a_new_backend_is_one_registry_entry(tmp_path, monkeypatch):
    """A backend registered here alone: the options take it, the translation step builds and runs its translator
    through the memory (a rerun asks it for nothing), and the plan places, sizes and checks it from its record."""
    translators: list[Echo] = []

    def build(options: TranslateOptions) -> Echo:
        translators.append(Echo(options.memory_key))
        return translators[-1]

    monkeypatch.setitem(TRANSLATION_BACKENDS, "echo", TranslationBackend("echo", build, local=False, key=ApiKey("MEDFC_TEST_KEY", "echo asks")))
    monkeypatch.delenv("MEDFC_TEST_KEY", raising=False)
    write_jsonl(tmp_path / "articles.jsonl", [ARTICLE])
    write_jsonl(tmp_path / "claims.jsonl", [CLAIM])
    inputs = {"articles": str(tmp_path / "articles.jsonl"), "claims": str(tmp_path / "claims.jsonl"), "memory_seeds": []}
    outputs = {k: str(tmp_path / f"out/{k}") for k in ("sentences", "claims_en", "report")}
    call_step(steps.translate, inputs, outputs, _options(tmp_path, backend="echo"))
    german = ["Kaffee und Herz", "Hilft Kaffee?", "Kaffee hilft nicht.", "Tee auch nicht.", "Eine Studie fand nichts.",
              "Schützt Kaffee das Herz?", "Das ist unklar."]
    assert len(translators) == 1 and translators[0].sent == german and translators[0].name == "test/echo"
    report = read_json(outputs["report"])
    assert (report["backend"], report["n_unique"], report["n_model"], report["origins"]) == ("echo", 7, 7, {"model": 7})
    [sentences] = read_jsonl(outputs["sentences"])
    assert sentences["sentences_en"] == ["EN(Kaffee hilft nicht.)", "EN(Tee auch nicht.)", "EN(Eine Studie fand nichts.)"]
    assert sentences["sections"] == ["body", "body", "studies"] and sentences["title_en"] == "EN(Kaffee und Herz)"
    [claim] = read_jsonl(outputs["claims_en"])
    assert (claim["question_en"], claim["explanation_en"]) == ("EN(Schützt Kaffee das Herz?)", "EN(Das ist unklar.)")
    memory = list(read_jsonl(tmp_path / "cache/translation_memory.jsonl"))
    assert sorted(r["source"] for r in memory) == sorted(german) and {(r["model"], r["origin"]) for r in memory} == {("test/echo", "model")}
    call_step(steps.translate, inputs, outputs, _options(tmp_path, backend="echo"))  # everything is in the memory now
    assert len(translators) == 1 and read_json(outputs["report"])["n_memory_hits"] == 7

    # the plan: a service (no cluster job, no GPUs), its key checked before any job
    cfg = defaults()
    cfg["healthfc"]["translation"] |= {"backend": "echo", "gpu": 1}
    assert not runs_a_local_model(cfg, "healthfc_translate") and "healthfc_translate" not in cluster_rules(cfg)
    plan = Plan(cfg)
    assert plan.job_resources("healthfc_translate", {})["gpu"] == 0
    assert TranslateOptions.from_mapping(plan.job_options("healthfc_translate", {})).backend == "echo"
    assert "prerequisite: MEDFC_TEST_KEY (named by healthfc.translation.backend) is not set: echo asks; export MEDFC_TEST_KEY=<your key>" \
        in missing_prerequisites(plan)
    # a local one: a cluster job with the section's GPUs, no key
    monkeypatch.setitem(TRANSLATION_BACKENDS, "echo", TranslationBackend("echo", build, local=True))
    assert runs_a_local_model(cfg, "healthfc_translate") and "healthfc_translate" in cluster_rules(cfg)
    assert Plan(cfg).job_resources("healthfc_translate", {})["gpu"] == 1
    assert not any("MEDFC_TEST_KEY" in line for line in missing_prerequisites(Plan(cfg)))
    with pytest.raises(OptionsError, match=r"options\.backend: 'm2m' is not one of \['marian', 'ctranslate2', 'deepl', 'echo'\]"):
        TranslateOptions.from_mapping(_options(tmp_path, backend="m2m"), where="options")


def test_the_pattern_finds_the_comparisons_it_stands_for():
    pattern = name_comparisons("backend", ["deepl", "marian", "ctranslate2"])
    for line in ('if tr["backend"] == "deepl":', 'return config["backend"] in ("marian", "ctranslate2")', "if 'deepl' != options.backend:",
                 'case "marian":'):
        assert pattern.search(line), line
    assert not pattern.search('name: str = "deepl",') and not pattern.search('origin = "deepl"')


def test_no_choice_compares_a_backends_name():
    files = [*sorted((SRC / "plan").glob("*.py")), SRC / "healthfc" / "translate.py", SRC / "healthfc" / "steps.py"]
    assert comparisons_in(files, "backend", list(TRANSLATION_BACKENDS), SRC) == []
