"""The ClinicalTrials.gov bulk zip (``clinifact.studies.bulk_zip: null``: ``bulk_url`` downloaded once into the
cache as ``ctgov_bulk.zip``) and the release CSVs are kept only when complete.

A local server serves the demo bulk zip whole, cut short without a Content-Length (the connection closes
mid-body), cut short inside a chunked body, cut short of the Content-Length it sent, or stalled mid-body.
A cut download never lands under its final name, the job fails naming the URL and the bytes received, and
the rerun against a healthy server downloads it again and reads every study. A cut zip an older version
left in the cache is found by its missing end of central directory, removed and fetched again. A body
shorter than its Content-Length is refused by the download's own check too, not only by the transport's
(urllib3 1.x, which ``requests>=2.31`` allows, does not enforce the length)."""

from __future__ import annotations

import gzip
import random
import re
import time
from http.server import BaseHTTPRequestHandler
import zipfile
from pathlib import Path

import pytest

from medfc.common.http import HttpClient, HttpError
from medfc.common.io import read_jsonl
from medfc.common.sources import IncompleteDownload, local_or_cached
from medfc.healthfc.release import fetch_release
from tests.helpers.downloads import fetch_bulk_studies, one_attempt_per_run  # noqa: F401 (a fixture)
from tests.helpers.http_servers import reply, reply_cut, serving

pytestmark = pytest.mark.usefixtures("one_attempt_per_run")

REPO = Path(__file__).resolve().parents[3]
DEMO_ZIP = REPO / "resources" / "demo" / "ctgov" / "studies.zip"
N_DEMO_STUDIES = 44
CSV = b"id,label\n" + b"".join(f"{i},SUPPORTED\n".encode() for i in range(4000))


class BulkServer:
    """Serves ``payload`` at every path as ``mode`` says: ``whole``; ``no_length`` (half the body, no
    Content-Length, then the connection closes); ``chunked`` (half of one chunk, then the connection closes);
    ``short`` (half the body under the whole body's Content-Length); ``stall`` (half the body, no length,
    then silence until the client gives up); ``gzip`` (the body gzip-encoded, Content-Length of the encoded
    bytes); ``404``."""

    def __init__(self, payload: bytes):
        self.payload, self.mode, self.hits = payload, "whole", []

    def handler(self) -> type[BaseHTTPRequestHandler]:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                srv.hits.append(self.path)
                body, half = srv.payload, len(srv.payload) // 2
                if srv.mode == "whole":
                    reply(self, 200, {"Content-Type": "application/zip"}, body)
                elif srv.mode == "gzip":
                    reply(self, 200, {"Content-Type": "text/csv", "Content-Encoding": "gzip"}, gzip.compress(body))
                elif srv.mode == "404":
                    reply(self, 404, {}, b"not here")
                elif srv.mode in ("short", "chunked"):
                    reply_cut(self, 200, {"Content-Type": "application/zip"}, body, half, chunked=srv.mode == "chunked")
                else:  # no_length, stall: no Content-Length, the body ends when the connection closes
                    self.close_connection = True
                    self.send_response(200)
                    self.send_header("Content-Type", "application/zip")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body[:half])
                    self.wfile.flush()
                    if srv.mode == "stall":
                        time.sleep(1.0)  # the client's 0.3 s read timeout ends the download first

            def log_message(self, *args):
                pass

        return Handler



@pytest.fixture(scope="module")
def padded_zip(tmp_path_factory) -> bytes:
    """The demo bulk zip behind a stored 3 MiB member that is not a study: a cut at half its bytes falls
    after the client's first 1 MiB read, as any cut of the 2.5 GB bulk zip does."""
    path = tmp_path_factory.mktemp("bulk") / "padded.zip"
    with zipfile.ZipFile(DEMO_ZIP) as demo, zipfile.ZipFile(path, "w") as out:
        out.writestr(zipfile.ZipInfo("padding.bin"), random.Random(42).randbytes(3 << 20), compress_type=zipfile.ZIP_STORED)
        for info in demo.infolist():
            out.writestr(info, demo.read(info))
    return path.read_bytes()


@pytest.fixture
def zip_server(padded_zip):
    srv = BulkServer(padded_zip)
    with serving(srv.handler()) as url:
        srv.url = url
        yield srv


@pytest.fixture
def csv_server():
    srv = BulkServer(CSV)
    with serving(srv.handler()) as url:
        srv.url = url
        yield srv



