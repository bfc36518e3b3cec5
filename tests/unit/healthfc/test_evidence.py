"""The open-domain evidence step (healthfc.steps:retrieve) against a fake Serper-compatible server and from a
prepared file: the artifact's rows exact (claim, query, source, date searched, rank, title, URL, snippet), a
rerun sends nothing, a 429 is retried, a missing key stops naming its variable; the experiments read the
snippets in rank order and concatenate the first k exactly."""

from __future__ import annotations

import functools
import json
import urllib.parse
from http.server import BaseHTTPRequestHandler

import pytest

from medfc.common.http import HttpClient
from medfc.common.io import read_json, read_jsonl, write_jsonl
from medfc.experiments.healthfc.systems import retrieved_text
from medfc.healthfc import evidence as ev
from medfc.healthfc.evidence_file import evidence_by_claim
from medfc.healthfc.steps import retrieve
from medfc.retrieval.search import MissingApiKey, SearchKeyRejected
from tests.helpers.config import call_step
from tests.helpers.http_servers import reply, reply_json, serving


@pytest.fixture(autouse=True)
def slept(monkeypatch) -> list[float]:
    """The search clients' waits (backoff, Retry-After, MediaWiki's lag, the rate limit), recorded instead of
    slept: the retry logic is the same, the test does not wait for it."""
    waits: list[float] = []
    monkeypatch.setattr("medfc.common.http.HttpClient", functools.partial(HttpClient, sleep=waits.append))  # the registry's clients
    return waits


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


def options(tmp_path, base, share=0.0, **own):
    return {"source": "web", "lang": "en", "top_k": 3, "cache_dir": str(tmp_path / "cache"), "max_retries": 2, "progress": False,
            "max_share_without_evidence": share,
            "source_options": {"url": base + "/search", "api_key_env": "MEDFC_TEST_SERPER", "requests_per_second": 1000.0, "file": "", **own}}


def run(tmp_path, base, name="out", claims=CLAIMS, share=0.34, **own):
    """The step on ``claims`` (one of the three CLAIMS finds nothing: allowed by the share 0.34)."""
    ds = tmp_path / "dataset.jsonl"
    write_jsonl(ds, claims)
    out = {"evidence": str(tmp_path / name / "web.jsonl"), "report": str(tmp_path / name / "web.report.json")}
    call_step(retrieve, {"dataset": str(ds)}, out, options(tmp_path, base, share=share, **own))
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
    assert report["counts"] == {"claims": 3, "claims_with_results": 2, "claims_without_evidence": 1, "rows": 6, "searches_sent": 3}
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
    by_claim = evidence_by_claim(path)
    assert by_claim == {"x": ["one", " two ", "three"], "y": ["why"]}
    assert retrieved_text(by_claim["x"], 2) == "one two"
    assert retrieved_text(by_claim["x"], 10) == "one two three"


# --- a bad day: the job fails naming what went wrong, nothing of it is cached, the rerun asks only what failed ------

GOOD = {"organic": [{"title": "r", "snippet": "A result.", "link": "https://r.example/1", "position": 1}], "searchParameters": {"q": "x"}}


