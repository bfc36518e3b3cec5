"""The zip reader (medfc.clinifact.zipstream) and the bulk-zip reader built on it."""

from __future__ import annotations

import io
import json
import struct
import tempfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from medfc.clinifact import ctgov, zipstream
from medfc.common.io import read_jsonl, write_jsonl
from medfc.common.report import SkipReport

DEMO_ZIP = Path(__file__).resolve().parents[3] / "resources" / "demo" / "ctgov" / "studies.zip"

# contents that exercise the reader: empty, text holding zip signatures, incompressible, many chunks
MEMBERS = {
    "NCT99110001.json": json.dumps({"nctId": "NCT99110001", "title": "Ölçüm – ünïcode"}).encode(),
    "empty.txt": b"",
    "sigs.bin": b"xPK\x07\x08yy" + zipstream.LOCAL_SIG + b"z" * 40 + zipstream.CENTRAL_SIG + zipstream.END_SIG,
    "random.bin": bytes((i * 7919 + (i >> 3) * 104729) % 251 for i in range(5000)),
    "dir/": b"",
    "dir/NCT99110002.json": json.dumps({"nctId": "NCT99110002", "rows": list(range(30000))}).encode(),
    "dir/ünï.json": b"{}",
}


class Unseekable:
    """A write-only stream without seek/tell: zipfile then writes data descriptors (flag bit 3)."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()

    def write(self, b: bytes) -> int:
        return self.buf.write(b)

    def flush(self) -> None:
        pass


def make_zip(compression: int, seekable: bool = True, zip64: bool = False, members: dict[str, bytes] = MEMBERS) -> bytes:
    out = io.BytesIO() if seekable else Unseekable()
    with zipfile.ZipFile(out, "w", compression=compression) as zf:
        for name, data in members.items():
            if name.endswith("/"):
                zf.writestr(name, b"")
                continue
            with zf.open(name, "w", force_zip64=zip64) as fh:
                fh.write(data)
    return out.getvalue() if seekable else out.buf.getvalue()


FILES = [n for n in MEMBERS if not n.endswith("/")]  # what the reader yields: folders are no files

VARIANTS = {
    "stored": dict(compression=zipfile.ZIP_STORED),
    "deflated": dict(compression=zipfile.ZIP_DEFLATED),
    "stored_descriptor": dict(compression=zipfile.ZIP_STORED, seekable=False),
    "deflated_descriptor": dict(compression=zipfile.ZIP_DEFLATED, seekable=False),
    "stored_zip64": dict(compression=zipfile.ZIP_STORED, zip64=True),
    "deflated_zip64": dict(compression=zipfile.ZIP_DEFLATED, zip64=True),
    "stored_zip64_descriptor": dict(compression=zipfile.ZIP_STORED, seekable=False, zip64=True),
    "deflated_zip64_descriptor": dict(compression=zipfile.ZIP_DEFLATED, seekable=False, zip64=True),
}


def _members(data: bytes, **kw) -> list[zipstream.ZipMember]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.zip"
        path.write_bytes(data)
        return list(zipstream.iter_members(path, **kw))


def _zipfile_contents(data: bytes) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def _local_header_offsets(data: bytes) -> dict[str, int]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {i.filename: i.header_offset for i in zf.infolist()}


def _central_dir_offset(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.start_dir


def _central_entries(data: bytes) -> dict[str, int]:
    """Where each member's central directory entry starts."""
    out, pos = {}, _central_dir_offset(data)
    while data[pos : pos + 4] == zipstream.CENTRAL_SIG:
        nlen, xlen, clen = struct.unpack_from("<3H", data, pos + 28)
        out[data[pos + 46 : pos + 46 + nlen].decode()] = pos
        pos += 46 + nlen + xlen + clen
    return out


def _patched(data: bytes, name: str, at: int, fmt: str, value: int) -> bytes:
    """``data`` with the field at ``at`` of ``name``'s central directory entry set to ``value``."""
    buf = bytearray(data)
    struct.pack_into(fmt, buf, _central_entries(data)[name] + at, value)
    return bytes(buf)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reads_what_zipfile_wrote(variant):
    data = make_zip(**VARIANTS[variant])
    got = _members(data)
    assert [(m.name, m.data) for m in got] == [(n, d) for n, d in _zipfile_contents(data) if not n.endswith("/")]
    assert all(m.error is None for m in got)
    for m in got:
        assert (m.file_size, m.crc) == (len(MEMBERS[m.name]), zlib.crc32(MEMBERS[m.name]))


