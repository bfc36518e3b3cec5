"""The LLM backends' registry (medfc.common.llm_backends): each backend declared once and looked up; no choice in
the plan or the factories compares a backend's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from medfc.common.llm_backends import LLM_BACKENDS, LLMBackend, llm_backend, runs_locally
from medfc.common.options import OptionsError
from medfc.experiments.models.options import ZeroShotOptions
from medfc.medsnip.options import LLMOptions
from medfc.plan import Plan
from medfc.plan.cluster import cluster_rules
from tests.helpers.config import defaults, section

SRC = Path(__file__).resolve().parents[3] / "src" / "medfc"


def test_the_backends_are_looked_up_and_an_unknown_one_names_the_known():
    assert runs_locally("transformers") and not runs_locally("openai") and not runs_locally(None) and not runs_locally("x")
    with pytest.raises(ValueError, match=r"unknown LLM backend 'vllm-direct' \(transformers \| openai\)"):
        llm_backend("vllm-direct")
    client = llm_backend("openai").build("served-llm", base_url="http://127.0.0.1:9/v1", api_key_env="")
    assert type(client).__name__ == "OpenAICompatibleLM" and client.backend == "openai"


def test_a_new_backend_is_one_registry_entry(monkeypatch):
    class Echo:
        backend = "echo"

        def __init__(self, model, ledger=None, **kwargs):
            self.model, self.kwargs = model, kwargs

    import sys
    import types

    module = types.ModuleType("medfc_test_echo")
    module.Echo = Echo
    monkeypatch.setitem(sys.modules, "medfc_test_echo", module)
    monkeypatch.setitem(LLM_BACKENDS, "echo", LLMBackend("echo", local=True, client="medfc_test_echo:Echo"))
    client = llm_backend("echo").build("tiny", device="cpu")
    assert isinstance(client, Echo) and client.model == "tiny" and client.kwargs == {"device": "cpu"}
    assert runs_locally("echo") and llm_backend("echo").local
    # the options that name a backend take it (the zero-shot scorer's, MedSNIP's LLMs'), and the plan places and
    # sizes a zero-shot job with it as a local model
    zero_shot = section("experiments.clinifact.zero_shot", backend="echo", model="tiny", cache_dir="c")
    assert ZeroShotOptions.from_mapping(zero_shot).backend == "echo"
    assert LLMOptions.from_mapping({**defaults()["medsnip"]["llm"], "backend": "echo", "model": "tiny", "http_cache_dir": ""}).backend == "echo"
    cfg = defaults()
    cfg["healthfc"]["translation"]["backend"] = "deepl"
    cfg["models"]["aliases"]["llm"] = "org/llm-70b"
    cfg["models"]["clinifact"] = {"discriminative": [], "zero_shot": ["llm"], "fine_tuned": []}
    cfg["experiments"]["clinifact"]["zero_shot"]["backend"] = "echo"
    assert "clinifact_zero_shot" in cluster_rules(cfg)
    rows = cfg["experiments"]["resources"]
    assert Plan(cfg).job_resources("clinifact_zero_shot", {"model": "llm"}) == {"gpu": cfg["experiments"]["gpu"], **rows["llm_large"]}
    with pytest.raises(OptionsError, match=r"options\.backend: 'vllm' is not one of \['transformers', 'openai', 'echo'\]"):
        ZeroShotOptions.from_mapping({**zero_shot, "backend": "vllm"}, where="options")


def test_no_choice_compares_a_backends_name():
    names = "|".join(map(re.escape, LLM_BACKENDS))
    pattern = re.compile(rf"""backend["'\]]*\)?\s*[!=]=\s*["']({names})["']|["']({names})["']\s*[!=]=""")
    files = [*sorted((SRC / "plan").glob("*.py")), SRC / "llm" / "__init__.py", SRC / "medsnip" / "calls.py",
             SRC / "experiments" / "clinifact" / "zero_shot.py"]
    found = [f"{f.relative_to(SRC)}:{n}" for f in files for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []
