"""Search backends of the retrieval-augmented verifier (MedSNIP §4.3, docs/medsnip.md).

The clients shared with HealthFC's open-domain evidence live in :mod:`medfc.common.search` (``Hit``,
``CachedSearch``, ``PubMedSearch``, ``WebSearch``, ``WikipediaSearch``) and are re-exported here; MedSNIP's
own backend is :class:`BM25Search` — a local BM25 index (``bm25s``) over any JSONL of passages, e.g. HealthFC
article sentences or CliniFact abstracts: the fields of the text, title, id and URL are options.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from medfc.common.io import read_jsonl
from medfc.common.search import CachedSearch, Hit, PubMedSearch, SearchBackend, WebSearch, WikipediaSearch

__all__ = ["BM25Search", "CachedSearch", "Hit", "PubMedSearch", "SearchBackend", "WebSearch", "WikipediaSearch", "render_hits"]


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


def render_hits(hits: Sequence[Hit], title_chars: int, text_chars: int) -> list[dict[str, str]]:
    """Hits as the verifier sees them: title and text cut to their lengths, and the URL."""
    return [{"title": h.title[:title_chars], "text": h.text[:text_chars], "url": h.url} for h in hits]