def _files(folder: Path) -> list[str]:
    """Everything under ``folder`` (temporary folders and files included)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def _received(message: str) -> int:
    found = re.search(r"(\d+) bytes received", message)
    assert found, message
    return int(found.group(1))


@pytest.mark.parametrize("mode", ["no_length", "chunked", "short"])
def test_a_cut_bulk_zip_is_never_kept_and_the_rerun_fetches_it_again(tmp_path, zip_server, mode):
    zip_server.mode = mode
    with pytest.raises(IncompleteDownload) as exc:
        fetch_bulk_studies(tmp_path, zip_server.url)
    message = str(exc.value)
    assert f"{zip_server.url}/ctgov.zip" in message and "ctgov_bulk.zip" in message
    assert 0 < _received(message) < len(zip_server.payload)  # the bytes that came
    if mode == "short":
        assert f"Content-Length {len(zip_server.payload)}" in message
    assert _files(tmp_path / "cache") == []  # no ctgov_bulk.zip, no temporary folder
    assert not (tmp_path / "studies.jsonl.gz").exists()

    zip_server.mode = "whole"  # the server recovers: the rerun downloads it again and the reader gets every study
    assert fetch_bulk_studies(tmp_path, zip_server.url) == N_DEMO_STUDIES
    assert zip_server.hits == ["/ctgov.zip", "/ctgov.zip"]
    assert _files(tmp_path / "cache") == ["ctgov_bulk.zip"]
    assert (tmp_path / "cache" / "ctgov_bulk.zip").read_bytes() == zip_server.payload
    assert len(list(read_jsonl(tmp_path / "studies.jsonl.gz"))) == N_DEMO_STUDIES
    assert fetch_bulk_studies(tmp_path, zip_server.url) == N_DEMO_STUDIES and len(zip_server.hits) == 2  # a whole one is reused


def test_a_download_that_stalls_mid_body_names_the_bytes_received_and_keeps_nothing(tmp_path, zip_server):
    zip_server.mode = "stall"
    dest = tmp_path / "cache" / "ctgov_bulk.zip"
    with pytest.raises(IncompleteDownload) as exc:
        local_or_cached(f"{zip_server.url}/ctgov.zip", dest, HttpClient(timeout=0.3, max_retries=0))
    assert f"{zip_server.url}/ctgov.zip" in str(exc.value)
    assert 0 < _received(str(exc.value)) < len(zip_server.payload)
    assert _files(dest.parent) == []


def test_a_cut_zip_left_in_the_cache_by_an_older_version_is_removed_and_refetched(tmp_path, zip_server, caplog):
    cached = tmp_path / "cache" / "ctgov_bulk.zip"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(zip_server.payload[: len(zip_server.payload) - 100])  # cut inside its central directory
    with caplog.at_level("WARNING", logger="medfc.common.sources"):
        assert fetch_bulk_studies(tmp_path, zip_server.url) == N_DEMO_STUDIES
    assert zip_server.hits == ["/ctgov.zip"] and cached.read_bytes() == zip_server.payload
    assert any("ctgov_bulk.zip is incomplete" in r.getMessage() and "downloading" in r.getMessage() for r in caplog.records)


@pytest.fixture
def lax_transport(monkeypatch):
    """urllib3 as in 1.x: a body shorter than its Content-Length ends without an error."""
    from urllib3.response import HTTPResponse

    init = HTTPResponse.__init__

    def lax(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.enforce_content_length = False

    monkeypatch.setattr(HTTPResponse, "__init__", lax)


def test_a_release_csv_shorter_than_its_content_length_is_refused_even_by_a_lax_transport(tmp_path, csv_server, lax_transport):
    csv_server.mode = "short"
    url = f"{csv_server.url}/healthfc.csv"
    with pytest.raises(IncompleteDownload) as exc:
        fetch_release(url, tmp_path / "cache", client=HttpClient(max_retries=0))
    message = str(exc.value)
    assert url in message and f"{len(CSV) // 2} bytes received" in message and f"Content-Length {len(CSV)}" in message
    assert _files(tmp_path / "cache" / "healthfc" / "release") == []

    csv_server.mode = "whole"
    path, from_cache = fetch_release(url, tmp_path / "cache", client=HttpClient(max_retries=0))
    assert not from_cache and path.read_bytes() == CSV and len(csv_server.hits) == 2


def test_a_gzip_encoded_release_is_kept_whole_its_content_length_counts_the_encoded_bytes(tmp_path, csv_server):
    csv_server.mode = "gzip"
    dest = tmp_path / "cache" / "test_set.csv"
    client = HttpClient(max_retries=0)
    assert local_or_cached(f"{csv_server.url}/test_set.csv", dest, client) == (dest, False)
    assert dest.read_bytes() == CSV and _files(dest.parent) == ["test_set.csv"]


def test_an_http_error_is_the_clients_error_and_keeps_nothing(tmp_path, csv_server):
    csv_server.mode = "404"
    dest = tmp_path / "cache" / "test_set.csv"
    with pytest.raises(HttpError, match="HTTP 404"):
        local_or_cached(f"{csv_server.url}/test_set.csv", dest, HttpClient(max_retries=0))
    assert _files(dest.parent) == []
