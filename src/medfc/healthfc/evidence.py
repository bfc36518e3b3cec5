"""Open-domain evidence for HealthFC (the paper's Table 5 "Google snippets", §7.3): each claim searched in a registered
source (each answer cached with its date), or a prepared ``file``'s rows; one :class:`EvidenceRow` per claim × rank."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from typing import TypedDict

from medfc.common.http import HttpError
from medfc.common.io import read_jsonl
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.jsoncache import UnitCache, cache_key
from medfc.common.progress import progress_bar
from medfc.common.report import SkipReport
from medfc.retrieval.search import Hit, SearchBackend, SearchError


class EvidenceRow(TypedDict):
    """One hit of one claim in the evidence artifact."""

    id: str
    query: str
    source: str
    searched: str  # the date it was searched (YYYY-MM-DD), "" when a file does not say
    rank: int  # 1 first
    title: str
    url: str
    snippet: str
    origin: str  # search | file (or what the file says, e.g. the demo's made-up content)


class EvidenceSearchFailed(RuntimeError):
    """A search of the evidence step that failed: the job stops (what was answered before stays cached)."""


class TooLittleEvidence(RuntimeError):
    """More claims without evidence than ``healthfc.retrieval.max_share_without_evidence`` allows."""


def normalise_query(text: str) -> str:
    return " ".join(str(text).split())


def claim_queries(records: Iterable[Mapping[str, JSONValue]], lang: str, report: SkipReport) -> list[tuple[str, str]]:
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


class DatedSearchCache:
    """Each answer of a backend on disk with the date it was answered, per (backend, index, query, k)."""

    def __init__(self, backend: SearchBackend, directory: str | os.PathLike, today: Callable[[], str] | None = None) -> None:
        self.backend, self.cache, self.today = backend, UnitCache(directory), today or (lambda: utc_today())

    def search(self, query: str, k: int) -> tuple[list[Hit], str, bool]:
        """(hits, the date searched, whether it came from the cache)."""
        key = cache_key("healthfc-evidence", self.backend.name, self.backend.index_id(), normalise_query(query), int(k))
        got = self.cache.get(key, parse=lambda v: ([Hit(**h) for h in v["hits"]], str(v["searched"])))
        if got is not None:
            return got[0], got[1], True
        hits = self.backend.search(query, int(k))
        searched = self.today()
        self.cache.put(key, {"searched": searched, "hits": [asdict(h) for h in hits]})
        return hits, searched, False


def retrieve(queries: Sequence[tuple[str, str]], searcher: DatedSearchCache, source: str, top_k: int, report: SkipReport,
             progress: bool = True) -> list[EvidenceRow]:
    """Search every claim's query (at most ``top_k`` hits); a claim without results is reported."""
    rows: list[EvidenceRow] = []
    for n, (cid, query) in enumerate(progress_bar(queries, total=len(queries), desc=f"search {source}", enabled=progress)):
        try:
            hits, searched, cached = searcher.search(query, top_k)
        except (HttpError, SearchError) as exc:
            raise EvidenceSearchFailed(
                f"healthfc_retrieve ({source}): the search for claim {cid} ({query!r}) failed: {exc}. The answers to the {n} "
                f"claims before it are cached; a rerun asks only the {len(queries) - n} claims from this one on that have none") from exc
        report.count("answers_cached" if cached else "searches_sent")
        hits = list(hits)[: int(top_k)]
        if not hits:
            report.skip(cid, "no_results", query)
            continue
        report.count("claims_with_results")
        report.count("rows", len(hits))
        rows.extend({"id": cid, "query": query, "source": source, "searched": searched, "rank": rank, "title": h.title,
                     "url": h.url, "snippet": h.text, "origin": "search"} for rank, h in enumerate(hits, 1))
    if searcher.cache.stats["damaged"]:  # answers whose cache file could not be read back: asked again
        report.count("cache_files_damaged", searcher.cache.stats["damaged"])
    return rows


def from_file(queries: Sequence[tuple[str, str]], path: str | os.PathLike, source: str, top_k: int, report: SkipReport) -> list[EvidenceRow]:
    """The rows of a prepared evidence file for the claims, matched by query, in rank order, at most ``top_k``."""
    by_query: dict[str, list[JSONObject]] = {}
    for n, rec in enumerate(read_jsonl(path), 1):
        if str(rec.get("source") or source) != source:
            report.exclude("other_source")
            continue
        if not rec.get("query") or not isinstance(rec.get("rank"), int) or not str(rec.get("snippet") or "").strip():
            report.skip(f"{path}:{n}", "bad_file_row", "needs query, an integer rank and a snippet")
            continue
        by_query.setdefault(normalise_query(rec["query"]), []).append(rec)
    rows: list[EvidenceRow] = []
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


def check_coverage(report: SkipReport, source: str, max_share: float) -> None:
    """Count the claims without evidence; :class:`TooLittleEvidence` when above ``max_share``."""
    reasons = ("no_results", "not_in_file") + tuple(r for r in report.reasons() if r.startswith("missing_claim_"))
    missing = [s["id"] for s in report.skipped if s["reason"] in reasons]
    total = report.counts["claims"] + sum(1 for s in report.skipped if s["reason"].startswith("missing_claim_"))
    report.count("claims_without_evidence", len(missing))
    if total and len(missing) > max_share * total:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise TooLittleEvidence(
            f"healthfc_retrieve ({source}): {len(missing)} of {total} claims ({len(missing) / total:.1%}) have no evidence ({shown}), "
            f"more than healthfc.retrieval.max_share_without_evidence = {max_share:g} allows; the rule's log lists each with its reason")
