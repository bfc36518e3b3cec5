"""Sequential zip reader: walks the local file headers from byte 0, never the central directory (``zipfile``
holds some 560 bytes per member: about 270 MiB for the 500,000-member ClinicalTrials.gov bulk zip). Memory is
bounded by the largest member read (or ``max_size``) plus a chunk; the input need not be seekable.

Supported: STORED and DEFLATED members, data descriptors (with or without signature, 4- or 8-byte sizes) and
ZIP64 extra fields. A member's CRC mismatch, corrupt deflate data, unsupported method or encryption is reported
on it (``ZipMember.error``) and the walk goes on. A file that ends before the central directory raises
``TruncatedZip`` after every complete member; ``BadZip``: data before the first header, split archives, or a
member whose end cannot be found without the central directory.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

LOCAL_SIG = b"PK\x03\x04"
CENTRAL_SIG = b"PK\x01\x02"
DESCRIPTOR_SIG = b"PK\x07\x08"
SPAN_MARKERS = (DESCRIPTOR_SIG, b"PK00")  # at offset 0 only: a (single-segment) spanned archive
# the central directory, end of central directory (ZIP64 too), ZIP64 locator, archive extra data, digital signature
END_SIGS = frozenset({CENTRAL_SIG, b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x06\x08", b"PK\x05\x05"})
NEXT_SIGS = END_SIGS | {LOCAL_SIG}  # what may follow a member (used to confirm a data descriptor)

STORED = 0
DEFLATED = 8
FLAG_ENCRYPTED = 0x0001
FLAG_DESCRIPTOR = 0x0008
FLAG_UTF8 = 0x0800
ZIP64_EXTRA_ID = 0x0001
MASK32 = 0xFFFFFFFF

_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # signature .. extra length: 30 bytes
_DESCRIPTOR_PEEK = 4 + 4 + 16 + 4  # signature, CRC, two 8-byte sizes, next signature
CHUNK_SIZE = 1 << 16
#: The most bytes one call to the decompressor returns (64 KiB of deflate data can inflate to 64 MiB).
MAX_INFLATE = 1 << 20


class ZipStreamError(Exception):
    """The zip cannot be walked any further."""


class BadZip(ZipStreamError):
    """Not a zip this reader can walk, or corrupt beyond the current member."""


class TruncatedZip(ZipStreamError):
    """The file ends before the central directory: every complete member has been yielded."""

    def __init__(self, offset: int, last_good: str | None, member: str | None = None, path: str | os.PathLike | None = None) -> None:
        self.offset = offset
        self.last_good = last_good
        self.member = member
        self.path = os.fspath(path) if path is not None else None
        where = f"inside member {member!r}" if member else "between members"
        last = f"last complete member: {last_good!r}" if last_good else "no complete member"
        name = f"{self.path}: " if self.path else ""
        super().__init__(f"{name}zip truncated at byte {offset} {where} ({last}); the download was probably interrupted: "
                         "delete it and fetch it again")


@dataclass(frozen=True, slots=True)
class ZipMember:
    """One member as its local header describes it: ``data`` a selected file's content, None on ``error`` (a short
    reason such as ``crc_mismatch`` or ``member_too_large``, with ``detail``) or when not selected."""

    name: str
    offset: int
    method: int
    flags: int
    compressed_size: int
    file_size: int
    crc: int
    data: bytes | None
    error: str | None = None
    detail: str = ""

    @property
    def is_dir(self) -> bool:
        return self.name.endswith("/")


class _Eof(Exception):
    pass


class _Source:
    """A binary stream read in ``chunk_size`` pieces, with push-back of the bytes just read and the offset."""

    def __init__(self, fh: BinaryIO, chunk_size: int) -> None:
        self._fh = fh
        self._buf = b""
        self._pos = 0
        self.chunk_size = chunk_size
        self.offset = 0

    def chunk(self, limit: int | None = None) -> bytes:
        """Up to ``min(limit, chunk_size)`` bytes; b"" only at end of file."""
        if self._pos >= len(self._buf):
            self._buf = self._fh.read(self.chunk_size) or b""
            self._pos = 0
        n = self.chunk_size if limit is None else min(limit, self.chunk_size)
        out = self._buf[self._pos : self._pos + n]
        self._pos += len(out)
        self.offset += len(out)
        return out

    def read(self, n: int) -> bytes:
        """``n`` bytes, fewer only at end of file."""
        parts = []
        while n > 0:
            b = self.chunk(n)
            if not b:
                break
            parts.append(b)
            n -= len(b)
        return b"".join(parts)

    def exact(self, n: int) -> bytes:
        b = self.read(n)
        if len(b) < n:
            raise _Eof
        return b

    def unread(self, b: bytes) -> None:
        """Push back ``b``, which must be the bytes most recently read (a suffix of them)."""
        n = len(b)
        if not n:
            return
        if n <= self._pos:  # all of it came from the current buffer: step back
            self._pos -= n
        else:
            self._buf = bytes(b) + self._buf[self._pos :]
            self._pos = 0
        self.offset -= n


def _decode_name(raw: bytes, flags: int) -> str:
    name = raw.decode("utf-8") if flags & FLAG_UTF8 else raw.decode("cp437")
    name = name.split("\x00", 1)[0]  # as zipfile does
    if os.sep != "/":
        name = name.replace(os.sep, "/")
    return name


def _zip64_sizes(extra: bytes, file_size: int, compressed_size: int) -> tuple[int, int, bool]:
    """Sizes from a ZIP64 extra field: each 0xFFFFFFFF header size, in order, from 8 bytes."""
    i = 0
    while i + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, i)
        if tag == ZIP64_EXTRA_ID:
            data = extra[i + 4 : i + 4 + length]
            j = 0
            if file_size == MASK32 and j + 8 <= len(data):
                (file_size,) = struct.unpack_from("<Q", data, j)
                j += 8
            if compressed_size == MASK32 and j + 8 <= len(data):
                (compressed_size,) = struct.unpack_from("<Q", data, j)
            return file_size, compressed_size, True
        i += 4 + length
    return file_size, compressed_size, False


def _descriptor(buf: bytes, csize: int, usize: int, zip64: bool) -> tuple[int, int, bool] | None:
    """(crc, length, confirmed) of the data descriptor at the start of ``buf`` whose sizes match, preferring a layout
    followed by another record (or the file's end); None when none matches."""
    widths = (8, 4) if zip64 else (4, 8)
    found: list[tuple[int, int, bool]] = []
    for has_sig in (True, False):
        if has_sig and buf[:4] != DESCRIPTOR_SIG:
            continue
        start = 4 if has_sig else 0
        for w in widths:
            end = start + 4 + 2 * w
            if len(buf) < end:
                continue
            crc, c, u = struct.unpack_from("<I" + ("QQ" if w == 8 else "II"), buf, start)
            mask = (1 << (8 * w)) - 1
            if c != csize & mask or u != usize & mask:
                continue
            follows = buf[end : end + 4]
            found.append((crc, end, follows in NEXT_SIGS or follows == b""))
    return next((hit for hit in found if hit[2]), found[0] if found else None)


def iter_members(source: str | os.PathLike | BinaryIO, select: Callable[[str], bool] | None = None, chunk_size: int = CHUNK_SIZE,
                 max_size: int | None = None) -> Iterator[ZipMember]:
    """Yield every member of the zip (a path or a readable binary stream) in file order; ``select(name)`` decides
    whose content is read into ``data`` (default: every file). ``max_size`` caps a selected member's uncompressed
    size (error ``member_too_large``) without ever holding more than the cap, so a zip bomb is harmless."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb", buffering=chunk_size) as fh:
            try:
                yield from _walk(_Source(fh, chunk_size), select, max_size)
            except TruncatedZip as exc:  # name the file
                raise TruncatedZip(exc.offset, exc.last_good, exc.member, path=source) from None
    else:
        yield from _walk(_Source(source, chunk_size), select, max_size)


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


def _walk(src: _Source, select: Callable[[str], bool] | None, max_size: int | None = None) -> Iterator[ZipMember]:
    last_good: str | None = None
    first = True
    while True:
        start = src.offset
        sig = src.read(4)
        if first and sig in SPAN_MARKERS:
            start = src.offset
            sig = src.read(4)
        if not sig and first:
            raise BadZip("empty file, not a zip")
        if len(sig) < 4:
            raise TruncatedZip(start, last_good)
        if sig in END_SIGS:
            return
        if sig != LOCAL_SIG:
            if first:
                raise BadZip(f"not a zip, or one with data before its first member (starts with {sig!r}); this reader walks local headers from byte 0")
            raise BadZip(f"corrupt zip: {sig!r} at byte {start} where a local file header or the central directory should start (after member {last_good!r})")
        first = False
        member_name: str | None = None
        try:
            fields = _LOCAL.unpack(sig + src.exact(_LOCAL.size - 4))
            _, _, flags, method, _, _, crc, csize, usize, nlen, xlen = fields
            member_name = _decode_name(src.exact(nlen), flags)
            usize, csize, zip64 = _zip64_sizes(src.exact(xlen), usize, csize)
            member = _read_member(src, start, member_name, flags, method, crc, csize, usize, zip64, select, max_size)
        except _Eof:
            raise TruncatedZip(src.offset, last_good, member_name) from None
        last_good = member.name
        yield member


def _read_member(src: _Source, start: int, name: str, flags: int, method: int, crc: int, csize: int, usize: int, zip64: bool,
                 select: Callable[[str], bool] | None, max_size: int | None = None) -> ZipMember:
    wanted = not name.endswith("/") and (select is None or select(name))
    if flags & FLAG_DESCRIPTOR:
        data, error, detail, csize, usize, crc = _read_with_descriptor(src, name, flags, method, zip64, wanted, max_size)
    else:
        data, error, detail = _read_sized(src, flags, method, crc, csize, usize, wanted, max_size)
    return ZipMember(name, start, method, flags, csize, usize, crc, data, error, detail)


def _too_large(size: int, cap: int) -> tuple[str, str]:
    return "member_too_large", f"inflates to {size} bytes, more than the cap of {cap}"


def _read_sized(src: _Source, flags: int, method: int, crc: int, csize: int, usize: int, wanted: bool,
                max_size: int | None = None) -> tuple[bytes | None, str | None, str]:
    """Sizes and CRC in the local header: read ``csize`` bytes in chunks, inflating as they come."""
    if not wanted:  # stepped over unread (so not CRC-checked)
        _skip(src, csize)
        return None, None, ""
    problem: tuple[str, str] | None = None
    if flags & FLAG_ENCRYPTED:
        problem = "encrypted", "encrypted members are not supported"
    elif method not in (STORED, DEFLATED):
        problem = "unsupported_compression", f"compression method {method}"
    elif max_size is not None and usize > max_size:
        problem = _too_large(usize, max_size)
    if problem is not None:
        _skip(src, csize)
        return None, *problem
    parts: list[bytes] = []
    got_crc = 0
    got_size = 0
    remaining = csize
    error: tuple[str, str] | None = None
    dec = zlib.decompressobj(-15) if method == DEFLATED else None
    while remaining > 0:
        chunk = src.chunk(remaining)
        if not chunk:
            raise _Eof
        remaining -= len(chunk)
        if error:
            continue
        try:
            pieces = [chunk] if dec is None else list(_inflate(dec, chunk, None if max_size is None else max_size - got_size))
        except zlib.error as exc:
            error = ("bad_deflate_data", str(exc))
            continue
        for piece in pieces:
            got_crc = zlib.crc32(piece, got_crc)
            got_size += len(piece)
            parts.append(piece)
        if max_size is not None and got_size > max_size:
            error = ("member_too_large", f"inflates to more than the cap of {max_size} bytes (the header says {usize})")
            parts.clear()
    if not error and dec is not None:
        try:
            tail = dec.flush()
        except zlib.error as exc:
            error = ("bad_deflate_data", str(exc))
        else:
            got_crc = zlib.crc32(tail, got_crc)
            got_size += len(tail)
            parts.append(tail)
            if not dec.eof:
                error = ("bad_deflate_data", "deflate stream ends early")
            elif max_size is not None and got_size > max_size:
                error = ("member_too_large", f"inflates to more than the cap of {max_size} bytes (the header says {usize})")
    if not error and got_size != usize:
        error = ("size_mismatch", f"header says {usize} bytes, got {got_size}")
    if not error and got_crc != crc:
        error = ("crc_mismatch", f"header CRC-32 {crc:08x}, data {got_crc:08x}")
    if error:
        return None, *error
    return b"".join(parts), None, ""


def _skip(src: _Source, n: int) -> None:
    while n > 0:
        chunk = src.chunk(n)
        if not chunk:
            raise _Eof
        n -= len(chunk)


def _read_with_descriptor(src: _Source, name: str, flags: int, method: int, zip64: bool, wanted: bool,
                          max_size: int | None = None) -> tuple[bytes | None, str | None, str, int, int, int]:
    """Bit 3, sizes and CRC after the data: inflate to the stream's end (STORED: scan) and match the descriptor.
    Returns (data, error, detail, csize, usize, crc)."""
    if flags & FLAG_ENCRYPTED or method not in (STORED, DEFLATED):
        what = "an encrypted member" if flags & FLAG_ENCRYPTED else f"a member compressed with method {method}"
        raise BadZip(f"cannot find the end of {name!r}: {what} with a data descriptor needs the central directory")
    if method == STORED:
        data, desc_crc, got_crc, usize = _scan_stored(src, zip64, wanted, max_size)
        csize = usize
    else:
        dec = zlib.decompressobj(-15)
        parts: list[bytes] = []
        got_crc = usize = csize = 0
        keep = wanted
        while not dec.eof:
            chunk = src.chunk()
            if not chunk:
                raise _Eof
            try:
                for out in _inflate(dec, chunk, None):
                    got_crc = zlib.crc32(out, got_crc)
                    usize += len(out)
                    if keep and max_size is not None and usize > max_size:
                        keep = False
                        parts.clear()
                    if keep:
                        parts.append(out)
            except zlib.error as exc:
                raise BadZip(f"corrupt deflate data in {name!r} ({exc}); with a data descriptor its end cannot be found") from None
            unused = dec.unused_data
            csize += len(chunk) - len(unused)
            src.unread(unused)
        buf = src.read(_DESCRIPTOR_PEEK)
        src.unread(buf)  # only peeked at
        found = _descriptor(buf, csize, usize, zip64)
        if found is None:
            if len(buf) < _DESCRIPTOR_PEEK:  # the file ends within the descriptor
                raise _Eof
            raise BadZip(f"no data descriptor matching {name!r} ({csize} bytes compressed, {usize} uncompressed) after its data")
        desc_crc, length, _ = found
        src.exact(length)
        data = b"".join(parts)
    if desc_crc != got_crc:
        return None, "crc_mismatch", f"descriptor CRC-32 {desc_crc:08x}, data {got_crc:08x}", csize, usize, desc_crc
    if wanted and max_size is not None and usize > max_size:
        return None, *_too_large(usize, max_size), csize, usize, desc_crc
    return (data if wanted else None), None, "", csize, usize, desc_crc


def _scan_stored(src: _Source, zip64: bool, wanted: bool, max_size: int | None) -> tuple[bytes | None, int, int, int]:
    """STORED with a data descriptor (rare): the data ends where a descriptor for its length starts whose CRC
    matches, or that has its signature and is followed by another record. Returns (data or None, descriptor CRC,
    CRC of the data, data length); the bytes after the descriptor are pushed back."""
    window = bytearray()  # the data from offset ``base`` on: the positions not yet searched
    base = 0
    crc = 0  # CRC-32 of the data before ``base``
    parts: list[bytes] | None = [] if wanted else None
    while True:
        chunk = src.chunk()
        eof = not chunk
        window += chunk
        end = base + len(window)
        # a candidate at p needs the descriptor and the next signature after it unless the file ends
        limit = end if eof else end - _DESCRIPTOR_PEEK
        if limit >= base:
            hit = _stored_candidate(window, base, limit, crc, zip64)
            if hit is not None:
                pos, desc_crc, length = hit
                tail = bytes(window[: pos - base])
                crc = zlib.crc32(tail, crc)
                if parts is not None and (max_size is None or pos <= max_size):
                    parts.append(tail)
                src.unread(bytes(window[pos - base + length :]))
                data = b"".join(parts) if parts is not None and (max_size is None or pos <= max_size) else None
                return data, desc_crc, crc, pos
            done = min(len(window), limit + 1 - base)  # searched: leaves the window
            piece = bytes(window[:done])
            crc = zlib.crc32(piece, crc)
            del window[:done]
            base += done
            if parts is not None:
                if max_size is not None and base > max_size:
                    parts = None  # past the cap: nothing more is kept
                else:
                    parts.append(piece)
        if eof:
            raise _Eof


def _stored_candidate(window: bytearray, base: int, limit: int, crc: int, zip64: bool) -> tuple[int, int, int] | None:
    """(p, crc, length) of the first descriptor at a data offset p in [base, limit] that ends the data before it
    (``window``: the data from ``base`` on; ``crc``: of the data before it)."""
    positions: set[int] = set()
    i = window.find(DESCRIPTOR_SIG)
    while i != -1 and base + i <= limit:
        positions.add(base + i)
        i = window.find(DESCRIPTOR_SIG, i + 1)
    for sig in (LOCAL_SIG, CENTRAL_SIG):  # a descriptor without signature is followed by the next record
        i = window.find(sig, 12)
        while i != -1 and base + i - 20 <= limit:
            positions.update(base + j for j in (i - 12, i - 20) if 0 <= j and base + j <= limit)
            i = window.find(sig, i + 1)
    for p in sorted(positions):
        j = p - base
        found = _descriptor(bytes(window[j : j + _DESCRIPTOR_PEEK]), p, p, zip64)
        if found is None:
            continue
        desc_crc, length, confirmed = found
        if desc_crc == zlib.crc32(window[:j], crc) or (confirmed and window[j : j + 4] == DESCRIPTOR_SIG):
            return p, desc_crc, length
    return None
