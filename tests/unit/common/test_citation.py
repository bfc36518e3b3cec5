"""CITATION.cff: its version and release date are the CHANGELOG's latest release (the package's version too), its references name the papers
whose data and methods the workflow rebuilds, and the Citation File Format's own tool (cffconvert) validates it
and gives a BibTeX entry with the release's year. cffconvert lives in a venv of its own (``.tools/cffconvert``,
made by scripts/install.sh: it requires jsonschema<4, the workflow jsonschema 4)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.helpers.workflow import REPO

RELEASE = re.compile(r"^## \[(?P<version>\d+\.\d+\.\d+[^\]]*)\] - (?P<date>\d{4}-\d\d-\d\d)\s*$", re.M)


def latest_release() -> tuple[str, str]:
    """The CHANGELOG's newest release (the first ``## [x.y.z] - date`` heading below Unreleased)."""
    m = RELEASE.search((REPO / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert m, "CHANGELOG.md names no release (## [x.y.z] - YYYY-MM-DD)"
    return m.group("version"), m.group("date")


def cffconvert() -> str | None:
    tool = REPO / ".tools/cffconvert/bin/cffconvert"
    return str(tool) if tool.exists() else shutil.which("cffconvert")


def test_the_citation_carries_the_latest_releases_version_and_date():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    version, date = latest_release()
    assert (str(cff["version"]), str(cff["date-released"])) == (version, date)
    import tomllib

    import medfc

    assert tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"] == medfc.__version__ == version


def test_the_references_name_the_works_the_workflow_rebuilds():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    titles = [ref["title"] for ref in cff["references"]]
    assert titles == ["HealthFC: Verifying Health Claims with Evidence-Based Medical Fact-Checking", "HealthFC release (Datensatz.csv)",
                      "CliniFact", "CliniFact release (primary_outcome_publication_dataset)",
                      "MedSNIP: Building and Benchmarking Snippet-Level Granularity for Medical Fact Verification",
                      "AVeriTeC: A Dataset for Real-world Claim Verification with Evidence from the Web", "Opus-MT"]
    licences = {ref["title"]: ref.get("license") for ref in cff["references"] if ref["type"] == "data"}
    assert licences == {"HealthFC release (Datensatz.csv)": "CC-BY-NC-ND-4.0", "CliniFact release (primary_outcome_publication_dataset)": "MIT"}


def test_cffconvert_validates_the_citation_and_its_bibtex_has_the_release_year(tmp_path):
    tool = cffconvert()
    if tool is None:
        pytest.skip("cffconvert is not installed (bash scripts/install.sh puts it in .tools/cffconvert)")
    proc = subprocess.run([tool, "--validate", "-i", str(REPO / "CITATION.cff")], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Citation metadata are valid according to schema version 1.2.0." in proc.stdout
    bibtex = subprocess.run([tool, "-f", "bibtex", "-i", str(REPO / "CITATION.cff")], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path, check=True).stdout
    _, date = latest_release()
    assert f"year = {{{date[:4]}}}" in bibtex and f"month = {{{int(date[5:7])}}}" in bibtex