def bad_serper(log: list, answer):
    """A Serper stand-in whose ``answer(query, attempt) -> (status, headers, payload)`` scripts each request."""

    class H_(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            log.append(body["q"])
            status, headers, payload = answer(body["q"], log.count(body["q"]))
            if isinstance(payload, bytes):
                return reply(self, status, headers, payload)
            reply_json(self, payload, status=status, headers=headers)

        def log_message(self, *a):
            pass

    return H_


REFUSALS = {  # the real services' answers to a wrong key or a spent account
    "401": (401, {}, {"message": "Unauthorized.", "statusCode": 401}),
    "403": (403, {}, {"message": "Unauthorized.", "statusCode": 403}),
    "credits": (400, {}, {"message": "Not enough credits", "statusCode": 400}),
    "403_with_http_200": (200, {}, {"message": "Unauthorized.", "statusCode": 403}),
}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_a_refused_key_fails_the_job_at_once_naming_the_source_and_the_variable(tmp_path, monkeypatch, refusal):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "wrong-key-123")
    log: list = []
    with serving(bad_serper(log, lambda q, n: REFUSALS[refusal])) as base:
        with pytest.raises(SearchKeyRejected) as err:
            run(tmp_path, base)
    msg = str(err.value)
    assert msg.startswith(f"the web search ({base}/search) refused the request (POST {base}/search: ")
    assert msg.endswith("check the key in the environment variable MEDFC_TEST_SERPER") and err.value.variable == "MEDFC_TEST_SERPER"
    assert REFUSALS[refusal][2]["message"] in msg and "wrong-key-123" not in msg
    assert log == ["Does sugar make children hyperactive?"]  # not retried, no other claim asked
    assert not (tmp_path / "out").exists() and not list((tmp_path / "cache").rglob("*.json"))


CUT = json.dumps(GOOD).encode()
BAD_DAYS = {  # what b#0's search gets on every attempt
    "429": (429, {"Retry-After": "0"}, {"message": "Too many requests", "statusCode": 429}),
    "503": (503, {"Retry-After": "0"}, b"<html>Service Unavailable</html>"),
    "error_json_with_http_200": (200, {"Retry-After": "0"}, {"message": "Too many requests", "statusCode": 429}),
    "html_with_http_200": (200, {"Content-Type": "text/html", "Retry-After": "0"}, b"<!DOCTYPE html><html>Just a moment...</html>"),
    "no_results_fields": (200, {"Retry-After": "0"}, {}),
}


@pytest.mark.parametrize("day", sorted(BAD_DAYS))
def test_a_search_failing_after_its_retries_fails_the_job_and_the_rerun_asks_only_what_failed(tmp_path, monkeypatch, day):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "k")
    monkeypatch.setattr(ev, "utc_today", lambda: "2024-05-01")
    log: list = []
    state = {"down": True}

    def answer(q, n):
        if state["down"] and q.startswith("Does ginger"):
            return BAD_DAYS[day]
        return 200, {}, GOOD if not q.startswith("Nothing") else {"organic": [], "searchParameters": {"q": q}}

    with serving(bad_serper(log, answer)) as base:
        with pytest.raises(ev.EvidenceSearchFailed) as err:
            run(tmp_path, base)
        msg = str(err.value)
        assert msg.startswith("healthfc_retrieve (web): the search for claim b#0 ('Does ginger relieve nausea?') failed: POST ")
        assert "after 3 attempts" in msg and "The answers to the 1 claims before it are cached" in msg
        assert log == ["Does sugar make children hyperactive?"] + ["Does ginger relieve nausea?"] * 3  # max_retries 2
        assert not (tmp_path / "out").exists()
        state["down"] = False  # the service recovers: the rerun asks b#0 (never cached as "no results") and c#0, not a#0
        rows, report = run(tmp_path, base, name="again")
    assert log[4:] == ["Does ginger relieve nausea?", "Nothing found here?"]
    assert [(r["id"], r["rank"], r["snippet"]) for r in rows] == [("a#0", 1, "A result."), ("b#0", 1, "A result.")]
    assert report["counts"] == {"claims": 3, "claims_with_results": 2, "claims_without_evidence": 1, "rows": 2, "searches_sent": 2,
                                "answers_cached": 1}


def test_more_claims_without_evidence_than_the_share_allows_fail_the_job_naming_them(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "k")
    log: list = []
    with serving(serper(log)) as base:
        with pytest.raises(ev.TooLittleEvidence, match=r"^healthfc_retrieve \(web\): 1 of 3 claims \(33\.3%\) have no evidence \(c#0\), "
                                                         r"more than healthfc\.retrieval\.max_share_without_evidence = 0 allows"):
            run(tmp_path, base, share=0.0)
        assert not (tmp_path / "out").exists()
        claims = CLAIMS + [{"id": "d#0", "claim_en": "", "label": "REFUTED"}]  # a claim without text has no evidence either
        with pytest.raises(ev.TooLittleEvidence, match=r"2 of 4 claims \(50\.0%\) have no evidence \(d#0, c#0\)"):
            run(tmp_path, base, claims=claims, share=0.34)
        rows, report = run(tmp_path, base, claims=claims, share=0.5)
    assert report["counts"]["claims_without_evidence"] == 2 and len(log) == 3  # every answer cached on the first run


