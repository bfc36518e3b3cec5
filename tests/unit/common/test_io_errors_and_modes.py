"""Readers name the file and the line of what they cannot read, and written files get the user's umask."""

from __future__ import annotations

import gzip
import json
import os
import stat

import pytest

from medfc.common import io

ROWS = [{"id": i, "text": f"row {i} " + "x" * 40} for i in range(1, 9)]


def _torn(path, line: int = 6) -> None:
    lines = [json.dumps(r) for r in ROWS]
    lines[line - 1] = lines[line - 1][: len(lines[line - 1]) // 2]  # a writer killed mid-line
    data = ("\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:]) + "\n").encode()  # a blank line counts as a line
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.jsonl.gz"])
def test_a_torn_jsonl_line_is_an_error_naming_the_file_and_the_line(tmp_path, name):
    path = tmp_path / name
    _torn(path, line=5)  # the 5th record, on line 6 after the blank line
    read = []
    with pytest.raises(ValueError) as info:
        for rec in io.read_jsonl(path):
            read.append(rec["id"])
    assert read == [1, 2, 3, 4]
    exc = info.value
    assert str(exc).startswith(f"{path}, line 6: not valid JSON at column ") and "line 1 column" not in str(exc)
    assert isinstance(exc, io.InputFileError) and (exc.path, exc.line) == (str(path), 6)
    assert "column" in str(exc) and "JSONDecodeError" not in str(exc)


def test_a_cut_gzip_stream_and_bad_bytes_name_the_file(tmp_path):
    path = tmp_path / "cut.jsonl.gz"
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in ROWS * 50).encode())
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(io.InputFileError, match=r"cut\.jsonl\.gz, line \d+: broken gzip stream"):
        list(io.read_jsonl(path))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"a": 1}\n{"a": "\xe4"}\n')
    with pytest.raises(io.InputFileError, match=r"latin\.jsonl, line 2: not UTF-8"):
        list(io.read_jsonl(latin))


def test_read_json_names_the_file_and_the_line(tmp_path):
    path = tmp_path / "info.json"
    path.write_text('{\n  "a": 1,\n  "b": [1, 2\n}\n', encoding="utf-8")
    with pytest.raises(ValueError) as info:
        io.read_json(path)
    assert str(info.value).startswith(f"{path}, line 4: not valid JSON at column 1: ")
    assert (info.value.path, info.value.line) == (str(path), 4)


def test_input_file_error_without_a_line_and_pickled():
    import pickle

    exc = io.InputFileError("data/x.csv", None, "missing column 'label'")
    assert str(exc) == "data/x.csv: missing column 'label'" and isinstance(exc, ValueError)
    again = pickle.loads(pickle.dumps(io.InputFileError("p.xml", 3, "bad")))
    assert (again.path, again.line, again.message, str(again)) == ("p.xml", 3, "bad", "p.xml, line 3: bad")


@pytest.fixture
def set_umask():
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask,mode", [(0o002, 0o664), (0o022, 0o644), (0o077, 0o600)])
def test_written_files_get_the_mode_of_the_umask(tmp_path, set_umask, umask, mode):
    set_umask(umask)
    io.write_jsonl(tmp_path / "a.jsonl", ROWS)
    io.write_jsonl(tmp_path / "a.jsonl.gz", ROWS)
    with io.jsonl_writer(tmp_path / "sub" / "b.jsonl") as write:
        write({"a": 1})
    io.write_json(tmp_path / "c.json", {"a": 1})
    io.atomic_write(tmp_path / "d.bin", b"\x00")
    with io.atomic_output(tmp_path / "e.txt", text=True) as fh:
        fh.write("ä\n")
    written = ["a.jsonl", "a.jsonl.gz", "sub/b.jsonl", "c.json", "d.bin", "e.txt"]
    assert {n: oct(_mode(tmp_path / n)) for n in written} == {n: oct(mode) for n in written}
    assert (tmp_path / "e.txt").read_text(encoding="utf-8") == "ä\n" and io.read_json(tmp_path / "c.json") == {"a": 1}
    assert sorted(p.name for p in tmp_path.rglob(".*")) == []  # no temporary file left


def test_an_existing_file_replaced_atomically_takes_the_new_mode(tmp_path, set_umask):
    path = tmp_path / "a.jsonl"
    path.write_text("old\n")
    os.chmod(path, 0o600)
    set_umask(0o002)
    io.write_jsonl(path, ROWS[:1])
    assert _mode(path) == 0o664 and list(io.read_jsonl(path)) == ROWS[:1]
