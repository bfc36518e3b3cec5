"""The open-domain evidence step (healthfc.steps:retrieve) against a fake Serper-compatible server and from a
prepared file: the artifact's rows exact (claim, query, source, date searched, rank, title, URL, snippet), a
rerun sends nothing, a 429 is retried, a missing key stops naming its variable; the experiments read the
snippets in rank order and concatenate the first k exactly."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import pytest

from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.common.search import MissingApiKey
from medfc.experiments import healthfc as H
from medfc.healthfc import evidence as ev
from medfc.healthfc.steps import retrieve
from tests.helpers.config import call_step
from tests.helpers.http_servers import reply_json, serving

CLAIMS = [{"id": "a#0", "claim_en": "Does  sugar make children hyperactive?", "label": "REFUTED"},
          {"id": "b#0", "claim_en": "Does ginger relieve nausea?", "label": "SUPPORTED"},
          {"id": "c#0", "claim_en": "Nothing found here?", "label": "NOT ENOUGH INFO"}]


def serper(log: list, fail_first: int = 0):
    class H_(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append((body["q"], body["num"], self.headers.get("X-API-KEY")))
            if len(log) <= fail_first:
                return reply_json(self, {}, status=429, headers={"Retry-After": "0"})
            if body["q"].startswith("Nothing"):
                return reply_json(self, {"organic": []})
            word = body["q"].split()[1]
            reply_json(self, {"organic": [{"title": f"{word} {n}", "snippet": f"About {word}, result {n}.", "link": f"https://r.example/{word}/{n}",
                                           "position": n} for n in range(1, 5)]})

        def log_message(self, *a):
            pass

    return H_


def options(tmp_path, base, **own):
    return {"source": "web", "lang": "en", "top_k": 3, "cache_dir": str(tmp_path / "cache"), "max_retries": 2, "progress": False,
            "source_options": {"url": base + "/search", "api_key_env": "MEDFC_TEST_SERPER", "requests_per_second": 1000.0, "file": "", **own}}


def run(tmp_path, base, name="out", **own):
    ds = tmp_path / "dataset.jsonl"
    write_jsonl(ds, CLAIMS)
    out = {"evidence": str(tmp_path / name / "web.jsonl"), "report": str(tmp_path / name / "web.report.json")}
    call_step(retrieve, {"dataset": str(ds)}, out, options(tmp_path, base, **own))
    return list(read_jsonl(out["evidence"])), read_json(out["report"])


def test_the_artifact_rows_exact_and_a_rerun_sends_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "secret-key")
    monkeypatch.setattr(ev, "utc_today", lambda: "2023-09-01")
    log: list = []
    with serving(serper(log, fail_first=1)) as base:
        rows, report = run(tmp_path, base)
        assert log[:2] == [("Does sugar make children hyperactive?", 3, "secret-key")] * 2  # 429, then retried
        assert len(log) == 4
        monkeypatch.setattr(ev, "utc_today", lambda: "2030-01-01")  # a later run keeps the date each answer came
        again, report2 = run(tmp_path, base, name="again")
    assert rows == [{"id": "a#0", "query": "Does sugar make children hyperactive?", "source": "web", "searched": "2023-09-01", "rank": n,
                     "title": f"sugar {n}", "url": f"https://r.example/sugar/{n}", "snippet": f"About sugar, result {n}.", "origin": "search"}
                    for n in (1, 2, 3)] + [
                    {"id": "b#0", "query": "Does ginger relieve nausea?", "source": "web", "searched": "2023-09-01", "rank": n,
                     "title": f"ginger {n}", "url": f"https://r.example/ginger/{n}", "snippet": f"About ginger, result {n}.", "origin": "search"}
                    for n in (1, 2, 3)]
    assert report["counts"] == {"claims": 3, "claims_with_results": 2, "rows": 6, "searches_sent": 3}
    assert report["skipped_by_reason"] == {"no_results": 1} and report["skipped"][0]["id"] == "c#0"
    assert len(log) == 4 and again == rows  # the rerun: every answer from the cache, no request
    assert report2["counts"]["answers_cached"] == 3 and "searches_sent" not in report2["counts"]
    assert "secret-key" not in "".join(p.read_text() for p in tmp_path.rglob("*.json*"))


def test_a_missing_key_stops_the_run_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("MEDFC_TEST_SERPER", raising=False)
    log: list = []
    with serving(serper(log)) as base:
        with pytest.raises(MissingApiKey, match="MEDFC_TEST_SERPER"):
            run(tmp_path, base)
    assert log == []


def test_a_prepared_file_gives_the_claims_rows_by_query_in_rank_order(tmp_path):
    file = tmp_path / "prepared.jsonl"
    write_jsonl(file, [
        {"query": "Does ginger relieve nausea?", "rank": 2, "title": "G2", "url": "u2", "snippet": "Second.", "origin": "demo"},
        {"query": "Does sugar make children hyperactive?", "rank": 1, "title": "S1", "url": "s1", "snippet": "Sugar one.", "searched": "2000-01-01"},
        {"query": "Does ginger  relieve nausea?", "rank": 1, "title": "G1", "url": "u1", "snippet": "First.", "origin": "demo"},
        {"query": "Does ginger relieve nausea?", "rank": 9, "title": "G9", "url": "u9", "snippet": "Ninth.", "origin": "demo"},
        {"query": "Does ginger relieve nausea?", "rank": 3, "title": "P", "url": "p", "snippet": "PubMed row.", "source": "pubmed"},
    ])
    rows, report = run(tmp_path, "http://127.0.0.1:9", file=str(file))
    assert [(r["id"], r["rank"], r["title"], r["snippet"], r["origin"], r["searched"]) for r in rows] == [
        ("a#0", 1, "S1", "Sugar one.", "file", "2000-01-01"),
        ("b#0", 1, "G1", "First.", "demo", ""), ("b#0", 2, "G2", "Second.", "demo", ""), ("b#0", 3, "G9", "Ninth.", "demo", "")]
    assert report["skipped_by_reason"] == {"not_in_file": 1} and report["excluded_by_reason"] == {"other_source": 1}
    assert report["mode"] == f"file {file}"


def test_the_demo_file_covers_the_demo_claims_and_says_it_is_made_up():
    rows = list(read_jsonl("resources/demo/evidence/web.jsonl"))
    assert rows and all("not real search results" in r["origin"] and r["source"] == "web" for r in rows)
    assert {r["query"] for r in rows} >= {"Does sugar make children hyperactive?", "Can acupuncture prevent migraine attacks?"}


def test_snippets_in_rank_order_and_the_first_k_concatenated_exactly(tmp_path):
    path = tmp_path / "web.jsonl"
    write_jsonl(path, [{"id": "x", "rank": 2, "snippet": " two "}, {"id": "y", "rank": 1, "snippet": "why"},
                       {"id": "x", "rank": 1, "snippet": "one"}, {"id": "x", "rank": 3, "snippet": "three"}])
    by_claim = ev.evidence_by_claim(path)
    assert by_claim == {"x": ["one", " two ", "three"], "y": ["why"]}
    assert H.retrieved_text(by_claim["x"], 2) == "one two"
    assert H.retrieved_text(by_claim["x"], 10) == "one two three"