def fake_wiki(log: list, state: dict):
    """MediaWiki under load: ``{"error": {"code": "maxlag"}}`` with HTTP 200 and Retry-After, as the real API sends it."""

    class H_(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            q = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(self.path).query))
            log.append(q.get("srsearch") or q.get("pageids"))
            if state["lagged"]:
                return reply_json(self, {"error": {"code": "maxlag", "info": "Waiting for 10.64.48.23: 6 seconds lagged", "host": "10.64.48.23",
                                                   "lag": 6, "type": "db"}, "servedby": "mw1"}, headers={"Retry-After": "0"})
            if q.get("list") == "search":
                return reply_json(self, {"batchcomplete": True, "query": {"search": [{"pageid": 7, "title": "Ginger", "snippet": "ginger"}]}})
            reply_json(self, {"batchcomplete": True, "query": {"pages": [{"pageid": 7, "title": "Ginger", "extract": "Ginger is a plant."}]}})

        def log_message(self, *a):
            pass

    return H_


def test_mediawiki_maxlag_with_http_200_is_retried_then_fails_the_job_never_cached_as_no_results(tmp_path, monkeypatch, slept):
    log: list = []
    state = {"lagged": True}
    ds = tmp_path / "dataset.jsonl"
    write_jsonl(ds, CLAIMS[1:2])
    opts = {**options(tmp_path, ""), "source": "wikipedia",
            "source_options": {"url": "", "page_url": "https://wiki.example/wiki/", "requests_per_second": 1000.0, "file": ""}}
    with serving(fake_wiki(log, state)) as base:
        opts["source_options"]["url"] = base + "/w/api.php"
        out = {"evidence": str(tmp_path / "o" / "wikipedia.jsonl"), "report": str(tmp_path / "o" / "wikipedia.report.json")}
        with pytest.raises(ev.EvidenceSearchFailed, match=r"/w/api\.php\?.*: MediaWiki error maxlag: Waiting for 10\.64\.48\.23: 6 seconds "
                                                          r"lagged after 3 attempts"):
            call_step(retrieve, {"dataset": str(ds)}, out, opts)
        assert len(log) == 3 and not list((tmp_path / "cache").rglob("*.json"))
        assert [w for w in slept if w >= 1] == [6.0, 6.0]  # each retry waits the lag the answer names
        state["lagged"] = False
        call_step(retrieve, {"dataset": str(ds)}, out, opts)
    assert [(r["id"], r["title"], r["snippet"]) for r in read_jsonl(out["evidence"])] == [("b#0", "Ginger", "Ginger is a plant.")]
    assert log[3:] == ["Does ginger relieve nausea?", "7"]


def test_a_damaged_answer_file_is_asked_again_and_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDFC_TEST_SERPER", "k")
    log: list = []
    with serving(serper(log)) as base:
        run(tmp_path, base)
        # the answers with hits first: the file names hash the request, whose URL carries the server's port
        files = sorted((tmp_path / "cache").rglob("*.json"), key=lambda p: (not json.loads(p.read_text())["hits"], p))
        files[0].write_text('{"searched": "2023-09-01", "hits": [{"title": "x", "te', encoding="utf-8")  # cut short
        files[1].write_text('{"hits": "not a list of hits"}', encoding="utf-8")  # not of the cache's shape
        rows, report = run(tmp_path, base, name="again")
    assert len(log) == 3 + 2 and report["counts"]["cache_files_damaged"] == 2 and report["counts"]["searches_sent"] == 2
    assert len(rows) == 6 and json.loads(files[0].read_text())["hits"]
