"""Where an input comes from: a local path, or a URL downloaded once into a cache (:func:`download_once`), kept only
when complete: its Content-Length, a zip's whole central directory (:func:`zip_problem`), a body the transport did not
cut. Light: ``requests`` is imported only to download."""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
import socket
import struct
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlparse

from medfc.common.redact import redact

if TYPE_CHECKING:  # the client is handed in or made when a download is needed: requests loads then
    import requests

    from medfc.common.http import HttpClient

log = logging.getLogger(__name__)


class IncompleteDownload(RuntimeError):
    """A download that ended short of a complete file: nothing kept, the next run fetches it again."""

    def __init__(self, url: str, dest: str | os.PathLike, problem: str, received: int | None = None, content_length: int | None = None):
        self.url, self.dest, self.problem = redact(url), os.fspath(dest), problem
        got = ""
        if received is not None:
            stated = "no Content-Length sent" if content_length is None else f"Content-Length {content_length}"
            got = f"; {received} bytes received, {stated}"
        super().__init__(f"download of {self.url} into {self.dest} is incomplete ({problem}{got}); nothing was kept, "
                         "the next run downloads it again")


def hub_url(endpoint: str, repo: str, revision: str, path: str) -> str:
    """``<endpoint>/datasets/<repo>/resolve/<revision>/<path>``: a Hugging Face dataset file at a commit (quoted)."""
    return f"{endpoint.rstrip('/')}/datasets/{repo}/resolve/{quote(revision, safe='')}/{quote(path.lstrip('/'))}"


def url_cache_path(url: str, folder: str | os.PathLike) -> Path:
    """Where a URL's file is downloaded once: ``<folder>/<16 hex of the URL's SHA-256>/<its file name>``."""
    name = Path(urlparse(url).path).name or "data"
    return Path(folder) / hashlib.sha256(url.encode("utf-8")).hexdigest()[:16] / name


def is_url(source: str | os.PathLike) -> bool:
    """Whether ``source`` is an http(s) URL (anything else is a local path)."""
    return urlparse(str(source)).scheme in ("http", "https")


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory: sig, disks, entries here / in all, size, offset, comment length
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # sig, disk, offset of the zip64 end record, disks
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # sig, record size, versions, disks, entries here / in all, size, offset


def zip_problem(path: str | os.PathLike) -> str | None:
    """None when the zip at ``path`` ends with its whole central directory (zip64 included), else what is missing."""
    found = central_directory(path)
    return found if isinstance(found, str) else None


def central_directory(path: str | os.PathLike) -> tuple[int, int] | str:
    """(offset, size) of the zip's central directory at ``path``, from its end records (the zip64 ones where they say
    so), else what is missing; reads only the file's end (a few KiB even for a 10 GB download)."""
    path = Path(path)
    size = path.stat().st_size
    if size < _EOCD.size:
        return f"{size} bytes, too short for a zip: the file was cut short"
    with open(path, "rb") as fh:
        tail_len = min(size, _EOCD.size + 0xFFFF)  # the record, and a comment of at most 64 KiB after it
        fh.seek(size - tail_len)
        tail = fh.read()
        at = tail.rfind(b"PK\x05\x06")
        while at >= 0 and at + _EOCD.size > len(tail):
            at = tail.rfind(b"PK\x05\x06", 0, at)
        if at < 0:
            return "no end of its central directory: the file was cut short"
        eocd = size - tail_len + at
        _, _, _, _, entries, cd_size, cd_offset, comment = _EOCD.unpack_from(tail, at)
        if eocd + _EOCD.size + comment > size:
            return "its end record's comment is cut short"
        cd_end = eocd
        if 0xFFFFFFFF in (cd_size, cd_offset) or entries == 0xFFFF:  # zip64: the sizes are in the zip64 end record
            if eocd < _ZIP64_LOCATOR.size:
                return "a zip64 end record is missing: the file was cut short"
            fh.seek(eocd - _ZIP64_LOCATOR.size)
            sig, _, z64_offset, _ = _ZIP64_LOCATOR.unpack(fh.read(_ZIP64_LOCATOR.size))
            if sig != b"PK\x06\x07" or z64_offset + _ZIP64_EOCD.size > size:
                return "its zip64 end record is missing or cut short"
            fh.seek(z64_offset)
            fields = _ZIP64_EOCD.unpack(fh.read(_ZIP64_EOCD.size))
            if fields[0] != b"PK\x06\x06":
                return "its zip64 end record is not where the locator says"
            entries, cd_size, cd_offset, cd_end = fields[7], fields[8], fields[9], z64_offset
        if cd_offset + cd_size != cd_end:
            return f"its central directory ({cd_size} bytes at byte {cd_offset}) does not end where its end record begins (byte {cd_end})"
        if entries:
            fh.seek(cd_offset)
            if fh.read(4) != b"PK\x01\x02":
                return f"no central directory at byte {cd_offset}, where its end record says it starts"
    return cd_offset, cd_size


def _zip_check(path: Path) -> str | None:
    problem = zip_problem(path)
    return None if problem is None else f"a zip whose central directory is not whole: {problem}"


