from __future__ import annotations

import json
import zipfile

import pytest

from medfc.clinifact import ctgov
from medfc.common.http import HttpClient, HttpError
from medfc.common.io import read_jsonl
from medfc.common.report import SkipReport
from tests.helpers.config import section

from pathlib import Path

DEMO_ZIP = Path(__file__).resolve().parents[3] / "resources" / "demo" / "ctgov" / "studies.zip"


def _study(n: int) -> dict:
    return {"protocolSection": {"identificationModule": {"nctId": f"NCT9911{n:04d}"}}, "hasResults": True}


PAGES = {None: ([1, 2], "tokA"), "tokA": ([3, 4], "tokB"), "tokB": ([5, 6], "tokC"), "tokC": ([7], None)}


def _search_handler(server, fail_on: set[str] | None = None):
    fail_on = fail_on or set()

    def handler(method, path, query, body):
        assert path == "/api/v2/studies"
        token = query.get("pageToken", [None])[0]
        if token in fail_on:
            return 500, {}, b"boom"
        ids, nxt = PAGES[token]
        page = {"studies": [_study(i) for i in ids]}
        if token is None:
            page["totalCount"] = 7
        if nxt:
            page["nextPageToken"] = nxt
        return 200, {"Content-Type": "application/json"}, json.dumps(page).encode()

    return handler


def search_params(**kw):
    """The search parameters from the clinifact.studies defaults of the schema (the CliniFact filter)."""
    st = section("clinifact.studies", **kw)
    return ctgov.search_params(page_size=st["page_size"], status_filter=st["status_filter"], advanced_filter=st["advanced_filter"],
                               fields=st["fields"])


def _client(tmp_path, clock, **kw):
    return HttpClient(tmp_path / "cache", rate=50 / 60.0, clock=clock, sleep=clock.sleep, max_retries=1, **kw)


def test_search_params_are_the_clinifact_filters():
    p = search_params(page_size=1000)
    assert p["filter.overallStatus"] == "COMPLETED|TERMINATED"
    assert p["filter.advanced"] == "AREA[StudyType]INTERVENTIONAL AND AREA[HasResults]true"
    assert p["pageSize"] == "1000" and p["countTotal"] == "true" and p["format"] == "json"


def test_paginates_with_identical_params_and_writes_gzip_jsonl(server, tmp_path, clock):
    server.handler = _search_handler(server)
    params = search_params(page_size=2)
    report = SkipReport("t")
    n = ctgov.fetch_search(tmp_path / "studies.jsonl.gz", _client(tmp_path, clock), params, tmp_path / "state.json", url=server.url + "/api/v2/studies", report=report, progress=False)
    assert n == 7
    assert [s["protocolSection"]["identificationModule"]["nctId"] for s in read_jsonl(tmp_path / "studies.jsonl.gz")] == [f"NCT9911{i:04d}" for i in range(1, 8)]
    tokens = [q.get("pageToken", [None])[0] for _, _, q, _ in server.requests]
    assert tokens == [None, "tokA", "tokB", "tokC"]
    for _, _, q, _ in server.requests:  # every other parameter identical on every page
        assert {k: v[0] for k, v in q.items() if k != "pageToken"} == params
    # ~50 requests/minute: 1.2 s between requests, slept on the fake clock
    assert clock.sleeps == [1.2, 1.2, 1.2]
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["complete"] is True and state["total"] == 7 and state["tokens"] == [None, "tokA", "tokB", "tokC"]
    assert report.counts["pages"] == 4 and report.counts["studies"] == 7


def test_an_error_sent_with_http_200_is_never_the_searchs_last_page(server, tmp_path, clock):
    """A page without "studies" (a proxy's or the API's error, HTTP 200) was taken for an empty last page: the
    search ended complete after page 2 with 4 of 7 studies. It is retried; the search gets every study."""
    good = _search_handler(server)
    errors = iter([json.dumps({"message": "Service temporarily unavailable"}).encode()])

    def handler(method, path, query, body):
        if query.get("pageToken", [None])[0] == "tokB":
            bad = next(errors, None)
            if bad is not None:
                return 200, {"Content-Type": "application/json"}, bad
        return good(method, path, query, body)

    server.handler = handler
    out = tmp_path / "studies.jsonl.gz"
    assert ctgov.fetch_search(out, _client(tmp_path, clock), search_params(page_size=2), tmp_path / "state.json",
                              url=server.url + "/api/v2/studies", progress=False) == 7
    tokens = [q.get("pageToken", [None])[0] for _, _, q, _ in server.requests]
    assert tokens == [None, "tokA", "tokB", "tokB", "tokC"]


