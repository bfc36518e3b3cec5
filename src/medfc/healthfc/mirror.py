"""Serve a static mirror of a site on 127.0.0.1 and route a crawler's requests to it: the demo crawl runs the live
crawl's spider, only :class:`MirrorDownloadHandler` sends the origin's requests to the local server."""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest

log = logging.getLogger(__name__)


class MirrorServer:
    """A threaded static HTTP server over ``root`` on 127.0.0.1 (port chosen by the OS); ``requests``: every path asked."""

    def __init__(self, root: str | Path, delay: float = 0.0):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"mirror directory {self.root} does not exist")
        requests: list[str] = []
        self.requests = requests

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
                log.debug("mirror: " + format, *args)

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                requests.append(self.path)
                if delay:
                    time.sleep(delay)
                super().do_GET()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(self.root)))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> MirrorServer:
        self._thread.start()
        log.info("serving mirror %s on %s", self.root, self.origin)
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def tree_digest(root: str | Path) -> str:
    """A short digest of every file under ``root`` (names and bytes): the mirror's version."""
    h = hashlib.sha256()
    root = Path(root)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def rewrite_url(url: str, origin: str, target: str) -> str:
    """Replace the scheme and host of ``url`` by ``target``'s when it belongs to ``origin``."""
    u, o, t = urlsplit(url), urlsplit(origin), urlsplit(target)
    same = u.netloc.lower() == o.netloc.lower()
    return urlunsplit((t.scheme, t.netloc, u.path, u.query, u.fragment)) if same else url


class MirrorDownloadHandler(HTTP11DownloadHandler):
    """HTTP(S) download handler that fetches the origin's URLs from the local mirror, and nothing else:
    a request for another host is refused (a mirror crawl never leaves 127.0.0.1)."""

    def __init__(self, crawler):
        super().__init__(crawler)
        self._origin = crawler.settings["MEDFC_MIRROR_ORIGIN"]
        self._target = crawler.settings["MEDFC_MIRROR_TARGET"]

    async def download_request(self, request):
        if urlsplit(request.url).netloc.lower() != urlsplit(self._origin).netloc.lower():
            raise IgnoreRequest(f"the mirror serves {self._origin} only, not {request.url}")
        local = request.replace(url=rewrite_url(request.url, self._origin, self._target))
        response = await super().download_request(local)
        return response.replace(url=request.url, request=request)
