"""ClinicalTrials.gov API v2: paginated, cached, resumable search and a streaming bulk-zip reader."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medfc.clinifact import zipstream
from medfc.common.io import jsonl_writer, write_json, write_jsonl
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.progress import progress_bar
from medfc.common.report import SkipReport

if TYPE_CHECKING:  # the HTTP client (requests) is loaded by the search API's path only, not by the bulk zip's
    from medfc.common.http import HttpClient

log = logging.getLogger(__name__)

KEPT_STATUSES = frozenset({"COMPLETED", "TERMINATED"})
NCT_MEMBER = re.compile(r"(?:^|/)(NCT\d{8})\.json$")


def search_params(*, page_size: int, status_filter: str, advanced_filter: str, fields: str | None) -> dict[str, str]:
    """The search's query parameters (``clinifact.studies``; the schema holds ``page_size`` to the API's limit)."""
    return {"format": "json", "filter.overallStatus": status_filter, "filter.advanced": advanced_filter,
            "pageSize": str(int(page_size)), "countTotal": "true", **({"fields": fields} if fields else {})}


class RepeatedPageToken(ValueError):
    """A search page whose ``nextPageToken`` opens this or an earlier page: the search would never end."""

    def __init__(self, token: str, page: int, first: int) -> None:
        super().__init__(f"ClinicalTrials.gov: page {page} of the search gave the page token {token!r} of page {first} again, so the "
                         f"search would never end; stopped (the pages before it are cached and the state file keeps them: a rerun "
                         f"asks this page again)")


def _page_check(first_page_of: Mapping[str, int], i: int) -> Callable[[JSONValue], None]:
    """The answer check of page ``i`` (0-based): a search page whose next token opens no page up to this one."""

    def check(page: JSONValue) -> None:
        from medfc.common.http import AnswerError, answer_says

        if not isinstance(page, dict) or not isinstance(page.get("studies"), list):
            # every v2 search page has "studies" (an empty list when nothing matched); an object without it is an
            # error sent with HTTP 200 (a proxy's or the API's), never the search's last page
            said = answer_says(page, "message", "error")
            raise AnswerError(f"not a search page (an object with a list of studies){f': {said}' if said else ''}", retryable=True)
        nxt = page.get("nextPageToken")
        if nxt and first_page_of.get(nxt, i + 1) <= i:
            raise RepeatedPageToken(nxt, i + 1, first_page_of[nxt] + 1)

    return check


def iter_search_pages(client: HttpClient, params: Mapping[str, str], state_path: str | os.PathLike, url: str, max_pages: int | None = None,
                      progress: bool = True) -> Iterator[JSONObject]:
    """Yield every search page, resuming from ``state_path`` (the page tokens seen): a rerun replays the known
    tokens from the page cache, then continues. Raises :class:`RepeatedPageToken` on a token that loops."""
    state_path = Path(state_path)
    pid = hashlib.sha256(json.dumps([url, sorted(params.items())], sort_keys=True).encode()).hexdigest()[:16]
    # the state file: the page tokens seen (tokens[0], None, the first page's), then next_token once a page was asked for
    state: dict[str, Any] = {"params_id": pid, "params": dict(params), "tokens": [None], "complete": False, "total": None}
    if state_path.exists():
        old = json.loads(state_path.read_text(encoding="utf-8"))
        if old.get("params_id") == pid:
            state = old
        else:
            log.warning("search parameters changed; starting a new crawl (old state in %s ignored)", state_path)

    def pages() -> Iterator[JSONObject]:
        first_page_of: dict[str, int] = {}  # token -> the first page (0-based) it opens
        i = 0
        while i < len(state["tokens"]) and (max_pages is None or i < max_pages):
            token = state["tokens"][i]
            page_params = dict(params)
            if token is not None:
                page_params["pageToken"] = token
                first_page_of.setdefault(token, i)
            page = client.get_json(url, page_params, check=_page_check(first_page_of, i))
            if i == 0 and page.get("totalCount") is not None:
                state["total"] = page["totalCount"]
            nxt = page.get("nextPageToken")
            if i + 1 < len(state["tokens"]) and state["tokens"][i + 1] != nxt:
                log.warning("page %d now gives the next token %r, the state file had %r: the state is replaced from there on",
                            i + 1, nxt, state["tokens"][i + 1])
                del state["tokens"][i + 1 :]
            if i + 1 == len(state["tokens"]):
                if nxt:
                    state["tokens"].append(nxt)
                state["next_token"] = nxt
                state["complete"] = not nxt
                write_json(state_path, state)
            yield page
            i += 1

    total_pages = -(-int(state["total"]) // int(params["pageSize"])) if state.get("total") else None
    yield from progress_bar(pages(), total=total_pages, desc="ctgov pages", enabled=progress)


def fetch_search(out_path: str | os.PathLike, client: HttpClient, params: Mapping[str, str], state_path: str | os.PathLike, url: str,
                 max_pages: int | None = None, report: SkipReport | None = None, progress: bool = True) -> int:
    """Run the search to the end (or ``max_pages``) and write its studies as gzipped JSONL."""
    seen: set[str] = set()
    report = report or SkipReport("fetch_studies")

    def studies() -> Iterator[JSONObject]:
        for page in iter_search_pages(client, params, state_path, url=url, max_pages=max_pages, progress=progress):
            report.count("pages")
            for study in page.get("studies", []):
                if not report.keep_first(nct_id(study), seen, duplicate="duplicate_study", missing="no_nct_id"):
                    continue
                report.count("studies")
                yield study

    n = write_jsonl(out_path, studies())
    report.count("network_requests", client.stats["requests"])
    report.count("cache_hits", client.stats["cache_hits"])
    return n


def nct_id(study: Mapping[str, JSONValue]) -> str | None:
    return ((study.get("protocolSection") or {}).get("identificationModule") or {}).get("nctId")


class _NctSeen:
    """The NCT numbers seen so far, one bit each, in 64 KiB blocks made as numbers arrive: the real registry's
    take under 1 MB (a set of the bulk zip's 500,000 would take about 30 MB)."""

    BLOCK_BITS = 19

    def __init__(self) -> None:
        self._blocks: dict[int, bytearray] = {}

    def __contains__(self, n: int) -> bool:
        block = self._blocks.get(n >> self.BLOCK_BITS)
        return block is not None and bool(block[(n & ((1 << self.BLOCK_BITS) - 1)) >> 3] & (1 << (n & 7)))

    def add(self, n: int) -> None:
        block = self._blocks.setdefault(n >> self.BLOCK_BITS, bytearray(1 << (self.BLOCK_BITS - 3)))
        block[(n & ((1 << self.BLOCK_BITS) - 1)) >> 3] |= 1 << (n & 7)


_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def iter_bulk_zip(path: str | os.PathLike, report: SkipReport | None = None, limit: int | None = None,
                  max_member_bytes: int | None = None) -> Iterator[JSONObject]:
    """Stream study objects out of the bulk ``json.zip``, one ``NCT########.json`` member at a time
    (:mod:`~medfc.clinifact.zipstream`: memory stays flat; a truncated zip raises ``TruncatedZip`` before any
    member). Bad members are skipped with their reason; the first good copy of a study counts."""
    n = 0
    seen = _NctSeen()
    skip = report.skip if report is not None else lambda *args: None

    def wanted(name: str) -> bool:
        m = NCT_MEMBER.search(name)
        return m is not None and int(m.group(1)[3:]) not in seen

    for member in zipstream.iter_members(path, select=wanted, max_size=max_member_bytes):
        m = NCT_MEMBER.search(member.name)
        if not m:
            skip(member.name, "not_a_study_member")
            continue
        where = f"{path}: member {member.name!r}"
        number = int(m.group(1)[3:])
        if number in seen:
            skip(m.group(1), "duplicate_study", f"{where}: {m.group(1)} came out of an earlier member already")
            continue
        if member.error:
            skip(m.group(1), member.error, f"{where} {member.detail}")
            continue
        raw = member.data
        del member
        try:
            study = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            skip(m.group(1), "invalid_json", f"{where}: {str(exc)[:200]}")
            continue
        del raw
        if not isinstance(study, dict):
            skip(m.group(1), "not_a_json_object", f"{where} holds a JSON {_JSON_TYPES.get(type(study), type(study).__name__)}, not an object")
            continue
        seen.add(number)
        yield study
        n += 1
        if limit is not None and n >= limit:
            return


def passes_clinifact_filter(study: Mapping[str, JSONValue]) -> str | None:
    """None when the study is a completed/terminated interventional study with results, else a reason."""
    ps = study.get("protocolSection") or {}
    status = (ps.get("statusModule") or {}).get("overallStatus")
    if status not in KEPT_STATUSES:
        return "status_not_completed_or_terminated"
    if (ps.get("designModule") or {}).get("studyType") != "INTERVENTIONAL":
        return "not_interventional"
    if not study.get("hasResults") and not study.get("resultsSection"):
        return "no_results"
    return None


def read_bulk_zip(zip_path: str | os.PathLike, out_path: str | os.PathLike, report: SkipReport | None = None, apply_filter: bool = True,
                  limit: int | None = None, progress: bool = True, excluded_path: str | os.PathLike | None = None,
                  max_member_bytes: int | None = None) -> int:
    """Bulk zip → gzipped JSONL of the studies that pass the CliniFact filter; ``excluded_path`` receives
    ``{"nctId", "reason"}`` of every study the filter left out."""
    report = report or SkipReport("fetch_studies")
    with contextlib.ExitStack() as stack:
        # the exclusions land (atomically) only when the studies file is complete too
        sink = stack.enter_context(jsonl_writer(excluded_path)) if excluded_path is not None else None

        def studies() -> Iterator[JSONObject]:
            members = iter_bulk_zip(zip_path, report=report, limit=limit, max_member_bytes=max_member_bytes)
            for study in progress_bar(members, desc="bulk zip", enabled=progress):
                report.count("members_read")
                if apply_filter:
                    reason = passes_clinifact_filter(study)
                    if reason:
                        report.exclude(reason)  # the CliniFact selection, not bad input: counted only
                        if sink is not None:
                            sink({"nctId": nct_id(study), "reason": reason})
                        continue
                report.count("studies")
                yield study

        return write_jsonl(out_path, studies())
