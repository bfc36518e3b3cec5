"""Search clients shared by MedSNIP's retrieval-augmented verifier and HealthFC's open-domain evidence, each answering
``search(query, k) -> list[Hit]``; :class:`CachedSearch` keeps each answer on disk. A bad day never looks like "no
results": error answers (also with HTTP 200) are errors, never cached (docs/experiments.md, "Open-domain evidence")."""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from medfc.common.http import AnswerError, HttpClient, HttpError, answer_says
from medfc.common.jsoncache import UnitCache, cache_key
from medfc.common.jsontypes import JSONValue
from medfc.common.redact import redact

if TYPE_CHECKING:
    from medfc.retrieval.pubmed import PubmedFetcher


@dataclass(frozen=True)
class Hit:
    title: str
    text: str
    url: str
    id: str


class MissingApiKey(RuntimeError):
    """A search that needs an API key whose environment variable is unset (a configuration error)."""

    def __init__(self, variable: str, what: str):
        super().__init__(f"{what} needs an API key: set the environment variable {variable}")
        self.variable = variable


class SearchKeyRejected(RuntimeError):
    """A source refused the credentials or account (401, 403, an invalid key, no credits): the job stops at once."""

    def __init__(self, source: str, variable: str, error: HttpError):
        where = f"check the key in the environment variable {variable}" if variable else "it takes no key: check its URL and your access"
        super().__init__(f"{source} refused the request ({error}): {where}")
        self.source, self.variable, self.status = source, variable, error.status


class SearchError(RuntimeError):
    """A search whose answers do not fit together (esearch found PMIDs efetch does not return): never cached."""


_KEY_REFUSALS = ("api key invalid", "invalid api key", "not enough credits", "insufficient credits", "out of credits")


def _refused(error: HttpError, source: str, variable: str) -> HttpError | SearchKeyRejected:
    """:class:`SearchKeyRejected` for a refused key or account (HTTP 401 or 403, or the services' messages for it)."""
    refused = error.status in (401, 403) or any(m in str(error).lower() for m in _KEY_REFUSALS)
    return SearchKeyRejected(source, variable, error) if refused else error


SERPER_RESULT_FIELDS = ("organic", "answerBox", "knowledgeGraph", "searchParameters")


def check_serper(doc: JSONValue) -> None:
    """A Serper answer or :class:`AnswerError`: its error shape ``{"message", "statusCode"}`` (also with HTTP 200) by
    the status it names (401/403 refused, 429 and 5xx retried), and an answer without result fields (retried)."""
    if not isinstance(doc, dict):
        raise AnswerError(f"the answer is a JSON {type(doc).__name__}, not an object", retryable=False)
    status = doc.get("statusCode") if isinstance(doc.get("statusCode"), int) else None
    message = answer_says(doc, "message", "error")
    results = any(f in doc for f in SERPER_RESULT_FIELDS)
    if results and not (status and status >= 400):
        return
    what = f"error answer{f' {status}' if status else ''}: {message}" if message else "an answer without search results (no organic, answerBox, knowledgeGraph or searchParameters)"
    if status in (401, 403) or any(m in message.lower() for m in _KEY_REFUSALS):
        raise AnswerError(what, retryable=False, status=status or 403)
    raise AnswerError(what, retryable=status is None or status == 429 or status >= 500, status=status)


#: MediaWiki error codes of a passing condition (server load, rate limits, a read-only database, internal errors)
MEDIAWIKI_RETRY = frozenset({"maxlag", "ratelimited", "readonly", "internal_api_error", "databaseerror", "timeout"})


def check_mediawiki(doc: JSONValue) -> None:
    """A MediaWiki API answer or :class:`AnswerError`: ``{"error": …}`` or ``{"errors": [...]}`` (HTTP 200), the
    passing codes retried; an answer without ``query`` retried."""
    if not isinstance(doc, dict):
        raise AnswerError(f"the answer is a JSON {type(doc).__name__}, not an object", retryable=False)
    errors = doc.get("errors") if isinstance(doc.get("errors"), list) else []
    err = doc.get("error") if isinstance(doc.get("error"), dict) else (errors[0] if errors and isinstance(errors[0], dict) else None)
    if err is not None:
        code = str(err.get("code") or "unknown")
        info = answer_says(err, "info", "text", "*")
        retry = code in MEDIAWIKI_RETRY or code.startswith("internal_api_error")
        lag = err.get("lag")
        raise AnswerError(f"MediaWiki error {code}: {info}", retryable=retry,
                          retry_after=float(lag) if code == "maxlag" and isinstance(lag, (int, float)) and lag > 0 else None)
    if not isinstance(doc.get("query"), dict):
        raise AnswerError("a MediaWiki answer without 'query'", retryable=True)


class SearchBackend(Protocol):
    name: str

    def index_id(self) -> str:
        """Names the index searched (part of the search cache key)."""

    def search(self, query: str, k: int) -> list[Hit]:
        ...


class CachedSearch:
    """A backend whose answers are cached per (backend, index, query, k); ``searches`` counts the cache misses."""

    def __init__(self, backend: SearchBackend, cache: UnitCache) -> None:
        self.backend, self.name, self.cache, self.searches = backend, backend.name, cache, 0

    def search(self, query: str, k: int) -> list[Hit]:
        key = cache_key("search", self.name, self.backend.index_id(), " ".join(query.split()), int(k))
        if (hit := self.cache.get(key, parse=lambda stored: [Hit(**h) for h in stored])) is not None:
            return hit
        self.searches += 1
        hits = self.backend.search(query, k)
        self.cache.put(key, [asdict(h) for h in hits])
        return hits