@pytest.mark.parametrize("variant", ["deflated_zip64", "deflated_zip64_descriptor"])
def test_zip64_local_headers_carry_sizes_in_the_extra_field(variant):
    data = make_zip(**VARIANTS[variant])
    off = _local_header_offsets(data)["random.bin"]
    _, _, flags, _, _, _, _, csize, usize, _, xlen = struct.unpack_from("<4sHHHHHIIIHH", data, off)
    assert (csize, usize) == (0xFFFFFFFF, 0xFFFFFFFF) and xlen >= 20
    m = next(m for m in _members(data) if m.name == "random.bin")
    assert m.file_size == 5000 and m.data == MEMBERS["random.bin"]


def test_zip64_central_directory(monkeypatch):
    """Sizes and offsets in the entries' ZIP64 extra fields, and the directory found through the zip64 end record."""
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)  # zipfile writes ZIP64 records past this
    data = bytearray(make_zip(zipfile.ZIP_STORED, zip64=True))
    entry = _central_entries(bytes(data))["random.bin"]
    assert struct.unpack_from("<2I", data, entry + 20) == (0xFFFFFFFF, 0xFFFFFFFF)
    end = data.rindex(zipstream.END_SIG)
    struct.pack_into("<HHI", data, end + 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF)  # entries and size: the zip64 end record's
    got = _members(bytes(data))
    assert [(m.name, m.data) for m in got] == [(n, MEMBERS[n]) for n in FILES]


def test_select_steps_over_unwanted_members():
    for variant in VARIANTS:
        got = _members(make_zip(**VARIANTS[variant]), select=lambda n: n.endswith(".json"))
        assert [m.name for m in got] == FILES, variant
        assert {m.name for m in got if m.data is not None} == {"NCT99110001.json", "dir/NCT99110002.json", "dir/ünï.json"}, variant


def _corrupt_stored_byte(data: bytes, name: str) -> bytes:
    off = _local_header_offsets(data)[name]
    _, _, _, _, _, _, _, _, _, nlen, xlen = struct.unpack_from("<4sHHHHHIIIHH", data, off)
    pos = off + 30 + nlen + xlen + 3
    buf = bytearray(data)
    buf[pos] ^= 0x01
    return bytes(buf)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_crc_mismatch_is_a_member_error(variant):
    wrong = zlib.crc32(MEMBERS["random.bin"]) ^ 0xDEADBEEF
    data = _patched(make_zip(**VARIANTS[variant]), "random.bin", 16, "<I", wrong)
    got = _members(data)
    bad = [m for m in got if m.error]
    assert [(m.name, m.error, m.data) for m in bad] == [("random.bin", "crc_mismatch", None)]
    assert "data" in bad[0].detail
    assert [m.name for m in got] == FILES  # the walk goes on


@pytest.mark.parametrize("variant", ["stored", "stored_descriptor", "stored_zip64_descriptor"])
def test_corrupt_stored_data_is_a_crc_mismatch(variant):
    data = _corrupt_stored_byte(make_zip(**VARIANTS[variant]), "random.bin")
    got = _members(data)
    assert [(m.name, m.error) for m in got if m.error] == [("random.bin", "crc_mismatch")]
    assert [m.name for m in got] == FILES


