"""Atomic JSONL writing: a file either holds a whole run's records or what it held before."""

from __future__ import annotations

import gzip

import pytest

from medfc.common.io import jsonl_writer, read_jsonl, write_jsonl


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz"])
def test_jsonl_writer_replaces_the_file_only_when_the_block_ends_cleanly(tmp_path, name):
    path = tmp_path / name
    assert write_jsonl(path, [{"b": 2, "a": "ä"}]) == 1
    with pytest.raises(RuntimeError), jsonl_writer(path) as write:
        write({"a": 3})
        raise RuntimeError("the source broke off")
    assert list(read_jsonl(path)) == [{"a": "ä", "b": 2}]  # what it held before
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left
    with jsonl_writer(path) as write:
        write({"a": 4})
    assert list(read_jsonl(path)) == [{"a": 4}]


def test_gzip_output_is_byte_identical_for_identical_records(tmp_path):
    write_jsonl(tmp_path / "a.jsonl.gz", [{"x": 1}])
    write_jsonl(tmp_path / "b.jsonl.gz", [{"x": 1}])
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes()) == b'{"x": 1}\n'


def test_a_jobs_orphaned_temporary_files_are_removed_and_nothing_else(tmp_path):
    """What a killed atomic write leaves beside a job's output (a file, or atomic_directory's folder) is removed
    when the job runs again (medfc.cli runs this before the step); other outputs' temporaries and the outputs stay."""
    from medfc.cli import output_paths
    from medfc.common.io import remove_orphaned_temps

    out = tmp_path / "results"
    out.mkdir()
    (out / "a.jsonl.gz").write_bytes(b"old")
    (out / ".a.jsonl.gz.99b7a42cbddc.tmp").write_bytes(b"half")
    (out / ".b.0123456789ab.tmp").mkdir()
    (out / ".b.0123456789ab.tmp" / "x").write_text("half")
    (out / ".c.json.0123456789ab.tmp").write_text("another job's")
    (out / ".a[1].json.0123456789ab.tmp").write_text("not a glob pattern")
    paths = output_paths({"pages": str(out / "a.jsonl.gz"), "parts": [str(out / "b")], "brackets": str(out / "a[1].json")})
    removed = remove_orphaned_temps(paths)
    assert sorted(p.name for p in removed) == [".a.jsonl.gz.99b7a42cbddc.tmp", ".a[1].json.0123456789ab.tmp", ".b.0123456789ab.tmp"]
    assert sorted(p.name for p in out.iterdir()) == [".c.json.0123456789ab.tmp", "a.jsonl.gz"]


def test_a_table_written_as_html_shows_its_caption_and_every_row_escaped(tmp_path):
    import pandas as pd

    from medfc.common.io import write_table

    df = pd.DataFrame({"model": ["tfidf", "<b>x</b>"], "F1": [45.6, None]})
    written = write_table(df, tmp_path / "t3", caption="Table 3 & friends", formats=("csv", "html"))
    assert [p.name for p in written] == ["t3.csv", "t3.html"]
    page = (tmp_path / "t3.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<p>Table 3 &amp; friends</p>" in page
    assert page.count("<tr") == 3 and "&lt;b&gt;x&lt;/b&gt;" in page and "45.6" in page
