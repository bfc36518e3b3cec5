"""Shared by the download tests (tests/unit/common/test_downloads.py, tests/unit/clinifact/test_bulk_download.py):
the fetch_studies step against a bulk-zip server, and one download attempt per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from medfc.clinifact import steps
from tests.helpers.config import call_step, section


def fetch_bulk_studies(tmp_path: Path, url: str) -> int:
    """The fetch_studies step reading the bulk zip at ``<url>/ctgov.zip`` (downloaded into ``tmp_path/cache``)."""
    opts = {k: v for k, v in section("clinifact.studies", progress=False, apply_filter=False, bulk_url=f"{url}/ctgov.zip").items()
            if k != "bulk_zip"}
    opts |= {"cache_dir": str(tmp_path / "cache"), "user_agent": "medfc-test"}
    out = {"studies": str(tmp_path / "studies.jsonl.gz"), "report": str(tmp_path / "report.json"), "excluded": str(tmp_path / "ex.jsonl.gz")}
    return call_step(steps.fetch_studies, {}, out, opts)


@pytest.fixture
def one_attempt_per_run(monkeypatch):
    """For tests that follow a cut download across runs: one attempt per run (download_once's own retries of an
    incomplete download: test_an_incomplete_download_is_fetched_again_within_the_run)."""
    monkeypatch.setattr("medfc.common.sources.INCOMPLETE_RETRIES", 0)
