"""Decomposition of answers into verification units (MedSNIP §4.1; the modes, their calls and the whole-text
fallback in docs/medsnip.md, "Decomposition"). An answer whose call failed has no units.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from medfc.common.jsoncache import UnitCache
from medfc.common.jsontypes import JSONObject, JSONValue
from medfc.common.report import SkipReport
from medfc.llm.base import Conversation, Ledger, LLMClient
from medfc.llm.prompts import load_prompt
from medfc.medsnip.calls import CallResult, cached_ask, gen_params, llm_identity, llm_prices
from medfc.medsnip.options import LLM_MODES, DecomposeOptions
from medfc.medsnip.records import Answer, Unit, usage_total
from medfc.medsnip.sentences import Sentence, align_atoms, numbered, split_sentences

PATTERN_ENUM: list[JSONValue] = ["A", "B", "C", "D", "E", "F"]
Check = Callable[[int, JSONValue], str | None]  # a semantic check of item i's answer (:func:`medfc.llm.structured.ask_json`)
_INDEX_LIST = {"type": "array", "items": {"type": "integer"}, "minItems": 1}
_TEXT = {"type": "string", "minLength": 1, "pattern": r"\S"}


def _list_schema(key: str, required: list[JSONValue], props: JSONObject, shared_context: bool) -> JSONObject:
    """``{[shared_context], key: [items with required fields]}``, the list non-empty."""
    outer: JSONObject = {key: {"type": "array", "minItems": 1, "items": {"type": "object", "required": required, "properties": props}}}
    if shared_context:
        outer["shared_context"] = {"type": "object"}
    return {"type": "object", "required": [key], "properties": outer}


_SNIPPET = {"output": _TEXT, "pattern": {"enum": PATTERN_ENUM}, "notes": {"type": "string"}}
EXTRACT_SCHEMA = _list_schema("atoms", ["text", "source_sentences"],
                              {"index": {"type": "integer"}, "text": _TEXT, "source_sentences": _INDEX_LIST}, True)
CLUSTER_SCHEMA = _list_schema("snippets", ["source_claims", "output", "pattern"], {"source_claims": _INDEX_LIST, **_SNIPPET}, False)
DIRECT_SCHEMA = _list_schema("snippets", ["source_sentences", "output", "pattern"], {"source_sentences": _INDEX_LIST, **_SNIPPET}, True)
PROMPTS = {"extract": "medsnip/extract", "cluster": "medsnip/cluster", "direct": "medsnip/direct", "repair": "llm/json_repair"}


def prompt_names(mode: str) -> list[str]:
    """The prompt files a decomposition mode reads (for the rule's params)."""
    names = {"atoms": ["extract"], "group": ["extract", "cluster"], "direct": ["direct"]}.get(mode, [])
    return [PROMPTS[n] for n in names] + ([PROMPTS["repair"]] if names else [])


def answer_sentences(answer: Answer) -> list[Sentence]:
    """The answer's sentences; a text with none (a single short phrase) is one sentence."""
    sents = split_sentences(answer["text"])
    if not sents and answer["text"].strip():
        text = answer["text"]
        start = len(text) - len(text.lstrip())
        sents = [Sentence(0, " ".join(text.split()), start, len(text.rstrip()))]
    return sents


def _unit(answer: Answer, mode: str, n: int, text: str, sents: Sequence[Sentence], *, pattern: str | None = None,
          source_atoms: Sequence[int] = (), source_sentences: Sequence[int] = (), fallback: bool = False,
          labels: dict[str, str] | None = None, notes: str = "", atoms_from: str | None = None) -> Unit:
    ss = sorted(set(int(i) for i in source_sentences))
    return {"unit_id": f"{answer['answer_id']}:{mode}:{n}", "answer_id": answer["answer_id"], "mode": mode, "index": n,
            "text": text, "pattern": pattern, "source_atoms": [int(a) for a in source_atoms], "source_sentences": ss,
            "spans": [[sents[i].start, sents[i].end] for i in ss if 0 <= i < len(sents)], "fallback": fallback,
            "labels": labels or {}, "notes": notes, "atoms_from": atoms_from}


def human_units(answer: Answer, mode: str) -> list[Unit]:
    """MedSNIP-Bench atoms (gold: the physician label) or snippets (gold: the three snippet labels)."""
    sents = answer_sentences(answer)
    atoms = answer.get("atoms") or []
    aligned = dict(zip([a["index"] for a in atoms], align_atoms([a["text"] for a in atoms], sents)))
    if mode == "human_atoms":
        return [_unit(answer, mode, a["index"], a["text"], sents, source_atoms=[a["index"]], atoms_from="given",
                      source_sentences=[aligned[a["index"]]] if aligned[a["index"]] is not None else [],
                      labels={"physician": a["label"]}) for a in atoms]
    return [_unit(answer, mode, s["index"], s["text"], sents, pattern=s["pattern"], source_atoms=s["atoms"],
                  source_sentences=[aligned[a] for a in s["atoms"] if aligned.get(a) is not None],
                  labels=dict(s["labels"]), notes=s.get("notes", ""), atoms_from="given") for s in answer.get("snippets") or []]


def _range_check(key: str, limit_of: Callable[[int], int], base: int) -> Check:
    def check(i: int, value: JSONValue) -> str | None:
        lo, hi = base, limit_of(i) + base - 1
        for k, item in enumerate(value.get("atoms") or value.get("snippets") or []):
            bad = [x for x in item[key] if not lo <= x <= hi]
            if bad:
                return f"item {k}: {key} {bad} outside {lo}..{hi}"
        return None
    return check


class Decomposer:
    """Decomposes answers with one LLM client and a per-unit cache (see module docstring)."""

    def __init__(self, client: LLMClient | None, opts: DecomposeOptions, cache: UnitCache, report: SkipReport) -> None:
        self.client = client
        self.opts = opts
        self.cache = cache
        self.report = report
        self.prompts = ({k: load_prompt(v, opts.prompt_dir) for k, v in PROMPTS.items()}
                        if opts.mode in LLM_MODES else {})
        self.identity = llm_identity(opts.llm) if opts.llm is not None else {}
        self.usage: dict[str, Counter] = {}
        self.counts: Counter = Counter()
        self.failures: list[tuple[str, str]] = []  # (answer id, error) of answers whose call failed: no units

    def _ask(self, kind: str, answers: Sequence[Answer], convs: Sequence[Conversation], schema: Mapping[str, JSONValue],
             check: Check) -> list[CallResult]:
        assert self.client is not None and self.opts.llm is not None
        items = [((a["query"], a["text"], a.get("subset"), conv[-1]["content"]), conv) for a, conv in zip(answers, convs)]
        res = cached_ask(self.client, self.cache, self.identity, f"decompose:{kind}", [self.prompts[kind]], items,
                         gen_params(self.opts.llm, True), schema, self.prompts["repair"], check, key_env=self.opts.llm.api_key_env)
        for a, r in zip(answers, res):
            self.usage.setdefault(a["answer_id"], Counter()).update(r["usage"])
            self.counts[f"{kind}_cached"] += int(r["cached"])
            self.counts[f"{kind}_repaired"] += int(bool(r["repaired"]))
            if r["failed"]:
                error = f"{kind}: {r['error'] or 'call failed'}"
                self.counts[f"{kind}_failed"] += 1
                self.failures.append((a["answer_id"], error))
                self.report.skip(a["answer_id"], f"{kind}_call_failed", error[:300])
            elif not r["ok"]:
                self.counts[f"{kind}_malformed"] += 1
                self.report.skip(a["answer_id"], f"{kind}_malformed", str(r["error"])[:300])
        return res

    def on_sentences(self, kind: str, answers: Sequence[Answer], sents: dict[str, list[Sentence]]) -> list[CallResult]:
        """The ``extract`` or ``direct`` call on each answer's numbered sentences."""
        convs = [self.prompts[kind].render(subset=a.get("subset") or "consumer",
                                           query=(a.get("query") or "").strip() or "(none)",
                                           sentences=numbered(sents[a["answer_id"]])) for a in answers]
        return self._ask(kind, answers, convs, EXTRACT_SCHEMA if kind == "extract" else DIRECT_SCHEMA,
                         _range_check("source_sentences", lambda i: len(sents[answers[i]["answer_id"]]), 0))

    def cluster(self, answers: Sequence[Answer], atoms: list[list[str]], contexts: list[JSONValue]) -> list[CallResult]:
        convs = [self.prompts["cluster"].render(
            subset=a.get("subset") or "consumer", query=(a.get("query") or "").strip() or "(none)",
            shared_context=json.dumps(ctx, ensure_ascii=False, sort_keys=True),
            atoms="\n".join(f"[{k + 1}] {t}" for k, t in enumerate(at)))
            for a, at, ctx in zip(answers, atoms, contexts)]

        def check(i: int, value: JSONValue) -> str | None:
            n = len(atoms[i])
            err = _range_check("source_claims", lambda _: n, 1)(i, value)
            if err:
                return err
            seen = Counter(x for s in value["snippets"] for x in s["source_claims"])
            missing = [k for k in range(1, n + 1) if k not in seen]
            twice = sorted(k for k, c in seen.items() if c > 1)
            if missing or twice:
                where = f"{missing} are in no snippet" if missing else f"{twice} are in more than one snippet"
                return f"atoms {where}; every atom must be in exactly one snippet"
            return None

        return self._ask("cluster", answers, convs, CLUSTER_SCHEMA, check)

    def _fallback(self, answer: Answer, sents: Sequence[Sentence]) -> list[Unit]:
        self.counts["fallback_whole_text"] += 1
        if not self.opts.fallback_whole_text:
            return []
        return [_unit(answer, self.opts.mode, 1, " ".join(answer["text"].split()), sents,
                      source_sentences=range(len(sents)), fallback=True)]

    def run(self, answers: Sequence[Answer]) -> list[Unit]:
        mode = self.opts.mode
        if mode in ("human_atoms", "human_snippets"):
            return [u for a in answers for u in human_units(a, mode)]
        answers = [a for a in answers if a["text"].strip()]
        sents = {a["answer_id"]: answer_sentences(a) for a in answers}
        made: dict[str, list[Unit]] = {}  # each decomposed answer's units (another: its fallback, or none if failed)
        if mode == "direct":
            for a, r in zip(answers, self.on_sentences("direct", answers, sents)):
                if r["ok"]:
                    made[a["answer_id"]] = [_unit(a, mode, k + 1, sn["output"].strip(), sents[a["answer_id"]],
                                                  pattern=sn["pattern"], source_sentences=sn["source_sentences"],
                                                  notes=sn.get("notes") or "")
                                            for k, sn in enumerate(r["value"]["snippets"])]
        given = mode == "group" and self.opts.atoms_from == "given"
        atoms: dict[str, list[dict[str, JSONValue]]] = {}  # each answer's atoms as the cluster call numbers them
        contexts: dict[str, JSONValue] = {}
        if given:
            for a in answers:
                texts = [x["text"] for x in a.get("atoms") or []]
                if not texts:
                    self.report.skip(a["answer_id"], "no_given_atoms")
                    continue
                al = align_atoms(texts, sents[a["answer_id"]])
                atoms[a["answer_id"]] = [{"index": x["index"], "text": x["text"], "source_sentences": [] if j is None else [j]}
                                         for x, j in zip(a["atoms"], al)]
                contexts[a["answer_id"]] = dict(a.get("shared_context") or {})
        elif mode != "direct":
            for a, r in zip(answers, self.on_sentences("extract", answers, sents)):
                if r["ok"]:
                    atoms[a["answer_id"]] = [{"index": k + 1, "text": x["text"].strip(), "source_sentences": x["source_sentences"]}
                                             for k, x in enumerate(r["value"]["atoms"])]
                    contexts[a["answer_id"]] = r["value"].get("shared_context") or {}
        if mode == "atoms":
            made = {aid: [_unit(a, mode, x["index"], x["text"], sents[aid], source_atoms=[x["index"]],
                                source_sentences=x["source_sentences"], atoms_from="extract") for x in atoms[aid]]
                    for a in answers if (aid := a["answer_id"]) in atoms}
        elif mode == "group":
            todo = [a for a in answers if a["answer_id"] in atoms]
            clustered = self.cluster(todo, [[x["text"] for x in atoms[a["answer_id"]]] for a in todo],
                                     [contexts[a["answer_id"]] for a in todo])
            for a, r in zip(todo, clustered):
                if not r["ok"]:
                    continue
                at, mine = atoms[a["answer_id"]], made.setdefault(a["answer_id"], [])
                for k, sn in enumerate(r["value"]["snippets"]):
                    members = [at[c - 1] for c in sn["source_claims"]]
                    mine.append(_unit(a, mode, k + 1, sn["output"].strip(), sents[a["answer_id"]],
                                      pattern=sn["pattern"], source_atoms=[m["index"] for m in members],
                                      source_sentences=[x for m in members for x in m["source_sentences"]],
                                      notes=sn.get("notes") or "", atoms_from="given" if given else "extract"))
        failed = {aid for aid, _ in self.failures}  # an answer whose call failed has no units
        units: list[Unit] = []
        for a in answers:
            if (aid := a["answer_id"]) not in failed:
                units.extend(made[aid] if aid in made else self._fallback(a, sents[aid]))
        return units

    @property
    def n_malformed(self) -> int:
        """Answers whose decomposition stayed malformed after its repair (the counts ``*_malformed``)."""
        return sum(v for k, v in self.counts.items() if k.endswith("_malformed"))

    def info(self, n_answers: int, units: Sequence[Unit], ledger: Ledger) -> dict[str, object]:
        """The decompose step's info (counts, usage, cache, failures, calls, patterns, prices)."""
        usage = {aid: dict(c) for aid, c in sorted(self.usage.items())}
        llm = self.opts.llm
        return {"mode": self.opts.mode, "counts": dict(sorted(self.counts.items())), "usage_by_answer": usage,
                "usage": usage_total(self.usage.values()), "cache": dict(self.cache.stats),
                "failed": len(self.failures),
                "unparsed": self.n_malformed, "n_answers": n_answers, "n_units": len(units), "calls": ledger.as_dict(llm_prices(llm)),
                "patterns": dict(sorted(Counter(str(u["pattern"]) for u in units).items())),
                "prices": None if llm is None else dataclasses.asdict(llm_prices(llm))}
