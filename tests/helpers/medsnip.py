"""MedSNIP test pieces shared by the unit and workflow tests: a scripted fake LLM for every MedSNIP
prompt, and step options built from the config schema's defaults (as the rules build them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.helpers.config import section

PROMPT_DIR = "resources/prompts"
# the scripted verifiers call a unit FALSE when it holds one of these: on the demo bench right on "cures"
# and "antibiotic", wrong on "4,000" (a true statement), and they miss the false HbA1c threshold
FALSE_MARKERS = ("cures", "antibiotic", "4,000")


def llm_opts(url: str, http_cache: Path | str = "", **overrides: Any) -> dict[str, Any]:
    """medsnip.llm's defaults for a served model at ``url`` (no key, one retry, the paper's prices)."""
    served = {"model": "served-llm", "base_url": url, "api_key_env": "", "max_tokens": 256, "batch_size": 4, "device": "cpu",
              "timeout_s": 10.0, "max_retries": 1, "http_cache_dir": str(http_cache), "price_input_per_mtok": 2.5,
              "price_output_per_mtok": 15.0}
    return section("medsnip.llm", **{**served, **overrides})


def retrieval_opts(passages: Path, cache: Path, max_rounds: int = 5) -> dict[str, Any]:
    """medsnip.retrieval's defaults with a local BM25 index over ``passages`` as the only source."""
    r = section("medsnip.retrieval", max_rounds=max_rounds, sources=["bm25"], search_cache_dir=str(cache))
    return {**r, "pubmed": {**r["pubmed"], "cache_dir": str(cache / "pubmed")}, "bm25": {**r["bm25"], "passages": str(passages)},
            "web": {**r["web"], "http_cache_dir": ""}}


def prepare_opts(**overrides: Any) -> dict[str, Any]:
    """The options medsnip_prepare passes for the bench (the schema's splits and limit), no cache."""
    bench = section("medsnip.datasets.bench")
    return {"source": "bench", "splits": bench["splits"], "rewrite_claims": False, "limit": bench["limit"], "llm": None,
            "prompt_dir": PROMPT_DIR, "unit_cache_dir": "", **overrides}


def decompose_opts(mode: str, llm: dict[str, Any] | None, **overrides: Any) -> dict[str, Any]:
    ms = section("medsnip")
    return {"mode": mode, "atoms_from": ms["atoms_from"], "fallback_whole_text": ms["fallback_whole_text"], "llm": llm,
            "prompt_dir": PROMPT_DIR, "unit_cache_dir": "", **overrides}


def verify_opts(kind: str, name: str, llm: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    return {"verifier": kind, "name": name, "unparsed": "false", "llm": llm, "prompt_dir": PROMPT_DIR, "unit_cache_dir": "",
            "retrieval": None, **overrides}


def score_opts(level: str = "unit", baseline_mode: str = "atoms", **overrides: Any) -> dict[str, Any]:
    return {"level": level, "baseline_mode": baseline_mode, **section("medsnip.score", n_resamples=500), **overrides}


def _numbered(user: str) -> list[tuple[int, str]]:
    return [(int(i), t) for i, t in re.findall(r"^\[(\d+)\] (.+)$", user, re.M)]


def scripted(body: dict, false_markers: tuple[str, ...] = FALSE_MARKERS) -> str:
    """The fake LLM: answers each MedSNIP prompt by its system message; the single-call verifiers call a
    unit FALSE when it holds one of ``false_markers``."""
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
        return json.dumps({"statement": re.sub(r"^(Does|Do|Can) ", "", q).replace("?", ".")}) if "broken" not in q else "no"
    if system.startswith("You are a cautious"):
        unit = last.split("Statement: ", 1)[1]
        return "False." if any(m in unit for m in false_markers) else "True"
    unit = re.search(r"Statement to verify: (.+)", user).group(1)
    if system.startswith("You are a medical fact-checker who verifies"):
        if "(no evidence yet)" in user:
            return json.dumps({"search_query": unit, "source": "bm25", "reasoning": "look it up"})
        conf = 0.8 if "Thirst" in unit else 0.95
        return json.dumps({"final_answer": not any(m in unit for m in false_markers), "confidence": conf, "reasoning": "evidence"})
    return json.dumps({"abstain": True, "reasoning": "no support"})


class FlakyOpenAI:
    """An OpenAI-compatible chat server on 127.0.0.1 that fails the requests ``fail(body)`` picks: it returns
    None to answer with ``responder(body)`` (as :class:`tests.helpers.fake_openai.FakeOpenAI` answers), or
    ``(status, payload)`` to send that instead (e.g. ``(500, {"error": {"message": "..."}})``). ``requests``
    holds every request body; ``failed`` how many were failed. A context manager (serves until it exits)."""

    def __init__(self, responder, fail=lambda body: None) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler

        from tests.helpers.fake_openai import words
        from tests.helpers.http_servers import reply_json

        self.responder, self.fail = responder, fail
        self.requests: list[dict[str, Any]] = []
        self.failed = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                failure = fake.fail(body)
                with fake.lock:
                    fake.requests.append(body)
                    fake.failed += failure is not None
                if failure is not None:
                    reply_json(self, failure[1], failure[0])
                    return
                text = fake.responder(body)
                reply_json(self, {"id": "x", "object": "chat.completion", "model": body.get("model"),
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": words(body), "completion_tokens": len(text.split())}})

            def log_message(self, *args):
                pass

        self.handler = Handler

    def __enter__(self) -> "FlakyOpenAI":
        from tests.helpers.http_servers import serving

        self._serving = serving(self.handler)
        self.base_url = self._serving.__enter__() + "/v1"
        return self

    def __exit__(self, *exc) -> None:
        self._serving.__exit__(*exc)


def statement(body: dict[str, Any]) -> str:
    """The unit a single-call verifier is asked about (the text after 'Statement: ')."""
    return body["messages"][-1]["content"].split("Statement: ", 1)[-1]
