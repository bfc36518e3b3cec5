"""medfc.common.sources: one URL check and one "local file, or a URL downloaded once" helper."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

from medfc.common.sources import is_url, local_or_cached
from tests.helpers.http_servers import serving


@pytest.mark.parametrize("source, expected", [
    ("https://example.org/a.csv", True), ("http://127.0.0.1:8000/x/", True), ("ftp://host/a", False),
    ("resources/demo/release.csv", False), ("/abs/path.csv", False), ("C:/data/x.csv", False), ("", False),
])
def test_is_url(source, expected):
    assert is_url(source) is expected


@pytest.fixture
def server():
    hits = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            body = b"id,label\n1,SUPPORTED\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    with serving(Handler) as url:
        yield url, hits


def test_a_url_is_downloaded_once_and_a_local_path_is_kept(server, tmp_path):
    base, hits = server
    dest = tmp_path / "cache" / "release.csv"
    assert local_or_cached(f"{base}/release.csv", dest) == (dest, False)
    assert dest.read_bytes() == b"id,label\n1,SUPPORTED\n" and hits == ["/release.csv"]
    assert local_or_cached(f"{base}/release.csv", dest) == (dest, True)  # no second request
    assert hits == ["/release.csv"]
    local = tmp_path / "mine.csv"
    assert local_or_cached(str(local), tmp_path / "unused") == (local, False)
    assert not (tmp_path / "unused").exists()
