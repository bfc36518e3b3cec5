"""The registry of CliniFact's study sources (``clinifact.studies.source``) and the fetch step's
:class:`StudiesOptions`. A light module: a source's ``fetch`` imports :mod:`medfc.clinifact.ctgov` when it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from medfc.common.options import OneOf, Options
from medfc.common.registry import lookup

if TYPE_CHECKING:
    from medfc.common.report import SkipReport
    from medfc.common.stepfiles import StepFiles


@dataclass(frozen=True)
class StudiesSource:
    """One source of studies: ``fetch(inputs, outputs, options, report)`` writes ``studies`` (and ``excluded``) and
    returns how many studies it wrote. ``reads_zip``: it reads the bulk zip (input ``zip``)."""

    name: str
    fetch: Callable[[StepFiles, StepFiles, StudiesOptions, SkipReport], int]
    reads_zip: bool = False


def _bulk_zip(inputs: StepFiles, outputs: StepFiles, options: StudiesOptions, report: SkipReport) -> int:
    """The bulk zip (input ``zip``, else ``bulk_url`` downloaded once), filtered while it is read."""
    from medfc.clinifact import ctgov
    from medfc.common.sources import download_once

    zip_path = inputs.get("zip")
    if not zip_path:
        from medfc.common.http import HttpClient  # requests loaded only for a download

        http = HttpClient(rate=options.requests_per_minute / 60.0, user_agent=options.user_agent)
        zip_path, _ = download_once(options.bulk_url, Path(options.cache_dir) / "ctgov_bulk.zip", http, progress=options.progress)  # kept only when whole
    return ctgov.read_bulk_zip(zip_path, outputs["studies"], report=report, apply_filter=options.apply_filter, limit=options.limit,
                               progress=options.progress, excluded_path=outputs.get("excluded"), max_member_bytes=options.max_member_bytes)


def _api(inputs: StepFiles, outputs: StepFiles, options: StudiesOptions, report: SkipReport) -> int:
    """The v2 search API, page by page (cached, resumable); its filter runs on the server: ``excluded`` is empty."""
    from medfc.clinifact import ctgov
    from medfc.common.http import HttpClient
    from medfc.common.io import write_jsonl

    cache = Path(options.cache_dir)
    http = HttpClient(cache / "ctgov_pages", rate=options.requests_per_minute / 60.0, user_agent=options.user_agent)
    params = ctgov.search_params(page_size=options.page_size, status_filter=options.status_filter,
                                 advanced_filter=options.advanced_filter, fields=options.fields)
    state = outputs.get("state") or cache / "ctgov_search_state.json"
    n = ctgov.fetch_search(outputs["studies"], http, params, state, url=options.api_url, max_pages=options.max_pages, report=report,
                           progress=options.progress)
    if outputs.get("excluded"):
        write_jsonl(outputs["excluded"], [])  # the search's own filter leaves studies out unseen: none to list
    return n


STUDIES_SOURCES: dict[str, StudiesSource] = {
    s.name: s for s in (
        StudiesSource("bulk_zip", _bulk_zip, reads_zip=True),
        StudiesSource("api", _api),
    )
}


def studies_source(name: str) -> StudiesSource:
    """The source called ``name``; an unknown one is a ValueError naming the known ones."""
    return lookup(STUDIES_SOURCES, name, "studies source")


# ``clinifact.studies.source``: checked against the registry when the options are built, so a source registered
# later (a test's) is one; the Literal is the type checkers' (the names at import)
SourceName = Annotated[Literal[tuple(STUDIES_SOURCES)],  # type: ignore[valid-type]
                       OneOf(lambda: tuple(STUDIES_SOURCES))]


@dataclass(frozen=True)
class StudiesOptions(Options):
    """``clinifact.studies`` (less ``bulk_zip``, an input) + ``cache_dir`` and ``user_agent``."""

    source: SourceName  # a registered source (STUDIES_SOURCES)
    bulk_url: str
    apply_filter: bool
    limit: int | None
    max_member_bytes: int
    api_url: str
    page_size: int
    max_pages: int | None
    requests_per_minute: float
    status_filter: str
    advanced_filter: str
    fields: str | None
    progress: bool
    cache_dir: str
    user_agent: str
