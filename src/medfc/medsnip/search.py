"""Search backends of the retrieval-augmented verifier (MedSNIP §4.3, docs/medsnip.md).

Every backend answers ``search(query, k) -> list[Hit]``; :class:`CachedSearch` keeps each answer on
disk per (backend, index, query, k), so a rerun searches nothing.

* :class:`PubMedSearch` — esearch (relevance order) then efetch of the abstracts, through the
  project's :class:`~medfc.common.pubmed.PubmedFetcher` (rate limit, per-PMID cache, API key
  and e-mail from the environment).
* :class:`BM25Search` — a local BM25 index (``bm25s``) over any JSONL of passages, e.g. HealthFC
  article sentences or CliniFact abstracts: the fields of the text, title, id and URL are options.
* :class:`WebSearch` — a Serper-compatible web search API (``POST {"q", "num"}``, key in the
  ``X-API-KEY`` header read from the environment, never in the cache key): the answer box, the
  knowledge graph and the organic results, in that order.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from medfc.common.http import HttpClient
from medfc.common.redact import redact_url
from medfc.common.io import read_jsonl
from medfc.medsnip.cache import UnitCache, cache_key

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Hit:
    title: str
    text: str
    url: str
    id: str


class SearchBackend(Protocol):
    name: str

    def index_id(self) -> str:
        """Names the index searched (part of the search cache key)."""
        ...

    def search(self, query: str, k: int) -> list[Hit]:
        ...


class CachedSearch:
    """A backend whose answers are cached per (backend, index, query, k)."""

    def __init__(self, backend: SearchBackend, cache: UnitCache) -> None:
        self.backend = backend
        self.name = backend.name
        self.cache = cache
        self.searches = 0

    def search(self, query: str, k: int) -> list[Hit]:
        key = cache_key("search", self.backend.name, self.backend.index_id(), " ".join(query.split()), int(k))
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


class BM25Search:
    name = "bm25"

    def __init__(self, passages: str | os.PathLike, text_field: str, title_field: str, id_field: str, url_field: str) -> None:
        import bm25s

        self.path = Path(passages)
        self.docs: list[Hit] = []
        for n, rec in enumerate(read_jsonl(self.path)):
            text = str(rec.get(text_field) or "").strip()
            if not text:
                continue
            self.docs.append(Hit(title=str(rec.get(title_field) or ""), text=text, url=str(rec.get(url_field) or ""),
                                 id=str(rec.get(id_field) or n)))
        if not self.docs:
            raise ValueError(f"{self.path}: no passages with a {text_field!r} field")
        corpus = [f"{d.title} {d.text}".strip() for d in self.docs]
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
        self._tokenize = bm25s.tokenize
        self._stat = self.path.stat()

    def index_id(self) -> str:
        return f"{self.path.resolve()}:{self._stat.st_size}:{int(self._stat.st_mtime)}"

    def search(self, query: str, k: int) -> list[Hit]:
        k = min(int(k), len(self.docs))
        tokens = self._tokenize([query], stopwords="en", show_progress=False)
        if not any(len(ids) for ids in tokens.ids):
            return []
        idx, scores = self.retriever.retrieve(tokens, k=k, show_progress=False)
        return [self.docs[int(i)] for i, s in zip(idx[0], scores[0]) if s > 0]


class WebSearch:
    name = "web"

    def __init__(self, url: str, api_key_env: str, http: HttpClient) -> None:
        self.url = url
        self.api_key_env = api_key_env
        self.http = http

    def index_id(self) -> str:
        return redact_url(self.url)  # a key in the endpoint's query is no part of what the index is

    def search(self, query: str, k: int) -> list[Hit]:
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
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


def render_hits(hits: Sequence[Hit], title_chars: int, text_chars: int) -> list[dict[str, str]]:
    """Hits as the verifier sees them: title and text cut to their lengths, and the URL."""
    return [{"title": h.title[:title_chars], "text": h.text[:text_chars], "url": h.url} for h in hits]
