"""Where an input comes from: a local path, or a URL downloaded once into a cache.

A light module (``requests`` is imported only when something is downloaded), so that the planning code
and the release readers can tell a URL from a path without the HTTP stack.

A download is kept only when it is complete (:func:`download_once`): it is written under a temporary
name beside its place and renamed into place only after it is checked — its length against the
Content-Length the server stated (the HTTP client's transport refuses a shorter body) and, for a zip, its
central directory (:func:`zip_problem`: a zip cut short has none, even when the server stated no length).
Anything else is removed, nothing is kept, and the next run downloads it again. A file already in place
is checked the same way before it is reused, so a cut download an older version kept is fetched again.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger(__name__)

Check = Callable[[Path], "str | None"]
"""A check of a downloaded file: None when it is whole, else what is wrong with it."""


class IncompleteDownload(RuntimeError):
    """A download that ended short of a complete file: nothing was kept, the next run fetches it again."""

    def __init__(self, url: str, dest: str | os.PathLike, problem: str):
        from medfc.common.redact import redact_url

        self.url, self.dest, self.problem = redact_url(url), os.fspath(dest), problem
        super().__init__(f"download of {self.url} into {self.dest} is incomplete ({problem}); nothing was kept, "
                         "the next run downloads it again")


def is_url(source: str | os.PathLike) -> bool:
    """Whether ``source`` is an http(s) URL (anything else is a local path)."""
    return urlparse(str(source)).scheme in ("http", "https")


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory: sig, disks, entries here / in all, size, offset, comment length
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # sig, disk, offset of the zip64 end record, disks
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # sig, record size, versions, disks, entries here / in all, size, offset


def zip_problem(path: str | os.PathLike) -> str | None:
    """None when the zip at ``path`` ends with its whole central directory (zip64 included), else what is
    missing. Only the end of the file is read (a few KiB even for a 10 GB bulk download): the end record,
    then that the central directory it points to starts where it says and ends where the end records begin."""
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
    return None


def _zip_check(path: Path) -> str | None:
    problem = zip_problem(path)
    return None if problem is None else f"a zip whose central directory is not whole: {problem}"


def check_for(dest: str | os.PathLike) -> Check | None:
    """The completeness check a download gets from its name: a ``.zip`` its central directory."""
    return _zip_check if str(dest).lower().endswith(".zip") else None


def _temp_dirs(dest: Path) -> list[Path]:
    return list(dest.parent.glob(f".{dest.name}.*.download"))


def _remove_stale(dest: Path) -> None:
    """Temporary folders of downloads into ``dest`` whose process (on this host) is gone: a killed run's."""
    host = socket.gethostname()
    for tmp in _temp_dirs(dest):
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


def download_once(url: str, dest: str | os.PathLike, client: Any = None, *, progress: bool = False,
                  check: Check | None | bool = True) -> tuple[Path, bool]:
    """``url`` downloaded to ``dest`` unless a complete copy is there; returns ``(dest, from_cache)``.

    ``check``: a function telling what is wrong with a file (None: whole); ``True`` picks one by the name
    (:func:`check_for`: a zip's central directory), ``None`` or ``False`` checks nothing beyond the
    transport's length check. A copy in place that is empty or fails the check is removed and downloaded
    again. The download goes to a temporary folder beside ``dest`` and is renamed into place only when
    complete; otherwise the folder is removed and :class:`IncompleteDownload` (or the client's error) is
    raised. ``client``: a :class:`medfc.common.http.HttpClient` (default: one at 1 request/s, 3 retries)."""
    dest = Path(dest)
    verify = check_for(dest) if check is True else (check or None)
    if dest.exists():
        problem = "an empty file" if dest.stat().st_size == 0 else (verify(dest) if verify else None)
        if problem is None:
            return dest, True
        log.warning("%s is incomplete (%s): removed, downloading %s again", dest, problem, url)
        dest.unlink()
    if client is None:
        from medfc.common.http import HttpClient

        client = HttpClient(rate=1.0, max_retries=3)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(dest)
    tmp_dir = dest.parent / f".{dest.name}.{socket.gethostname()}-{os.getpid()}.{secrets.token_hex(4)}.download"
    tmp_dir.mkdir()
    try:
        tmp = tmp_dir / dest.name
        try:
            client.download(url, tmp, progress=progress)
        except Exception as exc:
            if not _cut_body(exc):
                raise
            raise IncompleteDownload(url, dest, f"the body ended short of its Content-Length ({type(exc).__name__})") from exc
        problem = verify(tmp) if verify else None
        if problem is not None:
            raise IncompleteDownload(url, dest, problem)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return dest, False


def _cut_body(exc: BaseException) -> bool:
    """Whether an error of the transport means the body was cut short (fewer bytes than its Content-Length,
    a chunked body without its last chunk)."""
    import requests

    return isinstance(exc, (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError))


def local_or_cached(source: str | os.PathLike, dest: str | os.PathLike, client: Any = None) -> tuple[Path, bool]:
    """A local ``source`` as it is (its existence is the caller's to check), or the URL ``source``
    downloaded once to ``dest`` (the caller's cache layout) and kept only when complete
    (:func:`download_once`). Returns ``(path, from_cache)``: a complete ``dest`` is reused without any
    request. ``client``: a :class:`medfc.common.http.HttpClient` (default: one at 1 request/s with 3 retries)."""
    if not is_url(source):
        return Path(source), False
    return download_once(str(source), dest, client)
