"""Reading an open-domain evidence artifact (:mod:`medfc.healthfc.evidence`), without the search clients, so that a
job that only reads the snippets loads no HTTP library."""

from __future__ import annotations

import os

from medfc.common.io import read_jsonl


def evidence_by_claim(path: str | os.PathLike) -> dict[str, list[str]]:
    """An evidence artifact → {claim id: its snippets in rank order}."""
    out: dict[str, list[tuple[int, str]]] = {}
    for rec in read_jsonl(path):
        out.setdefault(str(rec["id"]), []).append((int(rec["rank"]), str(rec.get("snippet") or "")))
    return {cid: [s for _, s in sorted(items)] for cid, items in out.items()}