def test_interrupted_crawl_resumes_without_refetching_cached_pages(server, tmp_path, clock):
    params = search_params(page_size=2)
    url = server.url + "/api/v2/studies"
    out, state = tmp_path / "studies.jsonl.gz", tmp_path / "state.json"
    server.handler = _search_handler(server, fail_on={"tokB"})  # page 3 fails: interrupted after page 2
    with pytest.raises(HttpError):
        ctgov.fetch_search(out, _client(tmp_path, clock), params, state, url=url, progress=False)
    assert not out.exists()
    saved = json.loads(state.read_text())
    assert saved["next_token"] == "tokB" and saved["complete"] is False
    first_run = len(server.requests)
    assert [q.get("pageToken", [None])[0] for _, _, q, _ in server.requests] == [None, "tokA", "tokB", "tokB"]  # one retry

    server.handler = _search_handler(server)
    client = _client(tmp_path, clock)
    assert ctgov.fetch_search(out, client, params, state, url=url, progress=False) == 7
    rerun = [q.get("pageToken", [None])[0] for _, _, q, _ in server.requests[first_run:]]
    assert rerun == ["tokB", "tokC"]  # pages 1 and 2 came from the cache
    assert client.stats["cache_hits"] == 2 and client.stats["requests"] == 2

    # a third run fetches nothing at all
    client3 = _client(tmp_path, clock)
    assert ctgov.fetch_search(out, client3, params, state, url=url, progress=False) == 7
    assert client3.stats["requests"] == 0 and client3.stats["cache_hits"] == 4


def test_changed_params_start_a_new_crawl(server, tmp_path, clock):
    server.handler = _search_handler(server)
    url = server.url + "/api/v2/studies"
    ctgov.fetch_search(tmp_path / "a.jsonl.gz", _client(tmp_path, clock), search_params(page_size=2), tmp_path / "s.json", url=url, max_pages=1, progress=False)
    assert json.loads((tmp_path / "s.json").read_text())["tokens"] == [None, "tokA"]
    ctgov.fetch_search(tmp_path / "b.jsonl.gz", _client(tmp_path, clock), search_params(page_size=2, fields="NCTId"), tmp_path / "s.json", url=url, max_pages=1, progress=False)
    assert json.loads((tmp_path / "s.json").read_text())["params"]["fields"] == "NCTId"


@pytest.mark.parametrize("pages", [
    {None: ([1, 2], "tokA"), "tokA": ([3, 4], "tokA")},  # the server hands out the same token again
    {None: ([1, 2], "tokA"), "tokA": ([3, 4], "tokB"), "tokB": ([5], "tokA")},  # ... or one of an earlier page
], ids=["same", "cycle"])
def test_a_repeated_page_token_stops_the_search_naming_it(server, tmp_path, clock, pages):
    asked: list = []

    def handler(method, path, query, body):
        token = query.get("pageToken", [None])[0]
        asked.append(token)
        ids, nxt = (PAGES if state["fixed"] else pages)[token]
        page = {"studies": [_study(i) for i in ids], **({"nextPageToken": nxt} if nxt else {})}
        return 200, {"Content-Type": "application/json"}, json.dumps(page).encode()

    state = {"fixed": False}
    server.handler = handler
    params, url = search_params(page_size=2), server.url + "/api/v2/studies"
    out, state_path = tmp_path / "studies.jsonl.gz", tmp_path / "state.json"
    repeated = len(pages) - 1
    client = _client(tmp_path, clock)
    fetch = client.get_json

    def bounded(*a, **kw):  # the reader before paged forever (from its page cache after the first round): stop it here
        assert client.stats["requests"] + client.stats["cache_hits"] < 40, "paging forever"
        return fetch(*a, **kw)

    client.get_json = bounded
    with pytest.raises(ctgov.RepeatedPageToken, match=rf"page {repeated + 1} of the search gave the page token 'tokA' of page 2 again"):
        ctgov.fetch_search(out, client, params, state_path, url=url, progress=False)
    assert len(asked) == len(pages) and not out.exists()
    saved = json.loads(state_path.read_text())
    assert saved["tokens"] == [None, "tokA", "tokB"][: repeated + 1] and saved["complete"] is False
    state["fixed"] = True  # the server pages right again: the page that repeated a token was not cached, it is asked again
    assert ctgov.fetch_search(out, _client(tmp_path, clock), params, state_path, url=url, progress=False) == 7
    assert asked[len(pages):] == [t for t in [None, "tokA", "tokB", "tokC"][repeated:]]


