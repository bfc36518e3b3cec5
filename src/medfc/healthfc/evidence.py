"""Open-domain evidence for HealthFC: each claim searched in a source (Vladika et al., 2024, Table 5's
"Google snippets" and the open-domain comparison of §7.3), the top-k results kept as an artifact.

Sources (:data:`EVIDENCE_SOURCES`): ``web`` (a Serper-compatible search API), ``pubmed`` (E-utilities:
esearch by relevance, the abstracts by efetch) and ``wikipedia`` (the MediaWiki search API and the pages'
plain-text introductions); the clients are :mod:`medfc.common.search`'s, shared with MedSNIP.

The artifact (``results/healthfc/evidence/<source>.jsonl``) has one row per claim × rank:
``id`` (the claim), ``query``, ``source``, ``searched`` (the UTC date the search was answered), ``rank``
(1 = first), ``title``, ``url``, ``snippet`` and ``origin`` (``search``, or what a prepared file says of its
rows, e.g. that they are the demo's made-up content). Each answer is cached on disk per (source, index,
query, k) with its date as soon as it arrives, so a rerun, or a run restarted after a kill, sends nothing
already answered. ``file`` replaces searching with a prepared file of rows in this format, matched to the
claims by query.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from medfc.common.http import HttpClient, HttpError, progress_bar
from medfc.common.io import read_jsonl
from medfc.common.jsoncache import UnitCache, cache_key
from medfc.common.options import Options
from medfc.common.report import SkipReport
from medfc.common.search import Hit, PubMedSearch, SearchBackend, WebSearch, WikipediaSearch
from medfc.healthfc.evidence_file import evidence_by_claim  # noqa: F401 (the artifact's reader, light for the experiments)

log = logging.getLogger(__name__)

EVIDENCE_SOURCES = ("web", "pubmed", "wikipedia")
ROW_FIELDS = ("id", "query", "source", "searched", "rank", "title", "url", "snippet", "origin")


@dataclass(frozen=True)
class WebSourceOptions(Options):
    """``healthfc.retrieval.web``: a Serper-compatible endpoint; its key is read from ``api_key_env``."""

    url: str
    api_key_env: str
    requests_per_second: float
    file: str


@dataclass(frozen=True)
class PubMedSourceOptions(Options):
    """``healthfc.retrieval.pubmed``: E-utilities (contact e-mail, optional API key from ``api_key_env``)."""

    email: str
    api_key_env: str
    requests_per_second: float
    records_dir: str  # the per-PMID efetch cache (shared with CliniFact and MedSNIP)
    file: str


@dataclass(frozen=True)
class WikipediaSourceOptions(Options):
    """``healthfc.retrieval.wikipedia``: a MediaWiki ``api.php`` and the address page titles are appended to."""

    url: str
    page_url: str
    requests_per_second: float
    file: str


SOURCE_OPTIONS: dict[str, type[Options]] = {"web": WebSourceOptions, "pubmed": PubMedSourceOptions, "wikipedia": WikipediaSourceOptions}


def normalise_query(text: str) -> str:
    return " ".join(str(text).split())


def claim_queries(records: Iterable[Mapping[str, Any]], lang: str, report: SkipReport) -> list[tuple[str, str]]:
    """(claim id, query) of every dataset record, in dataset order: the claim text in ``lang``."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for rec in records:
        cid = str(rec.get("id") or "")
        if not report.keep_first(cid, seen):
            continue
        query = normalise_query(rec.get(f"claim_{lang}") or "")
        if not query:
            report.skip(cid, f"missing_claim_{lang}")
            continue
        out.append((cid, query))
    return out


def utc_today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


def hit_rows(cid: str, query: str, source: str, searched: str, hits: Sequence[Hit], origin: str = "search") -> list[dict[str, Any]]:
    """The artifact's rows of one claim: its hits in rank order (rank 1 first)."""
    return [{"id": cid, "query": query, "source": source, "searched": searched, "rank": n, "title": h.title, "url": h.url,
             "snippet": h.text, "origin": origin} for n, h in enumerate(hits, 1)]


