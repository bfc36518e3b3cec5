"""The run's index (medfc.common.run_index) links the error browser when the run wrote it, describes it in its
table of folders, and its HTML makes the link a link."""

from __future__ import annotations

from medfc.common.run_index import configfile_args, index_markdown, markdown_to_html, run_files
from medfc.rocrate.records import config_paths


def test_the_index_links_the_error_browser_only_when_the_run_wrote_it(tmp_path):
    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    (results / "tables" / "t.md").write_text("| a |\n| --- |\n| 1 |\n")
    without = index_markdown(results, results / "provenance", run_files(results), None)
    assert "errors.html" not in without
    (results / "errors.html").write_text("<!DOCTYPE html>")
    text = index_markdown(results, results / "provenance", run_files(results), None)
    assert "## Error browser\n\n[`errors.html`](errors.html): every test claim" in text
    assert "| `errors.html` | the error browser: " in text and "not described" not in text
    assert text.index("## Error browser") < text.index("## Headline tables")
    page = markdown_to_html(text, "Results")
    assert '<p><a href="errors.html"><code>errors.html</code></a>: every test claim' in page


def test_the_config_files_of_a_command_as_snakemake_reads_them(tmp_path):
    """``--configfile=a`` takes ``a`` alone (a target may follow); a bare ``--configfile`` takes every argument up to
    the next option. The index and the RO-Crate read them alike."""
    command = ["snakemake", "--configfile=a.yaml", "all", "--configfiles", "b.yaml", "c.yaml", "-n", "tables"]
    assert configfile_args(command) == ["a.yaml", "b.yaml", "c.yaml"]
    record = {"workdir": str(tmp_path), "command": command}
    assert config_paths(record, None) == [tmp_path / p for p in ("config/config.yaml", "a.yaml", "b.yaml", "c.yaml")]
