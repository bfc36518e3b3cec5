"""Shared pieces of the MedSNIP unit tests: the scripted fake LLM server, BM25 passages, the demo bench
(option builders and the scripted answers live in tests/helpers/medsnip.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.medsnip import scripted

DEMO_BENCH = Path("resources/demo/medsnip/bench_demo.json")


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
