"""A zip's members read one at a time through its central directory: ``zipfile`` holds every member's entry (some
560 bytes each: about 270 MiB for the 500,000-member ClinicalTrials.gov bulk zip), this reader one entry and the
member being read (at most ``max_size``, in chunks). STORED and DEFLATED members, data descriptors and ZIP64; a bad
member is reported on it (``ZipMember.error``) and the reading goes on; a file without its whole central directory
raises ``TruncatedZip`` before any member is read, one that is no zip ``BadZip``."""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from medfc.common.sources import central_directory

LOCAL_SIG = b"PK\x03\x04"
CENTRAL_SIG = b"PK\x01\x02"
END_SIG = b"PK\x05\x06"

STORED = 0
DEFLATED = 8
FLAG_ENCRYPTED = 0x0001
FLAG_UTF8 = 0x0800
ZIP64_EXTRA_ID = 0x0001
MASK32 = 0xFFFFFFFF

_LOCAL = struct.Struct("<4s5H3I2H")  # signature .. extra length: 30 bytes
_CENTRAL = struct.Struct("<4s6H3I5H2I")  # signature .. local header offset: 46 bytes
CHUNK_SIZE = 1 << 16
#: The most bytes one call to the decompressor returns (64 KiB of deflate data can inflate to 64 MiB).
MAX_INFLATE = 1 << 20


class BadZip(Exception):
    """Not a zip this reader can read."""


class TruncatedZip(BadZip):
    """The file lacks its whole central directory: no member was read."""

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = os.fspath(path)
        super().__init__(f"{self.path}: zip truncated ({problem}): the download was probably interrupted: "
                         "delete it and fetch it again")


@dataclass(frozen=True, slots=True)
class ZipMember:
    """One file as its central directory entry describes it: ``data`` its content when selected, None on ``error`` (a
    short reason such as ``crc_mismatch`` or ``member_too_large``, with ``detail``) or when not selected."""

    name: str
    file_size: int
    crc: int
    data: bytes | None
    error: str | None = None
    detail: str = ""


def _zip64(extra: bytes, values: list[int]) -> list[int]:
    """``values`` (sizes, then the offset) with each 0xFFFFFFFF replaced, in order, from the ZIP64 extra field."""
    i = 0
    while i + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, i)
        if tag == ZIP64_EXTRA_ID:
            wide = iter(struct.unpack_from(f"<{min(length, len(extra) - i - 4) // 8}Q", extra, i + 4))
            return [next(wide, v) if v == MASK32 else v for v in values]
        i += 4 + length
    return values


def iter_members(path: str | os.PathLike, select: Callable[[str], bool] | None = None,
                 max_size: int | None = None) -> Iterator[ZipMember]:
    """Yield every file of the zip at ``path`` in its central directory's order (folders left out); ``select(name)``
    decides whose content is read into ``data`` (default: every file). ``max_size`` caps a selected member's uncompressed size
    (error ``member_too_large``) without ever holding more than the cap, so a zip bomb is harmless."""
    with open(path, "rb") as fh, open(path, "rb", buffering=CHUNK_SIZE) as directory:
        head = fh.read(4)
        if head not in (LOCAL_SIG, END_SIG):
            raise BadZip(f"{os.fspath(path)}: not a zip (it starts with {head!r}, not a zip's first record)")
        found = central_directory(path)
        if isinstance(found, str):
            raise TruncatedZip(path, found)
        start, size = found
        directory.seek(start)
        while (pos := directory.tell()) < start + size:
            raw = directory.read(_CENTRAL.size)
            if len(raw) < _CENTRAL.size or raw[:4] != CENTRAL_SIG:
                raise BadZip(f"{os.fspath(path)}: corrupt central directory at byte {pos}")
            _, _, _, flags, method, _, _, crc, csize, usize, nlen, xlen, clen, _, _, _, offset = _CENTRAL.unpack(raw)
            name = directory.read(nlen).decode("utf-8" if flags & FLAG_UTF8 else "cp437")
            name = name.split("\x00", 1)[0].replace(os.sep, "/")  # as zipfile does
            usize, csize, offset = _zip64(directory.read(xlen), [usize, csize, offset])
            directory.seek(clen, os.SEEK_CUR)
            if name.endswith("/"):  # a folder: no file
                continue
            if select is not None and not select(name):
                yield ZipMember(name, usize, crc, None)
            else:
                yield ZipMember(name, usize, crc, *_read(fh, name, offset, flags, method, crc, csize, usize, max_size))


def _inflate(dec, data: bytes, budget: int | None) -> Iterator[bytes]:
    """Inflate ``data`` in pieces of at most :data:`MAX_INFLATE` bytes, stopping past ``budget`` bytes (None: all)."""
    total = 0
    while True:
        n = MAX_INFLATE if budget is None else max(1, min(MAX_INFLATE, budget - total + 1))
        out = dec.decompress(data, n)
        total += len(out)
        if out:
            yield out
        data = dec.unconsumed_tail
        if not data or dec.eof or (budget is not None and total > budget):
            return


def _read(fh: BinaryIO, name: str, offset: int, flags: int, method: int, crc: int, csize: int, usize: int,
          max_size: int | None) -> tuple[bytes | None, str | None, str]:
    """(data, error, detail) of the member whose local header is at ``offset``: its ``csize`` bytes read in chunks,
    inflated as they come, checked against its size and CRC-32."""
    if flags & FLAG_ENCRYPTED:
        return None, "encrypted", "encrypted members are not supported"
    if method not in (STORED, DEFLATED):
        return None, "unsupported_compression", f"compression method {method}"
    if max_size is not None and usize > max_size:
        return None, "member_too_large", f"inflates to {usize} bytes, more than the cap of {max_size}"
    fh.seek(offset)
    header = fh.read(_LOCAL.size)
    if len(header) < _LOCAL.size or header[:4] != LOCAL_SIG:
        raise BadZip(f"{fh.name}: no local header at byte {offset}, where the central directory puts member {name!r}")
    fh.seek(sum(_LOCAL.unpack(header)[-2:]), os.SEEK_CUR)  # its name and extra field
    parts: list[bytes] = []
    got_crc = got_size = 0
    remaining = csize
    dec = zlib.decompressobj(-15) if method == DEFLATED else None
    try:
        while remaining > 0 or dec is not None:
            if remaining > 0:
                chunk = fh.read(min(remaining, CHUNK_SIZE))
                if not chunk:
                    raise BadZip(f"{fh.name}: member {name!r} runs past the end of the file")
                remaining -= len(chunk)
                budget = None if max_size is None else max_size - got_size
                pieces = [chunk] if dec is None else _inflate(dec, chunk, budget)
            else:  # every byte read: what the decompressor still holds, at the end of its stream
                pieces = [dec.flush()]
                if not dec.eof:
                    return None, "bad_deflate_data", "deflate stream ends early"
                dec = None
            for piece in pieces:
                got_crc = zlib.crc32(piece, got_crc)
                got_size += len(piece)
                parts.append(piece)
            if max_size is not None and got_size > max_size:
                detail = f"inflates to more than the cap of {max_size} bytes (the header says {usize})"
                return None, "member_too_large", detail
    except zlib.error as exc:
        return None, "bad_deflate_data", str(exc)
    if got_size != usize:
        return None, "size_mismatch", f"header says {usize} bytes, got {got_size}"
    if got_crc != crc:
        return None, "crc_mismatch", f"header CRC-32 {crc:08x}, data {got_crc:08x}"
    return b"".join(parts), None, ""