def test_corrupt_deflate_data_is_a_member_error_when_sizes_are_known():
    data = make_zip(**VARIANTS["deflated"])
    off = _local_header_offsets(data)["dir/NCT99110002.json"]
    pos = off + 30 + len("dir/NCT99110002.json".encode()) + 10
    buf = bytearray(data)
    buf[pos : pos + 40] = b"\xff" * 40
    got = _members(bytes(buf))
    errors = [(m.name, m.error) for m in got if m.error]
    assert len(errors) == 1 and errors[0][0] == "dir/NCT99110002.json" and errors[0][1] in {"bad_deflate_data", "crc_mismatch", "size_mismatch"}
    assert [m.name for m in got] == FILES


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_truncated_zip_is_refused_before_any_member(variant, tmp_path):
    data = make_zip(**VARIANTS[variant])
    path = tmp_path / "cut.zip"
    for cut in sorted(set(range(4, len(data), max(97, len(data) // 300))) | {len(data) - d for d in range(1, 30)}):
        path.write_bytes(data[:cut])
        with pytest.raises(zipstream.TruncatedZip, match="truncated") as exc:
            next(zipstream.iter_members(path))
        assert exc.value.path == str(path) and str(path) in str(exc.value), cut


def test_empty_zip_and_not_a_zip(tmp_path):
    buf = io.BytesIO()
    zipfile.ZipFile(buf, "w").close()
    assert _members(buf.getvalue()) == []
    with pytest.raises(zipstream.BadZip, match="not a zip"):
        _members(b"")
    with pytest.raises(zipstream.BadZip, match="not a zip"):
        _members(b"#!/bin/sh\n" + make_zip(**VARIANTS["stored"]))


def test_an_entry_pointing_at_no_member_is_a_clear_error():
    data = make_zip(**VARIANTS["stored"])
    off = _local_header_offsets(data)["random.bin"]
    with pytest.raises(zipstream.BadZip, match="where the central directory puts member 'random.bin'"):
        _members(data[:off] + b"XXXX" + data[off + 4 :])


def test_encrypted_and_unsupported_members_are_member_errors():
    data = _patched(make_zip(**VARIANTS["stored"]), "sigs.bin", 10, "<H", 12)  # bzip2
    got = _members(_patched(data, "random.bin", 8, "<H", 1))  # encrypted
    assert [(m.name, m.error) for m in got if m.error] == [("sigs.bin", "unsupported_compression"), ("random.bin", "encrypted")]
    assert [m.name for m in got] == FILES


def test_memory_is_flat_in_the_number_of_members(tmp_path):
    peaks = []
    for n in (500, 4000):
        members = {f"NCT9{i:07d}.json": json.dumps({"i": i, "pad": "x" * 300}).encode() for i in range(n)}
        path = tmp_path / f"{n}.zip"
        path.write_bytes(make_zip(zipfile.ZIP_DEFLATED, members=members))
        tracemalloc.start()
        count = sum(1 for m in zipstream.iter_members(path) if m.data)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert count == n
    assert peaks[1] < peaks[0] * 1.3 + 50_000, peaks


# --- the bulk reader on top -------------------------------------------------------------------


def _zipfile_iter_bulk_zip(path: Path, report: SkipReport) -> list[dict]:
    """A zipfile-based reader of the same studies, the reference the streaming reader must match (its skip
    details name the zip and member as the streaming reader's do)."""
    out = []
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            m = ctgov.NCT_MEMBER.search(info.filename)
            if not m:
                report.skip(info.filename, "not_a_study_member")
                continue
            try:
                out.append(json.loads(zf.read(info)))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                report.skip(m.group(1), "invalid_json", f"{path}: member {info.filename!r}: {str(exc)[:200]}")
    return out


def test_demo_zip_gives_the_same_studies_as_the_zipfile_reader(tmp_path):
    zipfile_report, stream_report = SkipReport("zipfile"), SkipReport("stream")
    by_zipfile = _zipfile_iter_bulk_zip(DEMO_ZIP, zipfile_report)
    streamed = list(ctgov.iter_bulk_zip(DEMO_ZIP, report=stream_report))
    assert len(streamed) == 44 and streamed == by_zipfile
    assert zipfile_report.skipped == stream_report.skipped == []

    report = SkipReport("fetch")
    n = ctgov.read_bulk_zip(DEMO_ZIP, tmp_path / "streamed.jsonl.gz", report=report, progress=False)
    write_jsonl(tmp_path / "by_zipfile.jsonl.gz", [s for s in by_zipfile if ctgov.passes_clinifact_filter(s) is None])
    assert n == 41 and (tmp_path / "streamed.jsonl.gz").read_bytes() == (tmp_path / "by_zipfile.jsonl.gz").read_bytes()


def test_bulk_reader_matches_zipfile_reader_on_descriptor_zips(tmp_path):
    members = {"ctg-studies/": b"", "README.txt": b"not a study", "ctg-studies/NCT99110002.json": b"{broken"}
    members |= {f"ctg-studies/NCT9911{i:04d}.json": json.dumps({"protocolSection": {"identificationModule": {"nctId": f"NCT9911{i:04d}"}}}).encode() for i in (1, 3, 4)}
    for variant in ("deflated_descriptor", "stored_zip64_descriptor"):
        zpath = tmp_path / f"{variant}.zip"
        zpath.write_bytes(make_zip(**{**VARIANTS[variant], "members": members}))
        zipfile_report, stream_report = SkipReport("zipfile"), SkipReport("stream")
        assert list(ctgov.iter_bulk_zip(zpath, report=stream_report)) == _zipfile_iter_bulk_zip(zpath, zipfile_report)
        assert stream_report.skipped == zipfile_report.skipped
        assert stream_report.reasons() == {"invalid_json": 1, "not_a_study_member": 1}


def test_bulk_reader_counts_a_crc_mismatch_and_goes_on(tmp_path):
    members = {f"NCT9911{i:04d}.json": json.dumps({"protocolSection": {"identificationModule": {"nctId": f"NCT9911{i:04d}"}}}).encode() for i in range(1, 5)}
    zpath = tmp_path / "bad.zip"
    zpath.write_bytes(_patched(make_zip(zipfile.ZIP_DEFLATED, members=members), "NCT99110002.json", 16, "<I", 0))
    report = SkipReport("t")
    assert [ctgov.nct_id(s) for s in ctgov.iter_bulk_zip(zpath, report=report)] == ["NCT99110001", "NCT99110003", "NCT99110004"]
    assert report.reasons() == {"crc_mismatch": 1} and report.skipped[0]["id"] == "NCT99110002"


def test_read_bulk_zip_on_a_truncated_download_fails_clearly_and_writes_nothing(tmp_path):
    data = DEMO_ZIP.read_bytes()
    offsets = _local_header_offsets(data)
    cut = offsets["NCT99000021.json"] + 100
    zpath = tmp_path / "partial.zip"
    zpath.write_bytes(data[:cut])
    with pytest.raises(zipstream.TruncatedZip, match="delete it and fetch it again"):
        ctgov.read_bulk_zip(zpath, tmp_path / "out.jsonl.gz", progress=False)
    assert not (tmp_path / "out.jsonl.gz").exists() and list(tmp_path.iterdir()) == [zpath]


# --- size cap and member types ------------------------------------------------------------------

BOMB_SIZE = 4_000_000
CAP = 100_000


def _bomb_members() -> dict[str, bytes]:
    study = lambda i: json.dumps({"protocolSection": {"identificationModule": {"nctId": f"NCT9911{i:04d}"}}}).encode()  # noqa: E731
    return {"NCT99110001.json": study(1), "NCT99110002.json": b'{"pad": "' + b"x" * BOMB_SIZE + b'"}', "NCT99110003.json": study(3)}


@pytest.fixture
def inflated(monkeypatch):
    """The sizes of every piece of output the zip reader's decompressors return."""
    pieces: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, *a):
            self._d = real(*a)

        def decompress(self, data, max_length=0):
            out = self._d.decompress(data, max_length)
            pieces.append(len(out))
            return out

        def flush(self, *a):
            out = self._d.flush(*a)
            pieces.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self._d, name)

    monkeypatch.setattr(zipstream.zlib, "decompressobj", Counting)
    return pieces


@pytest.mark.parametrize("variant", ["deflated", "deflated_descriptor"])
def test_a_member_larger_than_the_cap_is_a_member_error_and_is_never_inflated(inflated, variant):
    """A member whose entry says it inflates past the cap is stepped over unread."""
    data = make_zip(**VARIANTS[variant], members=_bomb_members())
    assert len(data) < 20_000  # about 4 KB on disk, 4 MB inflated
    got = _members(data, max_size=CAP)
    assert [(m.name, m.error) for m in got] == [("NCT99110001.json", None), ("NCT99110002.json", "member_too_large"), ("NCT99110003.json", None)]
    assert got[1].data is None and got[1].detail == f"inflates to {BOMB_SIZE + 11} bytes, more than the cap of {CAP}"
    assert sum(inflated) == len(got[0].data) + len(got[2].data)  # not one byte of the big member was inflated


def test_a_member_whose_header_understates_its_size_stops_inflating_at_the_cap(inflated):
    data = make_zip(zipfile.ZIP_DEFLATED, members=_bomb_members())
    data = _patched(data, "NCT99110002.json", 24, "<I", 50)  # its entry says 50 bytes
    got = _members(data, max_size=CAP)
    assert [(m.name, m.error) for m in got] == [("NCT99110001.json", None), ("NCT99110002.json", "member_too_large"), ("NCT99110003.json", None)]
    assert got[1].detail == f"inflates to more than the cap of {CAP} bytes (the header says 50)"
    assert sum(inflated) <= len(got[0].data) + len(got[2].data) + CAP + 1


def test_without_a_cap_or_under_it_members_read_as_before():
    data = make_zip(zipfile.ZIP_DEFLATED, members=_bomb_members())
    for cap in (None, BOMB_SIZE + 11):
        got = _members(data, max_size=cap)
        assert [m.error for m in got] == [None, None, None] and len(got[1].data) == BOMB_SIZE + 11


def test_the_bulk_reader_counts_oversized_and_non_object_members_with_zip_and_member(tmp_path):
    members = _bomb_members() | {"ctg/NCT99110004.json": b"[1, 2]", "NCT99110005.json": b'"a string"', "NCT99110006.json": b"{broken"}
    for variant in ("deflated", "deflated_descriptor", "stored"):
        zpath = tmp_path / f"{variant}.zip"
        zpath.write_bytes(make_zip(**{**VARIANTS[variant], "members": members}))
        report = SkipReport("t")
        n = ctgov.read_bulk_zip(zpath, tmp_path / "out.jsonl.gz", report=report, apply_filter=False, progress=False, max_member_bytes=CAP)
        assert n == 2
        by_id = {s["id"]: (s["reason"], s["detail"]) for s in report.skipped}
        assert by_id["NCT99110002"][0] == "member_too_large" and by_id["NCT99110002"][1].startswith(f"{zpath}: member 'NCT99110002.json' ")
        assert by_id["NCT99110004"] == ("not_a_json_object", f"{zpath}: member 'ctg/NCT99110004.json' holds a JSON array, not an object")
        assert by_id["NCT99110005"] == ("not_a_json_object", f"{zpath}: member 'NCT99110005.json' holds a JSON string, not an object")
        assert by_id["NCT99110006"][0] == "invalid_json" and by_id["NCT99110006"][1].startswith(f"{zpath}: member 'NCT99110006.json': ")
        assert report.reasons() == {"invalid_json": 1, "member_too_large": 1, "not_a_json_object": 2}


def test_a_stored_member_with_a_descriptor_is_never_held_past_the_cap(tmp_path):
    """STORED with a data descriptor (what a writer on a pipe makes): its bytes are held only while it is wanted and
    under the cap."""
    big = bytes((i * 2654435761) >> 13 & 0xFF for i in range(1 << 16)) * 128  # 8 MiB, holding no zip signature
    members = {"NCT99110001.json": b'{"a": 1}', "NCT99110002.json": big, "NCT99110003.json": b'{"b": 2}'}
    path = tmp_path / "stored.zip"
    path.write_bytes(make_zip(zipfile.ZIP_STORED, seekable=False, members=members))
    cap = 256 * 1024
    for max_size, wanted in ((cap, None), (cap, lambda n: n != "NCT99110002.json"), (None, None)):
        tracemalloc.start()
        got = [(m.name, m.error, None if m.data is None else len(m.data), m.file_size, m.crc)
               for m in zipstream.iter_members(path, select=wanted, max_size=max_size)]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        error = "member_too_large" if max_size and wanted is None else None
        size = None if error or wanted is not None else len(big)
        assert got == [("NCT99110001.json", None, 8, 8, zlib.crc32(b'{"a": 1}')), ("NCT99110002.json", error, size, len(big), zlib.crc32(big)),
                       ("NCT99110003.json", None, 8, 8, zlib.crc32(b'{"b": 2}'))]
        if max_size is not None:
            assert peak < 2 * cap + 4 * zipstream.CHUNK_SIZE, peak  # the cap and a few chunks, not the member's 8 MiB
        else:
            assert peak < 2.2 * len(big), peak  # uncapped: the member itself (and its join), no copies beyond


def test_the_bulk_reader_writes_a_study_present_twice_once_and_counts_the_repeat(tmp_path):
    first = {"protocolSection": {"identificationModule": {"nctId": "NCT99110001"}}, "copy": 1}
    second = {"protocolSection": {"identificationModule": {"nctId": "NCT99110001"}}, "copy": 2}
    other = {"protocolSection": {"identificationModule": {"nctId": "NCT99110002"}}}
    zpath = tmp_path / "dup.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("NCT99110001.json", b"{broken")  # a broken copy first: the good one after it is the study
        zf.writestr("ctg-studies/NCT99110001.json", json.dumps(first))
        zf.writestr("NCT99110002.json", json.dumps(other))
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("ctg-studies/NCT99110001.json", json.dumps(second))
        zf.writestr("more/NCT99110001.json", json.dumps(second))
    report = SkipReport("t")
    n = ctgov.read_bulk_zip(zpath, tmp_path / "out.jsonl.gz", report=report, apply_filter=False, progress=False)
    assert n == 2 and [(ctgov.nct_id(s), s.get("copy")) for s in read_jsonl(tmp_path / "out.jsonl.gz")] == [("NCT99110001", 1), ("NCT99110002", None)]
    assert report.reasons() == {"duplicate_study": 2, "invalid_json": 1} and report.counts["members_read"] == 2
    dups = [s["detail"] for s in report.skipped if s["reason"] == "duplicate_study"]
    assert dups == [f"{zpath}: member 'ctg-studies/NCT99110001.json': NCT99110001 came out of an earlier member already",
                    f"{zpath}: member 'more/NCT99110001.json': NCT99110001 came out of an earlier member already"]