def test_bulk_zip_streams_study_members(tmp_path):
    zpath = tmp_path / "bulk.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("ctg-studies/", "")
        zf.writestr("ctg-studies/NCT99110001.json", json.dumps(_study(1)))
        zf.writestr("README.txt", "not a study")
        zf.writestr("ctg-studies/NCT99110002.json", "{broken")
        zf.writestr("ctg-studies/NCT99110003.json", json.dumps(_study(3)))
    report = SkipReport("t")
    got = [ctgov.nct_id(s) for s in ctgov.iter_bulk_zip(zpath, report=report)]
    assert got == ["NCT99110001", "NCT99110003"]
    assert report.reasons() == {"invalid_json": 1, "not_a_study_member": 1}
    assert [ctgov.nct_id(s) for s in ctgov.iter_bulk_zip(zpath, limit=1)] == ["NCT99110001"]


def test_demo_zip_filter_counts(tmp_path):
    report = SkipReport("fetch")
    n = ctgov.read_bulk_zip(DEMO_ZIP, tmp_path / "s.jsonl.gz", report=report, progress=False, excluded_path=tmp_path / "x.jsonl.gz")
    assert n == 41 and report.counts["members_read"] == 44
    assert dict(report.excluded) == {"no_results": 1, "not_interventional": 1, "status_not_completed_or_terminated": 1}
    assert report.skipped == []  # a selection is not bad input: counted, never listed per study
    # ... and listed in the excluded file, for the diff against the release
    assert sorted((r["nctId"], r["reason"]) for r in read_jsonl(tmp_path / "x.jsonl.gz")) == [
        ("NCT99000025", "no_results"), ("NCT99000026", "status_not_completed_or_terminated"), ("NCT99000027", "not_interventional")]
    with zipfile.ZipFile(DEMO_ZIP) as zf:
        names = zf.namelist()
    assert len(names) == 44 and all(ctgov.NCT_MEMBER.search(n) and n.startswith("NCT9900") for n in names)


def test_a_bulk_read_that_breaks_off_leaves_neither_studies_nor_exclusions(tmp_path, monkeypatch):
    seen = []

    def failing_filter(study):
        seen.append(study)
        if len(seen) == 30:
            raise OSError("disk full")
        return "no_results" if len(seen) % 2 else None

    monkeypatch.setattr(ctgov, "passes_clinifact_filter", failing_filter)
    with pytest.raises(OSError, match="disk full"):
        ctgov.read_bulk_zip(DEMO_ZIP, tmp_path / "s.jsonl.gz", progress=False, excluded_path=tmp_path / "x.jsonl.gz")
    assert list(tmp_path.iterdir()) == []  # no half-written list of exclusions, no temporary files


def test_fetch_studies_caps_members_at_the_configured_size(tmp_path):
    """clinifact.studies.max_member_bytes reaches the bulk reader: a member over it is a counted skip."""
    import io as _io

    from medfc.clinifact import steps
    from tests.helpers.config import call_step

    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("NCT99110001.json", json.dumps(_study(1) | {"pad": "x" * 50_000}))
        zf.writestr("NCT99110002.json", json.dumps(_study(2)))
    zpath = tmp_path / "bulk.zip"
    zpath.write_bytes(buf.getvalue())
    assert section("clinifact.studies")["max_member_bytes"] == 64 * 1024 * 1024
    opts = {k: v for k, v in section("clinifact.studies", progress=False, apply_filter=False, max_member_bytes=10_000).items() if k != "bulk_zip"}
    opts |= {"cache_dir": str(tmp_path / "cache"), "user_agent": "medfc-test"}
    out = {"studies": str(tmp_path / "studies.jsonl.gz"), "report": str(tmp_path / "report.json"), "excluded": str(tmp_path / "ex.jsonl.gz")}
    assert call_step(steps.fetch_studies, {"zip": str(zpath)}, out, opts) == 1
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["skipped_by_reason"] == {"member_too_large": 1} and rep["skipped"][0]["id"] == "NCT99110001"
    assert [ctgov.nct_id(s) for s in read_jsonl(out["studies"])] == ["NCT99110002"]
