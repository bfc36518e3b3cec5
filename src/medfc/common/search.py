"""Search clients shared by MedSNIP's retrieval-augmented verifier and HealthFC's open-domain evidence.

Every backend answers ``search(query, k) -> list[Hit]`` (at most ``k`` hits, in the order the source ranks
them); :class:`CachedSearch` keeps each answer on disk per (backend, index, query, k), so a rerun (or a run
restarted after a kill) searches nothing already answered.

* :class:`WebSearch` — a Serper-compatible web search API (``POST {"q", "num"}``, key in the
  ``X-API-KEY`` header read from the environment, never in the cache key): the answer box, the
  knowledge graph and the organic results, in that order.
* :class:`PubMedSearch` — esearch (relevance order) then efetch of the abstracts, through the
  project's :class:`~medfc.common.pubmed.PubmedFetcher` (rate limit, per-PMID cache, API key
  and e-mail from the environment).
* :class:`WikipediaSearch` — the MediaWiki API: ``action=query&list=search`` (the API's relevance
  order), then ``prop=extracts`` (the plain-text introduction of each page found).

A backend that needs an API key (``require_key``) stops with :class:`MissingApiKey`, naming the
environment variable, before it sends anything.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from medfc.common.http import HttpClient
from medfc.common.jsoncache import UnitCache, cache_key
from medfc.common.redact import redact_url

SERPER_URL = "https://google.serper.dev/search"
WIKIPEDIA_API_URL = "https://en.wikipedia.org/w/api.php"


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


class SearchBackend(Protocol):
    name: str

    def index_id(self) -> str:
        """Names the index searched (part of the search cache key)."""
        ...

    def search(self, query: str, k: int) -> list[Hit]:
        ...


def search_key(backend: SearchBackend, query: str, k: int) -> str:
    """The cache key of one search: the backend, its index, the query (whitespace collapsed) and k."""
    return cache_key("search", backend.name, backend.index_id(), " ".join(query.split()), int(k))


class CachedSearch:
    """A backend whose answers are cached per (backend, index, query, k); ``searches`` counts the
    searches sent to the backend (cache misses)."""

    def __init__(self, backend: SearchBackend, cache: UnitCache) -> None:
        self.backend = backend
        self.name = backend.name
        self.cache = cache
        self.searches = 0

    def search(self, query: str, k: int) -> list[Hit]:
        key = search_key(self.backend, query, k)
        hit = self.cache.get(key)
        if hit is not None:
            return [Hit(**h) for h in hit]
        self.searches += 1
        hits = self.backend.search(query, k)
        self.cache.put(key, [asdict(h) for h in hits])
        return hits


class PubMedSearch:
    name = "pubmed"

    def __init__(self, fetcher: Any) -> None:
        self.fetcher = fetcher

    def index_id(self) -> str:
        return self.fetcher.esearch_url

    def search(self, query: str, k: int) -> list[Hit]:
        pmids = self.fetcher.esearch(query, k)
        recs = {r["pmid"]: r for r in self.fetcher.records(pmids, progress=False)}
        return [Hit(title=recs[p].get("title") or "", text=recs[p].get("abstract") or "",
                    url=f"https://pubmed.ncbi.nlm.nih.gov/{p}/", id=p) for p in pmids if p in recs]


def _api_key(variable: str, required: bool, what: str) -> str:
    key = os.environ.get(variable, "") if variable else ""
    if required and not key:
        raise MissingApiKey(variable or "(no variable configured)", what)
    return key


class WebSearch:
    name = "web"

    def __init__(self, url: str, api_key_env: str, http: HttpClient, require_key: bool = False) -> None:
        self.url = url
        self.api_key_env = api_key_env
        self.http = http
        self.require_key = require_key

    def index_id(self) -> str:
        return redact_url(self.url)  # a key in the endpoint's query is no part of what the index is

    def search(self, query: str, k: int) -> list[Hit]:
        key = _api_key(self.api_key_env, self.require_key, f"the web search ({redact_url(self.url)})")
        headers = {"Content-Type": "application/json", **({"X-API-KEY": key} if key else {})}
        data = self.http.fetch("POST", self.url, data=json.dumps({"q": query, "num": int(k)}, sort_keys=True).encode(),
                               kind="json", headers=headers)
        hits: list[Hit] = []
        box = data.get("answerBox") or {}
        if box:
            hits.append(Hit(box.get("title") or "answer box", box.get("answer") or box.get("snippet") or "", box.get("link") or "", "answerBox"))
        kg = data.get("knowledgeGraph") or {}
        if kg:
            hits.append(Hit(kg.get("title") or "knowledge graph", kg.get("description") or "", kg.get("descriptionLink") or kg.get("website") or "", "knowledgeGraph"))
        for r in data.get("organic") or []:
            hits.append(Hit(r.get("title") or "", r.get("snippet") or "", r.get("link") or "", str(r.get("position", len(hits)))))
        return [h for h in hits if h.text][: int(k)]


_TAG = re.compile(r"<[^>]+>")


def strip_html(text: str) -> str:
    """A MediaWiki search snippet as plain text: tags (the ``searchmatch`` spans) removed, entities decoded,
    whitespace collapsed."""
    return " ".join(html.unescape(_TAG.sub("", text or "")).split())


class WikipediaSearch:
    """The MediaWiki search API: the pages ``list=search`` ranks first, each with the plain-text introduction
    ``prop=extracts`` gives (the search snippet when a page has no extract); ``url`` is the wiki's
    ``api.php`` endpoint, ``page_url`` the address a page title is appended to."""

    name = "wikipedia"

    def __init__(self, url: str, http: HttpClient, page_url: str = "https://en.wikipedia.org/wiki/") -> None:
        self.url = url
        self.http = http
        self.page_url = page_url

    def index_id(self) -> str:
        return redact_url(self.url)

    def search(self, query: str, k: int) -> list[Hit]:
        found = self.http.get_json(self.url, {"action": "query", "list": "search", "srsearch": query, "srlimit": str(int(k)),
                                              "srprop": "snippet", "format": "json", "formatversion": "2"}, use_cache=False)
        results = ((found or {}).get("query") or {}).get("search") or []
        ranked = [(str(r.get("pageid", "")), str(r.get("title") or ""), strip_html(str(r.get("snippet") or ""))) for r in results[: int(k)]]
        if not ranked:
            return []
        pages = self.http.get_json(self.url, {"action": "query", "prop": "extracts", "exintro": "1", "explaintext": "1",
                                              "exlimit": "max", "pageids": "|".join(p for p, _, _ in ranked),
                                              "format": "json", "formatversion": "2"}, use_cache=False)
        extracts = {str(p.get("pageid", "")): " ".join(str(p.get("extract") or "").split())
                    for p in ((pages or {}).get("query") or {}).get("pages") or []}
        hits = [Hit(title=t, text=extracts.get(p) or snippet, url=self.page_url + t.replace(" ", "_"), id=p) for p, t, snippet in ranked]
        return [h for h in hits if h.text]
