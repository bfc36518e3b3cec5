"""Downloads are kept only when complete: a ClinicalTrials.gov bulk zip cut short by the server — without a
Content-Length, so the transport cannot tell — is never kept as ``ctgov_bulk.zip``, and the next run fetches it
again; a body shorter than its Content-Length is never kept either; a truncated zip already in the cache is
refetched; and the reader's ``TruncatedZip`` names the file and what to do."""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from medfc.clinifact import ctgov, zipstream
from medfc.common.io import read_jsonl
from medfc.common.sources import IncompleteDownload, local_or_cached, zip_problem
from tests.helpers.downloads import fetch_bulk_studies, one_attempt_per_run  # noqa: F401 (a fixture)
from tests.helpers.http_servers import serving

pytestmark = pytest.mark.usefixtures("one_attempt_per_run")

DEMO_ZIP = Path(__file__).resolve().parents[3] / "resources" / "demo" / "ctgov" / "studies.zip"



class Server:
    """Serves ``payload`` at every path; ``cut`` sends only its first half and closes the connection, with no
    Content-Length (``"no_length"``) or with the whole payload's (``"short"``)."""

    def __init__(self, payload: bytes):
        self.payload, self.cut, self.hits = payload, None, []

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes

            def do_GET(self):  # noqa: N802
                server.hits.append(self.path)
                body = server.payload
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                if server.cut != "no_length":
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if server.cut else body)

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def bulk_server():
    server = Server(DEMO_ZIP.read_bytes())
    with serving(server.handler()) as url:
        server.url = url
        yield server



def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_a_bulk_zip_cut_short_without_content_length_is_not_kept_and_is_refetched(tmp_path, bulk_server):
    bulk_server.cut = "no_length"
    with pytest.raises(IncompleteDownload) as exc:
        fetch_bulk_studies(tmp_path, bulk_server.url)
    message = str(exc.value)
    assert f"{bulk_server.url}/ctgov.zip" in message and "ctgov_bulk.zip" in message
    assert "central directory" in message and "nothing was kept" in message and "next run" in message
    assert _leftovers(tmp_path / "cache") == []  # no ctgov_bulk.zip, no temporary file
    assert not (tmp_path / "studies.jsonl.gz").exists()

    bulk_server.cut = None  # the server recovers: the rerun downloads it again and reads every study
    assert fetch_bulk_studies(tmp_path, bulk_server.url) == 44
    assert bulk_server.hits == ["/ctgov.zip", "/ctgov.zip"]
    assert _leftovers(tmp_path / "cache") == ["ctgov_bulk.zip"]
    assert (tmp_path / "cache" / "ctgov_bulk.zip").read_bytes() == DEMO_ZIP.read_bytes()
    assert fetch_bulk_studies(tmp_path, bulk_server.url) == 44 and len(bulk_server.hits) == 2  # a complete one is reused


def test_a_truncated_bulk_zip_left_in_the_cache_is_removed_and_refetched(tmp_path, bulk_server):
    cached = tmp_path / "cache" / "ctgov_bulk.zip"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(DEMO_ZIP.read_bytes()[:5000])  # a cut download kept under the final name
    assert fetch_bulk_studies(tmp_path, bulk_server.url) == 44
    assert bulk_server.hits == ["/ctgov.zip"] and cached.read_bytes() == DEMO_ZIP.read_bytes()
    assert len(list(read_jsonl(tmp_path / "studies.jsonl.gz"))) == 44


def test_a_body_shorter_than_its_content_length_is_not_kept(tmp_path):
    server = Server(b"id,label\n" + b"".join(f"{i},SUPPORTED\n".encode() for i in range(5000)))
    server.cut = "short"
    dest = tmp_path / "cache" / "release.csv"
    with serving(server.handler()) as url:
        with pytest.raises(IncompleteDownload, match=r"release\.csv.*nothing was kept"):
            local_or_cached(f"{url}/release.csv", dest)
        assert _leftovers(dest.parent) == []
        server.cut = None
        assert local_or_cached(f"{url}/release.csv", dest) == (dest, False)
    assert dest.read_bytes() == server.payload and len(server.hits) == 2


def test_zip_problem_finds_every_cut_and_passes_whole_zips(tmp_path):
    data = DEMO_ZIP.read_bytes()
    whole = tmp_path / "whole.zip"
    whole.write_bytes(data)
    assert zip_problem(whole) is None
    for cut in (10, len(data) // 2, len(data) - 30, len(data) - 1):
        part = tmp_path / f"cut{cut}.zip"
        part.write_bytes(data[:cut])
        assert zip_problem(part), cut
    empty = tmp_path / "empty.zip"
    import zipfile

    zipfile.ZipFile(empty, "w").close()
    assert zip_problem(empty) is None  # an empty archive is whole


def test_truncated_zip_names_the_file_and_says_to_delete_it(tmp_path):
    part = tmp_path / "my_bulk.zip"
    part.write_bytes(DEMO_ZIP.read_bytes()[:20000])
    with pytest.raises(zipstream.TruncatedZip) as exc:
        ctgov.read_bulk_zip(part, tmp_path / "out.jsonl.gz", progress=False)
    assert str(part) in str(exc.value) and "delete it" in str(exc.value)
    assert exc.value.path == str(part)


def test_an_incomplete_download_is_fetched_again_within_the_run(tmp_path, monkeypatch):
    """A body cut short, then a 503, then the whole file: one call of download_once, three requests, the whole
    file kept (the client's backoff and Retry-After apply; here its sleeps are recorded, not slept)."""
    from medfc.common.http import HttpClient

    monkeypatch.setattr("medfc.common.sources.INCOMPLETE_RETRIES", None)
    server = Server(b"id,label\n" + b"".join(f"{i},SUPPORTED\n".encode() for i in range(5000)))
    plan = iter(["short", "503", None])
    slept: list[float] = []

    handler = server.handler()

    class Once(handler):
        def do_GET(self):  # noqa: N802
            server.cut = next(plan)
            if server.cut == "503":
                server.hits.append(self.path)
                self.send_response(503)
                self.send_header("Retry-After", "7")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_GET()

    dest = tmp_path / "cache" / "release.csv"
    client = HttpClient(rate=1000.0, max_retries=3, sleep=slept.append)
    with serving(Once) as url:
        assert local_or_cached(f"{url}/release.csv", dest, client) == (dest, False)
    assert dest.read_bytes() == server.payload and len(server.hits) == 3
    assert slept == [2.0, 7.0]  # the backoff after the cut body, the server's Retry-After after the 503
    assert _leftovers(dest.parent) == ["release.csv"]
