"""Shared pieces of the MedSNIP tests: option dicts, a scripted fake LLM, the demo bench file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.fake_openai import FakeOpenAI

DEMO_BENCH = Path("resources/demo/medsnip/bench_demo.json")
PROMPT_DIR = "resources/prompts"
# the scripted verifier calls a unit FALSE when it holds one of these: right on "cures" and
# "antibiotic", wrong on "4,000" (a true statement), and it misses the false HbA1c threshold
FALSE_MARKERS = ("cures", "antibiotic", "4,000")


def llm_opts(url: str, http_cache: Path | str = "") -> dict:
    return {"backend": "openai", "model": "served-llm", "base_url": url, "api_key_env": "", "max_tokens": 256,
            "temperature": 0.0, "json_mode": True, "batch_size": 4, "device": "cpu", "precision": "auto",
            "requests_per_second": 0.0, "timeout_s": 10.0, "max_retries": 1, "http_cache_dir": str(http_cache),
            "price_input_per_mtok": 2.5, "price_output_per_mtok": 15.0}


def retrieval_opts(passages: Path, cache: Path, max_rounds: int = 5) -> dict:
    return {"max_rounds": max_rounds, "reprompt_below": 0.85, "hits_per_search": 3, "title_chars": 120, "text_chars": 500,
            "sources": ["bm25"], "search_cache_dir": str(cache),
            "pubmed": {"cache_dir": str(cache / "pubmed"), "email": "", "api_key_env": "", "requests_per_second": 3.0},
            "bm25": {"passages": str(passages), "text_field": "text", "title_field": "title", "id_field": "id", "url_field": "url"},
            "web": {"url": "", "api_key_env": "", "http_cache_dir": ""}}


def _numbered(user: str) -> list[tuple[int, str]]:
    return [(int(i), t) for i, t in re.findall(r"^\[(\d+)\] (.+)$", user, re.M)]


def scripted(body: dict) -> str:
    """The fake LLM: answers each MedSNIP prompt by its system message (see FALSE_MARKERS)."""
    msgs = body["messages"]
    system, user, last = msgs[0]["content"], msgs[1]["content"], msgs[-1]["content"]
    repairing = last.startswith("Your previous answer could not be used")
    if system.startswith("You decompose"):
        if "How much water" in user and not repairing:
            return "Here are the atoms you asked for."  # malformed once, repaired
        return json.dumps({"shared_context": {"topic": "demo"},
                           "atoms": [{"index": k + 1, "text": t + ".", "source_sentences": [i]} for k, (i, t) in enumerate(_numbered(user))]})
    if system.startswith("You group"):
        atoms = _numbered(user)
        groups = [[1, 2], *[[k] for k in range(3, len(atoms) + 1)]] if len(atoms) >= 3 else [[k] for k in range(1, len(atoms) + 1)]
        texts = dict(atoms)
        return json.dumps({"snippets": [{"source_claims": g, "output": " ".join(texts[k] for k in g),
                                         "pattern": "A" if len(g) > 1 else "D", "notes": ""} for g in groups]})
    if system.startswith("You split"):
        return json.dumps({"shared_context": {}, "snippets": [{"source_sentences": [i], "output": t + ".", "pattern": "B" if ", so " in t else "D"}
                                                              for i, t in _numbered(user)]})
    if system.startswith("Rewrite a health question"):
        q = user.split("Question: ", 1)[1]
        return json.dumps({"statement": q.replace("Does ", "").replace("?", ".")}) if "broken" not in q else "no"
    if system.startswith("You are a cautious"):
        unit = last.split("Statement: ", 1)[1]
        return "False." if any(m in unit for m in FALSE_MARKERS) else "True"
    unit = re.search(r"Statement to verify: (.+)", user).group(1)
    if system.startswith("You are a medical fact-checker who verifies"):
        if "(no evidence yet)" in user:
            return json.dumps({"search_query": unit, "source": "bm25", "reasoning": "look it up"})
        conf = 0.8 if "Thirst" in unit else 0.95
        return json.dumps({"final_answer": not any(m in unit for m in FALSE_MARKERS), "confidence": conf, "reasoning": "evidence"})
    return json.dumps({"abstain": True, "reasoning": "no support"})


@pytest.fixture()
def fake_llm():
    with FakeOpenAI(scripted) as server:
        yield server


@pytest.fixture()
def passages(tmp_path) -> Path:
    rows = [{"id": "p1", "title": "Vitamin D and colds", "text": "Trials found that vitamin D does not cure the common cold.", "url": "https://example.org/p1"},
            {"id": "p2", "title": "Ibuprofen", "text": "Ibuprofen is a nonsteroidal anti-inflammatory drug that slows blood clotting.", "url": ""},
            {"id": "p3", "title": "Fluids", "text": "Healthy adults need about two to three liters of fluid per day; thirst guides intake.", "url": ""}]
    p = tmp_path / "passages.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p
