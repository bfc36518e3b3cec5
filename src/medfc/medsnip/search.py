"""Search backends of the retrieval-augmented verifier (MedSNIP §4.3): the clients shared with HealthFC's
open-domain evidence (:mod:`medfc.retrieval.search`) and :class:`BM25Search`, a local BM25 index (``bm25s``) over
a JSONL of passages. :func:`make_searchers` builds the sources ``medsnip.retrieval.sources`` names.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from medfc.common.io import read_jsonl
from medfc.common.jsoncache import UnitCache
from medfc.medsnip.options import RetrievalOptions
from medfc.retrieval.search import CachedSearch, Hit, SearchBackend
from medfc.retrieval.search_sources import Connection, PubMedSourceOptions, WebSourceOptions, build_client


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
            self.docs.append(Hit(title=str(rec.get(title_field) or ""), text=text, url=str(rec.get(url_field) or ""), id=str(rec.get(id_field) or n)))
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


def render_hits(hits: Sequence[Hit], title_chars: int, text_chars: int) -> list[dict[str, str]]:
    """Hits as the verifier sees them: title and text cut to their lengths, and the URL."""
    return [{"title": h.title[:title_chars], "text": h.text[:text_chars], "url": h.url} for h in hits]


def _pubmed_searcher(r: RetrievalOptions) -> SearchBackend:
    p = r.pubmed
    return build_client("pubmed", PubMedSourceOptions(email=p.email, eutils_url=p.eutils_url, api_key_env=p.api_key_env,
                                                      requests_per_second=p.requests_per_second, records_dir=p.cache_dir, file=""),
                        Connection())


def _web_searcher(r: RetrievalOptions) -> SearchBackend:
    w = r.web
    return build_client("web", WebSourceOptions(url=w.url, api_key_env=w.api_key_env, requests_per_second=1.0, file=""),
                        Connection(max_retries=3, http_cache_dir=w.http_cache_dir, require_key=False))


def _bm25_searcher(r: RetrievalOptions) -> SearchBackend:
    b = r.bm25
    return BM25Search(b.passages, b.text_field, b.title_field, b.id_field, b.url_field)


# pubmed and web are the shared registry's clients (medfc.retrieval.search_sources), built from MedSNIP's sections
SEARCHERS: dict[str, Callable[[RetrievalOptions], SearchBackend]] = {"pubmed": _pubmed_searcher, "bm25": _bm25_searcher, "web": _web_searcher}


def make_searchers(r: RetrievalOptions) -> dict[str, CachedSearch]:
    """The search backends named in ``r.sources`` (:data:`SEARCHERS`), each behind the per-(query, k) search cache."""
    cache = UnitCache(r.search_cache_dir)
    return {name: CachedSearch(SEARCHERS[name](r), cache) for name in r.sources}
