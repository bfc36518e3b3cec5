"""Verification of units (MedSNIP §4.2–4.3; the verifiers' protocols and search backends in docs/medsnip.md): the
single-call verifiers, the retrieval loop (its τ gate applied at scoring), and its searchers (:func:`make_searchers`:
the shared clients of :mod:`medfc.retrieval.search` and :class:`BM25Search`, a local index over a JSONL of passages).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import requests

from medfc.common.http import HttpError
from medfc.common.io import read_jsonl
from medfc.common.jsoncache import UnitCache, cache_key
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.llm.base import Ledger, LLMClient
from medfc.llm.prompts import load_prompt
from medfc.llm.structured import ask_json, strip_think
from medfc.medsnip.calls import cached_ask, gen_params, llm_identity, llm_prices, scrub
from medfc.medsnip.options import RAG_PROMPTS, RetrievalOptions, VerifyOptions, verifier_kind
from medfc.medsnip.records import Answer, Evidence, UnitFields, Verdict, usage_total
from medfc.retrieval.search import CachedSearch, Hit, SearchBackend, SearchError
from medfc.retrieval.search_sources import Connection, PubMedSourceOptions, WebSourceOptions, build_client
from medfc.scoring.medsnip import FALSE, TRUE

SEARCH_ERRORS = (HttpError, SearchError, requests.RequestException, OSError, ValueError, KeyError)
GUARD_TRUE = ("You answered TRUE on the first turn without any evidence. Search for evidence first "
              "(prefer a query that could refute the statement).")
GUARD_CONF = "Your confidence was below {threshold}. Search for more evidence, or abstain if the evidence stays insufficient."
UNIT_FIELDS = ("unit_id", "answer_id", "mode", "index", "text", "pattern", "source_atoms", "source_sentences", "labels", "fallback", "atoms_from")


def parse_one_word(text: str) -> str | None:
    """TRUE / FALSE from the first token of the answer (lower-cased, punctuation stripped; ``<think>`` blocks
    removed), else None."""
    words = strip_think(text).split()
    first = re.sub(r"[^\w]", "", words[0]).lower() if words else ""
    return TRUE if first == "true" else FALSE if first == "false" else None


def turn_schema(sources: Sequence[str]) -> JSONObject:
    return {"type": "object",
            "properties": {"final_answer": {"type": "boolean"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                           "abstain": {"type": "boolean"}, "search_query": {"type": "string", "minLength": 1, "pattern": r"\S"},
                           "source": {"enum": list(sources)}, "reasoning": {"type": "string"}},
            "anyOf": [{"required": ["final_answer"]}, {"required": ["abstain"], "properties": {"abstain": {"const": True}}},
                      {"required": ["search_query", "source"]}]}


FINAL_SCHEMA: JSONObject = {"type": "object",
                            "properties": {"final_answer": {"type": "boolean"}, "abstain": {"type": "boolean"}, "reasoning": {"type": "string"}},
                            "anyOf": [{"required": ["final_answer"]}, {"required": ["abstain"], "properties": {"abstain": {"const": True}}}]}


def _context(answer: Answer | None) -> tuple[str, str]:
    if not answer:
        return "(none)", "(none)"
    return (answer.get("query") or "").strip() or "(none)", (answer.get("text") or "").strip() or "(none)"


def render_evidence(evidence: Sequence[Evidence]) -> str:
    if not evidence:
        return "(no evidence yet)"
    lines = []
    for n, ev in enumerate(evidence, 1):
        lines.append(f"[search {n}] source={ev['source']} query={json.dumps(ev['query'], ensure_ascii=False)}")
        if not ev["hits"]:
            lines.append("  (search failed)" if ev.get("error") else "  (no results)")
        for h in ev["hits"]:
            lines.append(f"  - {h['title']}: {h['text']}" + (f" <{h['url']}>" if h["url"] else ""))
    return "\n".join(lines)


def _base(unit: UnitFields, opts: VerifyOptions) -> Verdict:
    rec = {k: unit.get(k) for k in UNIT_FIELDS}
    rec.update(verifier=opts.name, verifier_kind=opts.verifier, verdict=None, confidence=None,
               gated=verifier_kind(opts.verifier).retrieves, abstained=False, cap_hit=False, forced_final=False, malformed=False,
               unparsed=False, failed=False, error=None, rounds=0, evidence=[], raw="")
    return rec


# what a cached retrieval verdict holds (besides the unit's fields): a stored entry without them is damaged
RAG_ENTRY_KEYS = ("verdict", "confidence", "abstained", "cap_hit", "forced_final", "malformed", "rounds", "evidence", "usage")


def _rag_entry(rec: JSONValue) -> JSONObject:
    if not isinstance(rec, dict):
        raise TypeError(f"a {type(rec).__name__}, not an object")
    missing = [k for k in RAG_ENTRY_KEYS if k not in rec]
    if missing:
        raise KeyError(f"no {', '.join(missing)}")
    if rec.get("failed"):
        raise ValueError("a failed call stored as a verdict")
    if rec["verdict"] not in (TRUE, FALSE, None) or not isinstance(rec["evidence"], list) or not isinstance(rec["usage"], dict):
        raise ValueError("verdict, evidence or usage of the wrong shape")
    return rec


class SearchUnavailable(RuntimeError):
    """Searches of the retrieval verifier that the service did not answer: the step fails after caching the rest."""


def check_outages(what: str, outages: Sequence[tuple[str, str]], n_verdicts: int) -> None:
    """Raise :class:`SearchUnavailable` when a search went unanswered after its retries (``outages``: (unit id,
    error))."""
    if not outages:
        return
    failed = sorted({u for u, _ in outages})
    raise SearchUnavailable(f"{what}: {len(outages)} searches went unanswered after their retries, "
                            f"for {len(failed)} units ({', '.join(failed[:5])}{' …' if len(failed) > 5 else ''}); first: {outages[0][1]}. "
                            f"The other {n_verdicts - len(failed)} verdicts are cached: a rerun verifies only these units")


class Verifier:
    def __init__(self, client: LLMClient, opts: VerifyOptions, cache: UnitCache, report: SkipReport,
                 searchers: Mapping[str, CachedSearch] | None = None) -> None:
        self.client = client
        self.opts = opts
        self.cache = cache
        self.report = report
        self.searchers = dict(searchers or {})
        self.identity = llm_identity(opts.llm)
        self.counts: Counter = Counter()
        self.outages: list[tuple[str, str]] = []  # (unit id, error) of searches the service did not answer
        self.failures: list[tuple[str, str]] = []  # (unit id, error) of units whose LLM call failed: no verdict
        self.key_envs = [opts.llm.api_key_env]
        if opts.retrieval is not None:
            self.key_envs += [opts.retrieval.pubmed.api_key_env, opts.retrieval.web.api_key_env]
        self.kind = verifier_kind(opts.verifier)
        self.prompts = {n: load_prompt(n, opts.prompt_dir) for n in self.kind.prompts}

    def _failed(self, rec: Verdict, error: str | None) -> None:
        """``rec`` is a failed call's: no verdict, listed, counted, reported."""
        rec.update(failed=True, verdict=None, error=error, abstained=False)
        self.failures.append((rec["unit_id"], error or "call failed"))
        self.counts["failed_call"] += 1
        self.report.skip(rec["unit_id"], "call_failed", (error or "")[:300])

    # -- single call ------------------------------------------------------------------------------
    def _single(self, units: Sequence[UnitFields], answers: Mapping[str, Answer]) -> list[Verdict]:
        prompt = self.prompts[self.kind.prompt]
        items = []
        for u in units:  # a claim-only prompt gets the unit alone (a custom one naming the context fails), as its key
            q, a = _context(answers.get(u["answer_id"]))
            fields = {"unit": u["text"], "question": q, "answer": a} if self.kind.full_context else {"unit": u["text"]}
            items.append((tuple(fields.values()), prompt.render(**fields)))
        res = cached_ask(self.client, self.cache, self.identity, f"verify:{self.opts.verifier}", [prompt], items,
                         gen_params(self.opts.llm, False), key_env=self.key_envs)
        out = []
        for u, r in zip(units, res):
            rec = _base(u, self.opts)
            rec.update(raw=r["text"], error=scrub(r["error"], self.key_envs), usage=r["usage"], cached=r["cached"],
                       rounds=1)
            out.append(rec)
            if r["failed"]:
                self._failed(rec, rec["error"])
                continue
            verdict = parse_one_word(r["text"])
            if verdict is None:  # the model's own unreadable answer: the paper's rule
                rec["unparsed"] = True
                self.counts["unparsed"] += 1
                verdict = FALSE if self.opts.unparsed == "false" else None
            rec["verdict"] = verdict
        return out

    # -- retrieval-augmented -----------------------------------------------------------------------
    def _fields(self, unit: UnitFields, answer: Answer | None) -> dict[str, str]:
        q, a = _context(answer)
        shared = {k: v for k, v in dict((answer or {}).get("shared_context") or {}).items() if k != "correct_answer"}
        return {"subset": str((answer or {}).get("subset") or "consumer"), "question": q, "answer": a,
                "shared_context": json.dumps(shared, ensure_ascii=False, sort_keys=True), "unit": unit["text"]}

    def _rag_key(self, unit: UnitFields, answer: Answer | None) -> str:
        r = self.opts.retrieval
        assert r is not None
        loop = {"max_rounds": r.max_rounds, "reprompt_below": r.reprompt_below, "k": r.hits_per_search, "title_chars": r.title_chars,
                "text_chars": r.text_chars, "sources": list(r.sources),
                "indexes": {n: s.backend.index_id() for n, s in sorted(self.searchers.items())}}
        return cache_key("verify:retrieval", self.identity, {n: p.sha256 for n, p in sorted(self.prompts.items())}, loop, self._fields(unit, answer))

    def _retrieval(self, units: Sequence[UnitFields], answers: Mapping[str, Answer]) -> list[Verdict]:
        r = self.opts.retrieval
        assert r is not None
        turn, final, repair = (self.prompts[RAG_PROMPTS[k]] for k in ("turn", "final", "repair"))
        params = gen_params(self.opts.llm, True)
        schema = turn_schema(r.sources)
        out: list[Verdict | None] = [None] * len(units)
        keys = [self._rag_key(u, answers.get(u["answer_id"])) for u in units]
        state: dict[int, dict[str, Any]] = {}  # a running unit's record, usage, guards; failed: a search failed
        for i, (u, key) in enumerate(zip(units, keys)):
            hit = self.cache.get(key, _rag_entry)
            if hit is not None:
                out[i] = {**_base(u, self.opts), **hit, "cached": True}
            else:
                state[i] = {"rec": _base(u, self.opts), "usage": Counter(), "guard_true": False, "guard_conf": False,
                            "note": "", "open": True, "failed": False, "call_failed": False}
        for rnd in range(1, r.max_rounds + 1):
            active = [i for i, st in state.items() if st["open"]]
            if not active:
                break
            convs = [turn.render(**self._fields(units[i], answers.get(units[i]["answer_id"])),
                                 evidence=render_evidence(state[i]["rec"]["evidence"]), sources=", ".join(r.sources),
                                 turns_left=str(r.max_rounds - rnd + 1), note=state[i]["note"] or "(none)")
                     for i in active]
            for i, res in zip(active, ask_json(self.client, convs, schema, params, repair, "verify:retrieval")):
                st, rec = state[i], state[i]["rec"]
                st["usage"].update(res.usage())
                rec["rounds"], rec["raw"], st["note"] = rnd, scrub(res.raw, self.key_envs, False) or "", ""
                if res.failed:  # no answer: no verdict, no forced final, not cached
                    st["call_failed"], st["done"], st["open"] = True, True, False
                    rec["error"] = scrub(res.error, self.key_envs)
                    continue
                if not res.ok:
                    rec["malformed"], rec["error"], st["open"] = True, scrub(res.error, self.key_envs), False
                    continue
                v = res.value
                if "final_answer" in v:
                    label, conf = (TRUE if v["final_answer"] else FALSE), v.get("confidence")
                    if label == TRUE and rnd == 1 and not rec["evidence"] and not st["guard_true"] and r.max_rounds > 1:
                        st["guard_true"], st["note"] = True, GUARD_TRUE
                        self.counts["guard_true_without_evidence"] += 1
                        continue
                    if conf is not None and conf < r.reprompt_below and rnd < r.max_rounds and not st["guard_conf"]:
                        st["guard_conf"], st["note"] = True, GUARD_CONF.format(threshold=r.reprompt_below)
                        self.counts["guard_low_confidence"] += 1
                        continue
                    rec["verdict"], rec["confidence"], st["open"], st["done"] = label, conf, False, True
                elif v.get("abstain"):
                    rec["abstained"], st["open"], st["done"] = True, False, True
                else:
                    entry: Evidence = {"round": rnd, "source": v["source"], "query": v["search_query"], "hits": []}
                    try:
                        hits = self.searchers[v["source"]].search(v["search_query"], r.hits_per_search)
                        entry["hits"] = [{"title": h.title[:r.title_chars], "text": h.text[:r.text_chars], "url": h.url}
                                         for h in hits]  # as the verifier sees them
                        self.counts[f"searches_{v['source']}"] += 1
                    except SEARCH_ERRORS as exc:  # a failed search is evidence of nothing, not a crash
                        entry["error"] = (scrub(f"{type(exc).__name__}: {exc}", self.key_envs) or "")[:300]
                        st["failed"] = True  # not cached: a rerun searches again
                        self.counts["search_failed"] += 1
                        self.report.skip(rec["unit_id"], "search_failed", entry["error"])
                        if isinstance(exc, SearchError) or (isinstance(exc, HttpError) and exc.exhausted):
                            self.outages.append((rec["unit_id"], entry["error"]))
                    rec["evidence"].append(entry)
        forced = [i for i, st in state.items() if not st.get("done")]  # the turn cap or a malformed answer
        if forced:
            convs = [final.render(**self._fields(units[i], answers.get(units[i]["answer_id"])),
                                  evidence=render_evidence(state[i]["rec"]["evidence"])) for i in forced]
            for i, res in zip(forced, ask_json(self.client, convs, FINAL_SCHEMA, params, repair, "verify:retrieval:final")):
                st, rec = state[i], state[i]["rec"]
                st["usage"].update(res.usage())
                rec["cap_hit"], rec["forced_final"] = not rec["malformed"], True
                if res.failed:
                    st["call_failed"], rec["error"] = True, scrub(res.error, self.key_envs)
                elif not res.ok:
                    rec["malformed"], rec["error"] = True, scrub(res.error, self.key_envs)
                elif "final_answer" in res.value:
                    rec["verdict"] = TRUE if res.value["final_answer"] else FALSE
                else:
                    rec["abstained"] = True
        for i, st in state.items():
            rec = st["rec"]
            rec["usage"] = usage_total([st["usage"]])
            if st["call_failed"]:
                self._failed(rec, rec["error"])
            for flag in ("abstained", "cap_hit", "forced_final", "malformed"):
                self.counts[flag] += int(rec[flag])
            if rec["malformed"]:
                self.report.skip(rec["unit_id"], "verifier_answer_malformed", (rec["error"] or "")[:300])
            if not st["failed"] and not st["call_failed"]:
                self.cache.put(keys[i], {k: v for k, v in rec.items() if k not in UNIT_FIELDS})
            out[i] = {**rec, "cached": False}
        return [o for o in out if o is not None]

    def run(self, units: Sequence[UnitFields], answers: Mapping[str, Answer]) -> list[Verdict]:
        if self.kind.retrieves:
            return self._retrieval(units, answers)
        return self._single(units, answers)

    def info(self, verdicts: Sequence[Verdict], n_units: int, n_unparsed: int, ledger: Ledger) -> dict[str, object]:
        """The verify step's info (verdicts, counts, failures, usage, calls, cache, rounds, searches, prices)."""
        opts = self.opts
        return {"verifier": opts.name, "kind": opts.verifier, "model": opts.llm.model, "n_units": n_units,
                "verdicts": dict(Counter(str(v["verdict"]) for v in verdicts)), "counts": dict(sorted(self.counts.items())),
                "failed": len(self.failures), "unparsed": n_unparsed,
                "usage": usage_total(v["usage"] for v in verdicts),
                "calls": ledger.as_dict(llm_prices(opts.llm)), "cache": dict(self.cache.stats),
                "rounds_mean": (sum(v["rounds"] for v in verdicts) / len(verdicts)) if verdicts else 0.0,
                "searches_run": {n: s.searches for n, s in self.searchers.items()},
                "prices": dataclasses.asdict(llm_prices(opts.llm))}


