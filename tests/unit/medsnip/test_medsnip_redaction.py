"""MedSNIP stores the errors of failed searches and calls in verdict records, skip reports and logs: none of
them may carry an API key or a password, and its cache files get the umask's mode."""

from __future__ import annotations

import json
import logging
import os
import stat
from http.server import BaseHTTPRequestHandler

import pytest
import requests

from tests.helpers.config import call_step
from tests.helpers.fake_openai import FakeOpenAI
from tests.helpers.http_servers import reply, serving
from tests.helpers.medsnip import llm_opts, retrieval_opts, verify_opts

from medfc.common.io import write_jsonl
from medfc.common.jsoncache import UnitCache
from medfc.medsnip import steps
from medfc.medsnip.verify import SearchUnavailable
from medfc.retrieval.search import CachedSearch, PubMedSearch

SECRET = "ncbi-KEY-9f8e7d6c5b4a"
UNIT = {"unit_id": "a:atoms:0", "answer_id": "a", "mode": "atoms", "text": "aspirin thins blood"}


def _searching(body):
    user = body["messages"][1]["content"]
    if "(no evidence yet)" in user:
        return '{"search_query": "aspirin", "source": "pubmed"}'
    return '{"abstain": true}'


@pytest.fixture
def eutils_400():
    """E-utilities answering every request with 400 (a bad request), as NCBI does."""
    seen = []

    class H(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append(self.path)
            reply(self, 400, {"Content-Type": "text/plain"}, b"Bad Request")

        def log_message(self, *a):
            pass

    with serving(H) as url:
        yield url, seen


def _files_text(root) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*")) if p.is_file())


def _verify(tmp_path, server_url, searchers, llm=None, **kw):
    write_jsonl(tmp_path / "units.jsonl", [UNIT])
    write_jsonl(tmp_path / "answers.jsonl", [{"answer_id": "a", "query": "Q?", "text": "A."}])
    r = retrieval_opts(tmp_path / "p.jsonl", tmp_path / "search")
    r = {**r, "sources": ["pubmed"], "pubmed": {**r["pubmed"], "email": "t@example.org"}}
    opts = verify_opts("retrieval", "r", llm or llm_opts(server_url), retrieval=r, **kw)
    out = {"verdicts": tmp_path / "out" / "v.jsonl", "info": tmp_path / "out" / "info.json", "report": tmp_path / "out" / "report.json"}
    info = call_step(steps.verify, {"units": tmp_path / "units.jsonl", "answers": tmp_path / "answers.jsonl"}, out, opts,
                     searchers=searchers)
    return info, out


def test_a_pubmed_400_with_an_api_key_is_stored_redacted(tmp_path, eutils_400, caplog):
    from medfc.retrieval.pubmed import PubmedFetcher

    base, seen = eutils_400
    fetcher = PubmedFetcher(tmp_path / "pm", api_key=SECRET, email="t@example.org", url=base + "/efetch.fcgi",
                            esearch_url=base + "/esearch.fcgi", requests_per_second=1000, max_retries=0)
    searchers = {"pubmed": CachedSearch(PubMedSearch(fetcher), UnitCache(tmp_path / "search"))}
    with FakeOpenAI(_searching) as server, caplog.at_level(logging.DEBUG):
        info, out = _verify(tmp_path, server.base_url, searchers, unit_cache_dir=str(tmp_path / "units"))
    assert f"api_key={SECRET}" in seen[0]
    assert info["counts"]["search_failed"] == 1
    from medfc.common.io import read_jsonl

    [rec] = read_jsonl(out["verdicts"])
    error = rec["evidence"][0]["error"]
    assert error.startswith("HttpError: GET http://127.0.0.1:") and "api_key=***" in error and error.endswith("HTTP 400")
    assert SECRET not in _files_text(tmp_path) and SECRET not in caplog.text


def test_a_raw_request_error_of_a_search_backend_is_stored_redacted(tmp_path, caplog):
    class Leaky:
        name = "pubmed"

        def index_id(self):
            return "leaky"

        def search(self, query, k):  # what requests says when it gives up on a URL with the key in its query
            raise requests.ConnectionError(f"HTTPSConnectionPool(host='eutils.ncbi.nlm.nih.gov', port=443): Max retries "
                                           f"exceeded with url: /entrez/eutils/esearch.fcgi?db=pubmed&api_key={SECRET}&term=aspirin")

    with FakeOpenAI(_searching) as server, caplog.at_level(logging.DEBUG):
        info, out = _verify(tmp_path, server.base_url, {"pubmed": CachedSearch(Leaky(), UnitCache(""))})
    from medfc.common.io import read_json, read_jsonl

    [rec] = read_jsonl(out["verdicts"])
    assert rec["evidence"][0]["error"].endswith("esearch.fcgi?db=pubmed&api_key=***&term=aspirin")
    assert read_json(out["report"])["skipped"][0]["reason"] == "search_failed"
    assert SECRET not in _files_text(tmp_path) and SECRET not in caplog.text


def test_a_failed_llm_call_with_a_password_in_the_base_url_is_stored_redacted(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("MEDFC_TEST_LLM_KEY", SECRET)
    write_jsonl(tmp_path / "units.jsonl", [UNIT])
    write_jsonl(tmp_path / "answers.jsonl", [{"answer_id": "a", "query": "Q?", "text": "A."}])
    from medfc.medsnip.calls import LLMCallsFailed

    # a 500 (a 401 stops the step at once, in the client): the step fails naming it, redacted ...
    with FakeOpenAI(lambda body: "true") as server, caplog.at_level(logging.DEBUG):
        server.fail_next = [(500, {})]
        url = server.base_url.replace("http://", f"http://medfc:{SECRET}@")
        llm = llm_opts(url, api_key_env="MEDFC_TEST_LLM_KEY", max_retries=0)
        out = {"verdicts": tmp_path / "out" / "v.jsonl", "info": tmp_path / "out" / "info.json", "report": tmp_path / "out" / "r.json"}
        args = ({"units": tmp_path / "units.jsonl", "answers": tmp_path / "answers.jsonl"}, out)
        with pytest.raises(LLMCallsFailed, match=r"HTTP 500") as failed:
            call_step(steps.verify, *args, verify_opts("claim_only", "c", llm))
        assert "http://***@127.0.0.1:" in str(failed.value) and SECRET not in str(failed.value)
        # ... and, allowed, the failed record keeps the redacted error
        server.fail_next = [(500, {})]
        info = call_step(steps.verify, *args, verify_opts("claim_only", "c", {**llm, "max_failed_share": 1.0}))
        assert server.requests[0][2].startswith("Basic ")  # requests sends the URL's user info
    from medfc.common.io import read_jsonl

    [rec] = read_jsonl(out["verdicts"])
    assert info["counts"] == {"failed_call": 1} and "HTTP 500" in rec["error"] and "http://***@127.0.0.1:" in rec["error"]
    assert rec["failed"] and rec["verdict"] is None
    assert SECRET not in _files_text(tmp_path) and SECRET not in caplog.text


@pytest.mark.parametrize("umask,mode", [(0o002, 0o664), (0o022, 0o644)])
def test_unit_cache_files_get_the_mode_of_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        UnitCache(tmp_path / "c").put("ab" * 32, {"verdict": "TRUE"})
    finally:
        os.umask(old)
    [f] = [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert stat.S_IMODE(f.stat().st_mode) == mode and UnitCache(tmp_path / "c").get("ab" * 32) == {"verdict": "TRUE"}


# --- a search service's bad day fails the verify step: a refused key at once, an outage after caching the rest ------


class _Flaky:
    """A PubMed-like backend: ``down`` names the queries it cannot answer (retries exhausted), ``refuse`` refuses every key."""

    name = "pubmed"

    def __init__(self, down=(), refuse=False):
        self.down, self.refuse, self.asked = set(down), refuse, []

    def index_id(self):
        return "flaky"

    def search(self, query, k):
        from medfc.common.http import HttpError
        from medfc.retrieval.search import SearchKeyRejected

        self.asked.append(query)
        if self.refuse:
            raise SearchKeyRejected("PubMed E-utilities (https://eutils.example)", "NCBI_API_KEY",
                                    HttpError("GET https://eutils.example/esearch.fcgi?api_key=x: HTTP 400: API key invalid", status=400))
        if query in self.down:
            raise HttpError(f"GET https://eutils.example/esearch.fcgi?term={query}: HTTP 429 after 4 attempts", status=429, exhausted=True)
        from medfc.retrieval.search import Hit

        return [Hit("T", f"About {query}.", "https://e.example/1", "1")]


def _asking(body):
    user = body["messages"][1]["content"]
    if "(no evidence yet)" in user:
        unit = user.split("Statement to verify: ", 1)[1].split("\n", 1)[0]
        return json.dumps({"search_query": unit.split()[0], "source": "pubmed"})
    return '{"final_answer": true, "confidence": 0.95}'


def _two_units(tmp_path, server_url, backend):
    units = [{**UNIT, "unit_id": "a:atoms:0", "text": "aspirin thins blood"}, {**UNIT, "unit_id": "a:atoms:1", "text": "coffee wakes you"}]
    write_jsonl(tmp_path / "units.jsonl", units)
    write_jsonl(tmp_path / "answers.jsonl", [{"answer_id": "a", "query": "Q?", "text": "A."}])
    r = retrieval_opts(tmp_path / "p.jsonl", tmp_path / "search")
    opts = verify_opts("retrieval", "r", llm_opts(server_url), retrieval={**r, "sources": ["pubmed"], "pubmed": {**r["pubmed"], "email": "t@example.org"}}, unit_cache_dir=str(tmp_path / "units"))
    out = {"verdicts": tmp_path / "out" / "v.jsonl", "info": tmp_path / "out" / "info.json", "report": tmp_path / "out" / "report.json"}
    return call_step(steps.verify, {"units": tmp_path / "units.jsonl", "answers": tmp_path / "answers.jsonl"}, out, opts,
                     searchers={"pubmed": CachedSearch(backend, UnitCache(tmp_path / "search"))}), out


def test_a_search_outage_fails_the_verify_step_after_caching_every_other_unit(tmp_path):
    with FakeOpenAI(_asking) as server:
        with pytest.raises(SearchUnavailable, match=r"^medsnip verify r: 1 searches went unanswered after their retries, for 1 units "
                                                          r"\(a:atoms:1\); first: HttpError: GET .*HTTP 429 after 4 attempts\. The other 1 "
                                                          r"verdicts are cached: a rerun verifies only these units$"):
            _two_units(tmp_path, server.base_url, _Flaky(down={"coffee"}))
        assert not (tmp_path / "out").exists()
        calls = len(server.requests)
        healthy = _Flaky()
        info, out = _two_units(tmp_path, server.base_url, healthy)
    assert healthy.asked == ["coffee"] and len(server.requests) - calls == 2  # only the failed unit: one search, two turns
    assert info["verdicts"] == {"TRUE": 2} and "search_failed" not in info["counts"]


def test_a_refused_search_key_stops_the_verify_step_at_once(tmp_path):
    from medfc.retrieval.search import SearchKeyRejected

    backend = _Flaky(refuse=True)
    with FakeOpenAI(_asking) as server:
        with pytest.raises(SearchKeyRejected, match=r"check the key in the environment variable NCBI_API_KEY$"):
            _two_units(tmp_path, server.base_url, backend)
    assert backend.asked == ["aspirin"]  # the first search stopped the step