class PubMedSearch:
    """esearch (relevance) then the PMIDs' records; ``api_key_env``: the key's variable, named when NCBI refuses it."""

    name = "pubmed"

    def __init__(self, fetcher: PubmedFetcher, api_key_env: str = "NCBI_API_KEY") -> None:
        self.fetcher, self.api_key_env = fetcher, api_key_env

    def index_id(self) -> str:
        return self.fetcher.esearch_url

    def search(self, query: str, k: int) -> list[Hit]:
        try:
            pmids = self.fetcher.esearch(query, k)
            recs = {r["pmid"]: r for r in self.fetcher.records(pmids, progress=False)}
        except HttpError as exc:
            raise _refused(exc, f"PubMed E-utilities ({redact(self.fetcher.esearch_url)})", self.api_key_env) from None
        if pmids and not recs:
            raise SearchError(f"PubMed: esearch found {len(pmids)} PMIDs for {query!r} ({', '.join(pmids[:5])}"
                              f"{' …' if len(pmids) > 5 else ''}) but efetch returned none of them")
        return [Hit(title=recs[p].get("title") or "", text=recs[p].get("abstract") or "",
                    url=f"https://pubmed.ncbi.nlm.nih.gov/{p}/", id=p) for p in pmids if p in recs]


class WebSearch:
    name = "web"

    def __init__(self, url: str, api_key_env: str, http: HttpClient, require_key: bool = False) -> None:
        self.url, self.api_key_env, self.http, self.require_key = url, api_key_env, http, require_key

    def index_id(self) -> str:
        return redact(self.url)  # a key in the endpoint's query is no part of what the index is

    def search(self, query: str, k: int) -> list[Hit]:
        what = f"the web search ({redact(self.url)})"
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if self.require_key and not key:
            raise MissingApiKey(self.api_key_env or "(no variable configured)", what)
        headers = {"Content-Type": "application/json", **({"X-API-KEY": key} if key else {})}
        try:
            data = self.http.fetch("POST", self.url, data=json.dumps({"q": query, "num": int(k)}, sort_keys=True).encode(),
                                   kind="json", headers=headers, check=check_serper)
        except HttpError as exc:
            raise _refused(exc, what, self.api_key_env) from None
        hits: list[Hit] = []
        if box := data.get("answerBox"):
            hits.append(Hit(box.get("title") or "answer box", box.get("answer") or box.get("snippet") or "", box.get("link") or "", "answerBox"))
        if kg := data.get("knowledgeGraph"):
            hits.append(Hit(kg.get("title") or "knowledge graph", kg.get("description") or "", kg.get("descriptionLink") or kg.get("website") or "", "knowledgeGraph"))
        for r in data.get("organic") or []:
            hits.append(Hit(r.get("title") or "", r.get("snippet") or "", r.get("link") or "", str(r.get("position", len(hits)))))
        return [h for h in hits if h.text][: int(k)]


_TAG = re.compile(r"<[^>]+>")


def strip_html(text: str) -> str:
    """A MediaWiki search snippet as plain text: tags (``searchmatch`` spans) removed, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(_TAG.sub("", text or "")).split())


class WikipediaSearch:
    """The MediaWiki search API: the pages ``list=search`` ranks first, each with its plain-text introduction (else
    the snippet); ``url`` is the wiki's ``api.php``, ``page_url`` the address a page title is appended to."""

    name = "wikipedia"

    def __init__(self, url: str, http: HttpClient, page_url: str = "https://en.wikipedia.org/wiki/") -> None:
        self.url, self.http, self.page_url = url, http, page_url

    def index_id(self) -> str:
        return redact(self.url)

    def search(self, query: str, k: int) -> list[Hit]:
        try:
            return self._search(query, k)
        except HttpError as exc:
            raise _refused(exc, f"Wikipedia ({redact(self.url)})", "") from None

    def _search(self, query: str, k: int) -> list[Hit]:
        found = self.http.get_json(self.url, {"action": "query", "list": "search", "srsearch": query, "srlimit": str(int(k)),
                                              "srprop": "snippet", "format": "json", "formatversion": "2"}, use_cache=False,
                                   check=check_mediawiki)
        results = ((found or {}).get("query") or {}).get("search") or []
        ranked = [(str(r.get("pageid", "")), str(r.get("title") or ""), strip_html(str(r.get("snippet") or ""))) for r in results[: int(k)]]
        if not ranked:
            return []
        pages = self.http.get_json(self.url, {"action": "query", "prop": "extracts", "exintro": "1", "explaintext": "1",
                                              "exlimit": "max", "pageids": "|".join(p for p, _, _ in ranked),
                                              "format": "json", "formatversion": "2"}, use_cache=False, check=check_mediawiki)
        extracts = {str(p.get("pageid", "")): " ".join(str(p.get("extract") or "").split())
                    for p in ((pages or {}).get("query") or {}).get("pages") or []}
        hits = [Hit(title=t, text=extracts.get(p) or snippet, url=self.page_url + t.replace(" ", "_"), id=p) for p, t, snippet in ranked]
        return [h for h in hits if h.text]