class BM25Search:
    name = "bm25"

    def __init__(self, passages: str | os.PathLike, text_field: str, title_field: str, id_field: str,
                 url_field: str) -> None:
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


def _pubmed_searcher(r: RetrievalOptions) -> SearchBackend:
    p = r.pubmed
    options = PubMedSourceOptions(email=p.email, eutils_url=p.eutils_url, api_key_env=p.api_key_env,
                                  requests_per_second=p.requests_per_second, records_dir=p.cache_dir, file="")
    return build_client("pubmed", options, Connection())


def _web_searcher(r: RetrievalOptions) -> SearchBackend:
    w = r.web
    return build_client("web", WebSourceOptions(url=w.url, api_key_env=w.api_key_env, requests_per_second=1.0, file=""),
                        Connection(max_retries=3, http_cache_dir=w.http_cache_dir, require_key=False))


def _bm25_searcher(r: RetrievalOptions) -> SearchBackend:
    b = r.bm25
    return BM25Search(b.passages, b.text_field, b.title_field, b.id_field, b.url_field)


# pubmed and web are the shared registry's clients (medfc.retrieval.search_sources), built from MedSNIP's sections
SEARCHERS: dict[str, Callable[[RetrievalOptions], SearchBackend]] = {"pubmed": _pubmed_searcher, "bm25": _bm25_searcher,
                                                                       "web": _web_searcher}


def make_searchers(r: RetrievalOptions) -> dict[str, CachedSearch]:
    """The search backends named in ``r.sources`` (:data:`SEARCHERS`), each behind the per-(query, k) search cache."""
    cache = UnitCache(r.search_cache_dir)
    return {name: CachedSearch(SEARCHERS[name](r), cache) for name in r.sources}