def _remove_stale(dest: Path) -> None:
    """Remove temporary folders of downloads into ``dest`` whose process (on this host) is gone."""
    host = socket.gethostname()
    for tmp in dest.parent.glob(f".{dest.name}.*.download"):
        owner = tmp.name[len(dest.name) + 2 : -len(".download")].rsplit(".", 1)[0]
        h, _, pid = owner.rpartition("-")
        if h != host or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(tmp, ignore_errors=True)
        except PermissionError:
            pass


#: how often :func:`download_once` fetches a download again that came incomplete; None: the client's ``max_retries``
INCOMPLETE_RETRIES: int | None = None


def download_once(url: str, dest: str | os.PathLike, client: HttpClient | None = None, *,
                  progress: bool = False) -> tuple[Path, bool]:
    """``url`` downloaded to ``dest`` unless a complete copy is there (an empty or cut one is fetched again);
    returns ``(dest, from_cache)``. An incomplete download is retried as the client retries, then raised."""
    dest = Path(dest)
    verify = _zip_check if str(dest).lower().endswith(".zip") else None
    if dest.exists():
        size = dest.stat().st_size
        problem = "an empty file" if size == 0 else (verify(dest) if verify else None)
        if problem is None:
            return dest, True
        log.warning("%s is incomplete (%s; %d bytes): removed, downloading %s again", dest, problem, size,
                    redact(url))
        dest.unlink()
    if client is None:
        from medfc.common.http import HttpClient

        client = HttpClient(rate=1.0, max_retries=3)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(dest)
    tries = (client.max_retries if INCOMPLETE_RETRIES is None else INCOMPLETE_RETRIES) + 1
    for attempt in range(tries):
        try:
            _download_attempt(url, dest, client, progress, verify)
            return dest, False
        except IncompleteDownload as exc:
            if attempt + 1 >= tries:
                raise
            delay = client.backoff_delay(attempt)
            log.warning("%s; retry %d/%d in %.1f s", exc, attempt + 1, tries - 1, delay)
            client.sleep(delay)
    raise AssertionError("unreachable")


def _download_attempt(url: str, dest: Path, client: HttpClient, progress: bool,
                      verify: Callable[[Path], str | None] | None) -> None:
    """One download into a temporary folder beside ``dest``, renamed into place when complete (``verify``: what is
    wrong with the file, None when it is whole)."""
    import requests

    tmp_dir = dest.parent / f".{dest.name}.{socket.gethostname()}-{os.getpid()}.{secrets.token_hex(4)}.download"
    tmp_dir.mkdir()
    try:
        tmp = tmp_dir / dest.name
        responses: list[requests.Response] = []  # the answer whose body the client streamed
        try:
            client.download(url, tmp, responses, progress=progress)
        except Exception as exc:
            received, _ = _received(responses, tmp_dir)
            # a body cut short of its Content-Length or last chunk, or any transport error once bytes came
            errors = requests.exceptions
            cut = isinstance(exc, (errors.ChunkedEncodingError, errors.ContentDecodingError))
            if not (cut or (received and isinstance(exc, (errors.RequestException, OSError)))):
                raise
            length, chunked = _stated(responses)
            how = ("the body ended short of its Content-Length" if length is not None
                   else "the chunked body ended without its last chunk" if chunked
                   else "the connection broke off mid-body")
            raise IncompleteDownload(url, dest, f"{how} ({type(exc).__name__})", received, length) from exc
        received, comparable = _received(responses, tmp_dir)
        length, _ = _stated(responses)
        if length is not None and comparable and received != length:
            raise IncompleteDownload(url, dest, "the body's length is not its Content-Length", received, length)
        problem = verify(tmp) if verify else None
        if problem is not None:
            raise IncompleteDownload(url, dest, problem, received, length)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def _stated(responses: list[requests.Response]) -> tuple[int | None, bool]:
    """``(Content-Length, chunked)`` of the answer (after any redirect; none before it came)."""
    headers: Mapping[str, str] = responses[-1].headers if responses else {}
    chunked = "chunked" in (headers.get("Transfer-Encoding") or "").lower()
    raw = (headers.get("Content-Length") or "").strip()
    return (int(raw) if raw.isdigit() and not chunked else None), chunked


def _received(responses: list[requests.Response], folder: Path) -> tuple[int, bool]:
    """``(bytes, comparable)``: the body's bytes received, as urllib3 counted them (``tell()``: before gzip
    decoding) or as written under ``folder`` where that is more (urllib3 does not count a chunked body), and whether
    they compare with a Content-Length (not for a decoded content-encoded body)."""
    try:
        wire = int(responses[-1].raw.tell()) if responses else None
    except Exception:
        wire = None
    written = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    encoding = responses[-1].headers.get("Content-Encoding") if responses else None
    if (encoding or "identity").strip().lower() not in ("", "identity"):
        return (written, False) if wire is None else (wire, True)
    return max(wire or 0, written), True


def local_or_cached(source: str | os.PathLike, dest: str | os.PathLike, client: HttpClient | None = None) -> tuple[Path, bool]:
    """A local ``source`` as is (existence unchecked), or the URL ``source`` downloaded once to ``dest``
    (:func:`download_once`); returns ``(path, from_cache)``."""
    return download_once(str(source), dest, client) if is_url(source) else (Path(source), False)
