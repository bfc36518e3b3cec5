"""The shared reader and appender of the append-only JSONL stores (medfc.common.appendlog): a torn line
is skipped and counted wherever it was cut, and the next batch never glues onto it."""

from __future__ import annotations

import json
import logging

import pytest

from medfc.common.appendlog import JsonlAppender, append_jsonl, read_appended

RECORD = {"source": "Übelkeit", "target": "nausea"}


@pytest.mark.parametrize("cut", [1, 5, len("{\"source\": \"") + 1])  # the last: after the first byte of "Ü"
def test_every_cut_of_the_last_line_is_one_counted_skip(tmp_path, cut, caplog):
    path = tmp_path / "store.jsonl"
    line = json.dumps(RECORD, ensure_ascii=False).encode("utf-8")
    path.write_bytes(line + b"\n" + line[:cut])
    with caplog.at_level(logging.WARNING, logger="medfc.common.appendlog"):
        records, skipped = read_appended(path)
    assert records == [RECORD] and skipped == [2]
    assert f"{path}, line 2: not a whole record" in caplog.text


def test_blank_lines_missing_files_and_rejected_records(tmp_path):
    path = tmp_path / "store.jsonl"
    path.write_text('{"a": 1}\n\n[1, 2]\n{"b": 2}\n"text"\n', encoding="utf-8")
    assert read_appended(path, valid=lambda r: "a" in r) == ([{"a": 1}], [3, 4, 5])
    assert read_appended(tmp_path / "nowhere.jsonl") == ([], [])


def test_the_appender_ends_a_torn_line_before_its_batch(tmp_path):
    path = tmp_path / "store.jsonl"
    line = json.dumps(RECORD, ensure_ascii=False).encode("utf-8")
    path.write_bytes(line + b"\n" + line[:13])  # cut inside "Ü"
    with JsonlAppender(path) as out:
        assert out.append([{"n": 1}, {"n": 2}]) == 2
        assert out.append([{"n": 3}]) == 1
    assert append_jsonl(path, []) == 0
    records, skipped = read_appended(path)
    assert records == [RECORD, {"n": 1}, {"n": 2}, {"n": 3}] and skipped == [2]
    assert path.read_bytes().endswith(b'{"n": 3}\n')


def test_a_new_store_gets_the_mode_the_umask_gives(tmp_path):
    import os

    old = os.umask(0o027)
    try:
        append_jsonl(tmp_path / "sub" / "store.jsonl", [{"a": 1}])
    finally:
        os.umask(old)
    assert (tmp_path / "sub" / "store.jsonl").stat().st_mode & 0o777 == 0o640


def test_a_filesystem_without_flock_still_gets_the_run_record(tmp_path, monkeypatch, caplog):
    """Some cluster mounts have no flock: the record is written unlocked, said once per path (as io.file_lock)."""
    import errno
    import fcntl

    from medfc.common import provenance

    def no_lock(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_lock)
    with caplog.at_level(logging.WARNING):
        path = provenance.append_run_record(tmp_path, {"run": "r1"})
        provenance.append_run_record(tmp_path, {"run": "r2"})
    assert [r["run"] for r in read_appended(path)[0]] == ["r1", "r2"]
    assert sum("no file lock on this filesystem" in r.getMessage() for r in caplog.records) == 1