class DatedSearchCache:
    """Each answer of a backend on disk with the date it was answered, per (backend, index, query, k)."""

    def __init__(self, backend: SearchBackend, directory: str | os.PathLike, today: Callable[[], str] | None = None) -> None:
        self.backend = backend
        self.cache = UnitCache(directory)
        self.today = today or (lambda: utc_today())
        self.searches = 0

    def search(self, query: str, k: int) -> tuple[list[Hit], str, bool]:
        """(hits, the date searched, whether it came from the cache)."""
        key = cache_key("healthfc-evidence", self.backend.name, self.backend.index_id(), normalise_query(query), int(k))
        got = self.cache.get(key)
        if got is not None:
            return [Hit(**h) for h in got["hits"]], str(got["searched"]), True
        self.searches += 1
        hits = self.backend.search(query, int(k))
        searched = self.today()
        self.cache.put(key, {"searched": searched, "hits": [asdict(h) for h in hits]})
        return hits, searched, False


def retrieve(queries: Sequence[tuple[str, str]], searcher: DatedSearchCache, source: str, top_k: int, report: SkipReport,
             progress: bool = True) -> list[dict[str, Any]]:
    """Search every claim's query (at most ``top_k`` hits); a failed search is skipped with its error (not
    cached: a rerun asks again), a claim without results is reported."""
    rows: list[dict[str, Any]] = []
    for cid, query in progress_bar(queries, total=len(queries), desc=f"search {source}", enabled=progress):
        try:
            hits, searched, cached = searcher.search(query, top_k)
        except HttpError as exc:
            report.skip(cid, "search_error", str(exc))
            continue
        report.count("answers_cached" if cached else "searches_sent")
        hits = list(hits)[: int(top_k)]
        if not hits:
            report.skip(cid, "no_results", query)
            continue
        report.count("claims_with_results")
        report.count("rows", len(hits))
        rows.extend(hit_rows(cid, query, source, searched, hits))
    return rows


def from_file(queries: Sequence[tuple[str, str]], path: str | os.PathLike, source: str, top_k: int, report: SkipReport) -> list[dict[str, Any]]:
    """The rows of a prepared evidence file for the claims, matched by query (whitespace collapsed), each
    claim's rows in rank order, at most ``top_k``; rows of another source are left out."""
    by_query: dict[str, list[dict[str, Any]]] = {}
    for n, rec in enumerate(read_jsonl(path), 1):
        if str(rec.get("source") or source) != source:
            report.exclude("other_source")
            continue
        if not rec.get("query") or not isinstance(rec.get("rank"), int) or not str(rec.get("snippet") or "").strip():
            report.skip(f"{path}:{n}", "bad_file_row", "needs query, an integer rank and a snippet")
            continue
        by_query.setdefault(normalise_query(rec["query"]), []).append(rec)
    rows: list[dict[str, Any]] = []
    for cid, query in queries:
        got = sorted(by_query.get(query, []), key=lambda r: r["rank"])[: int(top_k)]
        if not got:
            report.skip(cid, "not_in_file", query)
            continue
        report.count("claims_with_results")
        report.count("rows", len(got))
        rows.extend({"id": cid, "query": query, "source": source, "searched": str(r.get("searched") or ""), "rank": n,
                     "title": str(r.get("title") or ""), "url": str(r.get("url") or ""), "snippet": str(r["snippet"]),
                     "origin": str(r.get("origin") or "file")} for n, r in enumerate(got, 1))
    return rows


def make_backend(source: str, opts: Options, max_retries: int) -> SearchBackend:
    """The search client of ``source`` (keys from the environment; the web search's is required)."""
    if source == "web":
        assert isinstance(opts, WebSourceOptions)
        return WebSearch(opts.url, opts.api_key_env, HttpClient(rate=opts.requests_per_second, max_retries=max_retries), require_key=True)
    if source == "wikipedia":
        assert isinstance(opts, WikipediaSourceOptions)
        return WikipediaSearch(opts.url, HttpClient(rate=opts.requests_per_second, max_retries=max_retries), page_url=opts.page_url)
    if source == "pubmed":
        from medfc.common.pubmed import PubmedFetcher

        assert isinstance(opts, PubMedSourceOptions)
        key = (os.environ.get(opts.api_key_env) or None) if opts.api_key_env else None
        fetcher = PubmedFetcher(opts.records_dir, api_key=key, email=opts.email or None,
                                requests_per_second=opts.requests_per_second or None, max_retries=max_retries)
        return PubMedSearch(fetcher)
    raise ValueError(f"unknown evidence source {source!r}; known: {EVIDENCE_SOURCES}")
