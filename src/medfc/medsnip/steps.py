"""Workflow steps of the MedSNIP stage: prepare → decompose → verify → score → table.

Every step is ``step(inputs, outputs, options[, runtime])`` with the rule's named files and a typed,
frozen options object (:mod:`medfc.medsnip.options`, built by ``medfc run`` from the mapping the rule
passes, every key required, with the cross-field checks of each class), so a bad key is named before a
step reads anything. The steps
that may run a local model take ``runtime`` (its threads). The library knows nothing of Snakemake.

``prepare`` (:class:`PrepareOptions`)
    inputs ``source`` (MedSNIP-Bench JSON/JSONL, or the HealthFC dataset JSONL); outputs ``answers``
    (JSONL, :mod:`medfc.medsnip.answers`), ``info`` (JSON), ``report`` (SkipReport JSON). HealthFC:
    the 327 supported/refuted claims; with ``rewrite_claims`` each claim is rewritten into the
    statement it asserts (one cached JSON call per claim; a malformed answer keeps the question).
``decompose`` (:class:`DecomposeOptions`)
    inputs ``answers``; outputs ``units`` (JSONL), ``info``, ``report``.
``verify`` (:class:`VerifyOptions`)
    inputs ``units``, ``answers`` (the rule also lists a local BM25 index's passages file, read through the
    options, so that editing it reruns the job); outputs ``verdicts`` (JSONL), ``info``, ``report``.
``score`` (:class:`ScoreOptions`)
    inputs ``answers``, ``verdicts`` (list), optional ``decompositions`` and ``verifications`` (lists of
    the decompose and verify infos: usage and prices for the cost columns); outputs ``scores`` (JSON:
    per arm FF1 with its bootstrap interval, Δ vs the baseline mode with its interval, coverage, cost),
    ``report``.
``table`` (:class:`TableOptions`)
    inputs ``scores``; outputs ``csv``, ``md``, ``tex``: one row per verifier and mode.

Per-unit caches (``unit_cache_dir``) make adding a verifier rerun only verification, and editing
one prompt recompute only the units that read it. Each answer is cached as soon as it arrives.

A failed LLM call (after its retries, or a bad answer) is never a statement, a unit or a verdict: the
``prepare`` (rewrite), ``decompose`` and ``verify`` steps cache what was answered, then fail naming how
many calls failed and why (:class:`~medfc.medsnip.calls.LLMCallsFailed`), unless the LLM's
``max_failed_share`` allows that many; then the failed items are written as such (a verdict record with
``failed: true`` and no verdict; an answer without units), counted in the info and the report
(``failed_calls``, ``failed_items``, ``unparsed``), left out of scoring and shown in the table's
``failed`` / ``decompose_failed`` columns beside the ``unparsed`` ones. What the client raises (a refused
key, an unknown model) stops the step unchanged.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import NotRequired, TypedDict

import pandas as pd

from medfc.common.io import read_json, read_jsonl, table_stem, write_json, write_jsonl, write_table
from medfc.common.jsontypes import JSONValue
from medfc.common.options import Runtime
from medfc.common.report import SkipReport
from medfc.common.stepfiles import StepFiles
from medfc.common.search_sources import Connection, PubMedSourceOptions, WebSourceOptions, build_client
from medfc.llm.base import Ledger, Prices
from medfc.llm.prompts import load_prompt
from medfc.medsnip import analysis
from medfc.medsnip.answers import healthfc_answers, load_bench
from medfc.medsnip.cache import UnitCache
from medfc.medsnip.calls import LLMCallsFailed  # noqa: F401  (what the steps raise on failed calls)
from medfc.medsnip.calls import cached_ask, check_failures, gen_params, llm_identity, make_llm
from medfc.medsnip.decompose import Decomposer
from medfc.medsnip.options import (
    LLM_MODES,
    MODES,
    DecomposeOptions,
    LLMOptions,
    PrepareOptions,
    RetrievalOptions,
    ScoreOptions,
    TableOptions,
    VerifyOptions,
)
from medfc.medsnip.records import Answer, Unit, UnitFields, Verdict
from medfc.medsnip.search import BM25Search, CachedSearch, SearchBackend
from medfc.medsnip.verify import Verifier
from medfc.scoring.medsnip import FALSE, Bootstrap, aggregate, binary_scores, clustered_paired_bootstrap, nei_counts, paired_bootstrap

log = logging.getLogger(__name__)


class Arm(TypedDict):
    """One (verifier, mode) arm at the scoring level (:func:`_arm`): gold, predictions and clusters, the NEI
    claims' predictions (HealthFC), and its scores once computed."""

    gold: list[str | None]
    pred: list[str | None]
    clusters: list[Hashable]
    nei_pred: NotRequired[list[str | None]]
    scores: NotRequired[dict[str, object]]
STATEMENT_SCHEMA: dict[str, JSONValue] = {"type": "object", "required": ["statement"], "properties": {"statement": {"type": "string", "minLength": 1, "pattern": r"\S"}}}


def _prices(llm: LLMOptions | None) -> Prices | None:
    return Prices(llm.price_input_per_mtok, llm.price_output_per_mtok) if llm is not None else None


def _count_failures(report: SkipReport, ledger: Ledger, n_items: int, cache: UnitCache, n_unparsed: int | None = None) -> None:
    """The report's counts of failed calls (the ledger's), of items left without an answer by them, of
    the model's unreadable answers, and of damaged unit-cache entries (asked again)."""
    report.count("failed_calls", ledger.total()["failed"])
    report.count("failed_items", n_items)
    if n_unparsed is not None:
        report.count("unparsed", n_unparsed)
    report.count("unit_cache_damaged", int(cache.stats.get("damaged", 0)))


def _write_common(outputs: StepFiles, info: dict[str, object], report: SkipReport) -> None:
    info["skips"] = {k: v for k, v in report.as_dict().items() if k != "skipped"}
    if outputs.get("info"):
        write_json(outputs["info"], info)
    if outputs.get("report"):
        report.write(outputs["report"])


# ------------------------------------------------------------------------------------------ prepare


def rewrite_statements(answers: list[Answer], opts: PrepareOptions, report: SkipReport, ledger: Ledger,
                       threads: int = 1) -> dict[str, object]:
    """HealthFC: the claim (a question) → the statement it asserts, which becomes the answer text."""
    assert opts.llm is not None
    client = make_llm(opts.llm, ledger, threads)
    prompt = load_prompt("medsnip/healthfc_statement", opts.prompt_dir)
    repair = load_prompt("llm/json_repair", opts.prompt_dir)
    cache = UnitCache(opts.unit_cache_dir)
    items = [((a["claim"],), prompt.render(claim=a["claim"])) for a in answers]
    results = cached_ask(client, cache, llm_identity(opts.llm), "prepare:statement", [prompt], items, gen_params(opts.llm, True),
                         STATEMENT_SCHEMA, repair, key_env=opts.llm.api_key_env)
    usage: Counter = Counter()
    failures = []
    for a, r in zip(answers, results):
        usage.update(r["usage"])
        if r["failed"]:
            failures.append((a["answer_id"], r["error"] or "call failed"))
            report.skip(a["answer_id"], "statement_call_failed_question_kept", (r["error"] or "")[:300])
        elif r["ok"]:
            a["text"] = " ".join(r["value"]["statement"].split())
            report.count("claims_rewritten")
        else:
            report.skip(a["answer_id"], "statement_malformed_question_kept", (r["error"] or "")[:300])
    _count_failures(report, ledger, len(failures), cache)
    check_failures("medsnip prepare (statement rewrite)", "claims", failures, len(answers), opts.llm.max_failed_share,
                   ledger.total()["failed"])
    return {"usage": dict(usage), "cache": dict(cache.stats), "calls": ledger.as_dict(_prices(opts.llm)),
            "failed": len(failures)}


def prepare(inputs: StepFiles, outputs: StepFiles, options: PrepareOptions, runtime: Runtime) -> dict[str, object]:
    report = SkipReport(f"medsnip-prepare-{options.source}")
    if options.source == "bench":
        answers = load_bench(inputs["source"], report, options.splits)
    else:
        answers = healthfc_answers(inputs["source"], report)
    if options.limit and len(answers) > options.limit:
        report.exclude("beyond_limit", len(answers) - options.limit)
        answers = answers[: options.limit]
    info: dict[str, object] = {"source": options.source, "n_answers": len(answers),
                            "labels": dict(Counter(str(a["label"]) for a in answers))}
    if options.source == "healthfc" and options.rewrite_claims:
        info["rewrite"] = rewrite_statements(answers, options, report, Ledger(), runtime.threads)
    write_jsonl(outputs["answers"], answers)
    _write_common(outputs, info, report)
    return info


# ---------------------------------------------------------------------------------------- decompose


def decompose(inputs: StepFiles, outputs: StepFiles, options: DecomposeOptions, runtime: Runtime) -> dict[str, object]:
    report = SkipReport(f"medsnip-decompose-{options.mode}")
    answers: list[Answer] = list(read_jsonl(inputs["answers"]))
    ledger = Ledger()
    client = make_llm(options.llm, ledger, runtime.threads) if options.mode in LLM_MODES and options.llm is not None else None
    dec = Decomposer(client, options, UnitCache(options.unit_cache_dir), report)
    units = dec.run(answers)
    malformed = sum(v for k, v in dec.counts.items() if k.endswith("_malformed"))
    _count_failures(report, ledger, len(dec.failures), dec.cache, malformed)
    if options.llm is not None:
        check_failures(f"medsnip decompose {options.mode}", "answers", dec.failures, len([a for a in answers if a["text"].strip()]),
                       options.llm.max_failed_share, ledger.total()["failed"])
    write_jsonl(outputs["units"], units)
    info = dec.info()
    info.update(failed=len(dec.failures), unparsed=malformed)
    info.update(n_answers=len(answers), n_units=len(units), calls=ledger.as_dict(_prices(options.llm)),
                patterns=dict(sorted(Counter(str(u["pattern"]) for u in units).items())),
                prices=None if options.llm is None else {"input_per_mtok": options.llm.price_input_per_mtok,
                                                       "output_per_mtok": options.llm.price_output_per_mtok})
    report.count("units", len(units))
    _write_common(outputs, info, report)
    return info


# ------------------------------------------------------------------------------------------- verify


class SearchUnavailable(RuntimeError):
    """Searches of the retrieval verifier that the service did not answer: the step fails after caching the rest."""


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


# The sources of ``medsnip.retrieval.sources``: pubmed and web are the shared registry's clients
# (medfc.common.search_sources, as HealthFC's evidence), built from MedSNIP's own sections; bm25, a local BM25
# index over a JSONL of passages, is MedSNIP's one backend of its own.
SEARCHERS: dict[str, Callable[[RetrievalOptions], SearchBackend]] = {"pubmed": _pubmed_searcher, "bm25": _bm25_searcher,
                                                                      "web": _web_searcher}


def make_searchers(r: RetrievalOptions) -> dict[str, CachedSearch]:
    """The search backends named in ``r.sources`` (:data:`SEARCHERS`), each behind the per-(query, k) search cache."""
    cache = UnitCache(r.search_cache_dir)
    return {name: CachedSearch(SEARCHERS[name](r), cache) for name in r.sources}


def verify(inputs: StepFiles, outputs: StepFiles, options: VerifyOptions, runtime: Runtime,
           searchers: Mapping[str, CachedSearch] | None = None) -> dict[str, object]:
    """Verify every unit (``searchers`` replaces the backends built from the options, e.g. in tests)."""
    report = SkipReport(f"medsnip-verify-{options.name}-{options.verifier}")
    units: list[Unit] = list(read_jsonl(inputs["units"]))
    answers: dict[str, Answer] = {a["answer_id"]: a for a in read_jsonl(inputs["answers"])}
    ledger = Ledger()
    if options.verifier == "retrieval" and searchers is None:
        assert options.retrieval is not None
        searchers = make_searchers(options.retrieval)
    ver = Verifier(make_llm(options.llm, ledger, runtime.threads), options, UnitCache(options.unit_cache_dir), report, searchers)
    verdicts = ver.run(units, answers)
    n_unparsed = sum(bool(v.get("unparsed") or v.get("malformed")) for v in verdicts)
    _count_failures(report, ledger, len(ver.failures), ver.cache, n_unparsed)
    check_failures(f"medsnip verify {options.name}", "units", ver.failures, len(units), options.llm.max_failed_share,
                   ledger.total()["failed"])
    if ver.outages:
        failed = sorted({u for u, _ in ver.outages})
        raise SearchUnavailable(f"medsnip verify {options.name}: {len(ver.outages)} searches went unanswered after their retries, "
                                f"for {len(failed)} units ({', '.join(failed[:5])}{' …' if len(failed) > 5 else ''}); first: {ver.outages[0][1]}. "
                                f"The other {len(verdicts) - len(failed)} verdicts are cached: a rerun verifies only these units")
    write_jsonl(outputs["verdicts"], verdicts)
    usage: Counter = Counter()
    for v in verdicts:
        usage.update(v["usage"])
    info = {"verifier": options.name, "kind": options.verifier, "model": options.llm.model, "n_units": len(units),
            "verdicts": dict(Counter(str(v["verdict"]) for v in verdicts)), "counts": dict(sorted(ver.counts.items())),
            "failed": len(ver.failures), "unparsed": n_unparsed,
            "usage": {k: int(usage.get(k, 0)) for k in ("calls", "prompt_tokens", "completion_tokens")},
            "calls": ledger.as_dict(_prices(options.llm)), "cache": dict(ver.cache.stats),
            "rounds_mean": (sum(v["rounds"] for v in verdicts) / len(verdicts)) if verdicts else 0.0,
            "searches_run": {n: s.searches for n, s in (searchers or {}).items() if hasattr(s, "searches")},
            "prices": {"input_per_mtok": options.llm.price_input_per_mtok, "output_per_mtok": options.llm.price_output_per_mtok}}
    _write_common(outputs, info, report)
    return info


# -------------------------------------------------------------------------------------------- score


def effective_verdict(v: Verdict, tau: float) -> str | None:
    """The unit's verdict after the τ gate of the retrieval verifier (None = not addressed; a failed call
    has none, and is left out of the unit-level scores altogether, see :func:`_arm`)."""
    if v.get("failed") or v.get("verdict") is None or v.get("abstained"):
        return None
    if v.get("gated"):
        conf = v.get("confidence")
        if v.get("cap_hit") or conf is None or conf < tau:
            return None
    return v["verdict"]


def _unit_gold(mode: str, recs: Sequence[Verdict], answers: Mapping[str, Answer],
               opts: ScoreOptions) -> list[str | None]:
    if mode == "human_atoms":
        return [r["labels"].get("physician") for r in recs]
    if mode == "human_snippets":
        return [r["labels"].get(opts.unit_gold) for r in recs]
    gold: dict[str, str | None] = {}
    by_answer: dict[str, list[Verdict]] = defaultdict(list)
    for r in recs:
        by_answer[r["answer_id"]].append(r)
    for aid, rs in by_answer.items():
        ans = answers.get(aid)
        labels = analysis.project_labels(ans, rs, opts.projection, opts.unit_gold) if ans and ans.get("snippets") else [None] * len(rs)
        gold.update({r["unit_id"]: g for r, g in zip(rs, labels)})
    return [gold[r["unit_id"]] for r in recs]


def _arm(recs: Sequence[Verdict], answers: Mapping[str, Answer], opts: ScoreOptions, report: SkipReport) -> Arm:
    """Gold, predictions and clusters of one (verifier, mode) arm at the scoring level. A unit whose call
    failed is left out (unit level: not scored, not an abstention; answer level: not one of the answer's
    verdicts), counted in the report's exclusions."""
    mode = recs[0]["mode"]
    eff = [effective_verdict(r, opts.tau) for r in recs]
    n_failed = sum(bool(r.get("failed")) for r in recs)
    if n_failed:
        report.exclude(f"{recs[0]['verifier']}/{mode}:failed_calls", n_failed)
    if opts.level == "unit":
        gold = _unit_gold(mode, recs, answers, opts)
        keep = [i for i, g in enumerate(gold) if g is not None and not recs[i].get("failed")]
        without_gold = sum(g is None for g in gold)
        if without_gold:
            report.exclude(f"{mode}:units_without_gold", without_gold)
        return {"gold": [gold[i] for i in keep], "pred": [eff[i] for i in keep],
                "clusters": [recs[i]["answer_id"] for i in keep]}
    per_answer: dict[str, list[str | None]] = defaultdict(list)
    for r, e in zip(recs, eff):
        if not r.get("failed"):
            per_answer[r["answer_id"]].append(e)
    ids = [aid for aid, a in answers.items() if a.get("label") is not None]
    out: Arm = {"gold": [answers[aid]["label"] for aid in ids],
           "pred": [aggregate(per_answer.get(aid, []), opts.aggregation, opts.threshold_k) for aid in ids],
           "clusters": ids}
    if any(a.get("source") == "healthfc" for a in answers.values()):
        out["nei_pred"] = [aggregate(per_answer.get(aid, []), opts.aggregation, opts.threshold_k) for aid in _nei_ids(answers)]
    return out


def _nei_ids(answers: Mapping[str, Answer]) -> list[str]:
    """The HealthFC NOT ENOUGH INFO claims among the answers (no label): verified, never scored."""
    return [aid for aid, a in answers.items() if a.get("label") is None and a.get("source") == "healthfc"]


def _fidelity(answers: Mapping[str, Answer], units_by_mode: Mapping[str, Sequence[UnitFields]],
              options: ScoreOptions) -> dict[str, dict[str, float | int | None]]:
    """Boundary fidelity of every automatic snippet mode against the bench's human snippets: sentence-set
    F1 and ARI, and the texts of the best set-F1 pairs compared by embedding cosine and ROUGE-L."""
    from medfc.medsnip.decompose import answer_sentences, human_units

    out: dict[str, dict[str, float | int | None]] = {}
    embedder = None
    for mode, units in sorted(units_by_mode.items()):
        if mode not in ("group", "direct"):
            continue
        by_answer: dict[str, list[UnitFields]] = defaultdict(list)
        for u in units:
            by_answer[u["answer_id"]].append(u)
        best: list[float] = []
        pairs: list[tuple[str, str]] = []
        aris: dict[str, list[float]] = defaultdict(list)
        n_human = 0
        for aid, auto in sorted(by_answer.items()):
            ans = answers.get(aid)
            if not ans or not ans.get("snippets"):
                continue
            human = human_units(dict(ans), "human_snippets")
            n_human += len(human)
            sf = analysis.sentence_set_f1([u["source_sentences"] for u in auto], [h["source_sentences"] for h in human])
            best += sf["per_snippet"]
            pairs += [(u.get("text") or "", human[i].get("text") or "") for u, i in zip(auto, sf["pairs"]) if i is not None]
            p = analysis.partition_ari(human, auto, len(answer_sentences(dict(ans))), [a["index"] for a in ans.get("atoms") or []])
            aris[p["over"]].append(p["ari"])
        if not best:
            continue
        res = out[mode] = {"sentence_set_f1": sum(best) / len(best), "n_auto_snippets": len(best), "n_human_snippets": n_human,
                           **{f"ari_{k}": sum(v) / len(v) for k, v in aris.items()}, "n_answers": sum(len(v) for v in aris.values()),
                           "n_pairs": len(pairs), "rouge_l": None, "cosine": None}
        if pairs:
            res["rouge_l"] = sum(analysis.rouge_l(a, h, options.rouge_stemmer) for a, h in pairs) / len(pairs)
            if options.fidelity_embedding_model != "none":
                if embedder is None:
                    from medfc.common.embeddings import TransformersEmbedder

                    embedder = TransformersEmbedder(model=options.fidelity_embedding_model or None, max_length=256)
                a_vec, h_vec = embedder.encode([a for a, _ in pairs]), embedder.encode([h for _, h in pairs])
                res["cosine"] = float((a_vec * h_vec).sum(axis=1).mean())
    return out


def _per_pattern(groups: Mapping[tuple[str, str], Sequence[Verdict]], opts: ScoreOptions) -> dict[str, dict[str, dict[str, float | int | str]]]:
    out: dict[str, dict[str, dict[str, float | int | str]]] = {}
    for verifier in sorted({v for v, _ in groups}):
        snips, atoms = groups.get((verifier, "human_snippets")), groups.get((verifier, "human_atoms"))
        if not snips or not atoms:
            continue
        atom_verdict = {r["unit_id"]: effective_verdict(r, opts.tau) for r in atoms}
        rows: list[analysis.PatternRow] = []
        for s in snips:
            ids = [f"{s['answer_id']}:human_atoms:{a}" for a in s["source_atoms"]]
            rows.append({"pattern": s["pattern"], "gold": s["labels"][opts.pattern_gold], "snippet": effective_verdict(s, opts.tau),
                         "atoms": [atom_verdict.get(i) for i in ids], "cluster": s["answer_id"]})
        out[verifier] = analysis.per_pattern(rows, opts.n_resamples, opts.seed, opts.pattern_ci, 1 - opts.ci_level)
    return out


def _prices_of(info: Mapping[str, JSONValue]) -> Prices | None:
    p = info.get("prices")
    return Prices(p["input_per_mtok"], p["output_per_mtok"]) if p else None


def _usage_of(recs: Sequence[Verdict]) -> dict[str, int]:
    c: Counter[str] = Counter()
    for r in recs:
        c.update(r.get("usage") or {})
    return {k: int(c.get(k, 0)) for k in ("calls", "prompt_tokens", "completion_tokens")}


def _compare(base: Arm, arm: Arm, opts: ScoreOptions) -> Bootstrap:
    """Paired bootstrap of Δ = FF1(arm) − FF1(base): over answers (answer level), over whole answers'
    units (unit level, the arms holding different units per answer)."""
    if opts.level == "answer":
        return paired_bootstrap(arm["gold"], base["pred"], arm["pred"], n_resamples=opts.n_resamples, seed=opts.seed,
                                alpha=1 - opts.ci_level)
    return clustered_paired_bootstrap((base["gold"], base["pred"], base["clusters"]), (arm["gold"], arm["pred"], arm["clusters"]),
                                      n_resamples=opts.n_resamples, seed=opts.seed, alpha=1 - opts.ci_level,
                                      clusters=opts.cluster_bootstrap)


def score(inputs: StepFiles, outputs: StepFiles, options: ScoreOptions) -> dict[str, object]:
    report = SkipReport("medsnip-score")
    answers: dict[str, Answer] = {a["answer_id"]: a for a in read_jsonl(inputs["answers"])}
    paths = inputs["verdicts"] if isinstance(inputs["verdicts"], (list, tuple)) else [inputs["verdicts"]]
    groups: dict[tuple[str, str], list[Verdict]] = defaultdict(list)
    for path in paths:
        for r in read_jsonl(path):
            groups[(r["verifier"], r["mode"])].append(r)
    dec_usage: dict[str, dict[str, int]] = {}
    dec_prices: dict[str, Prices | None] = {}
    dec_counts: dict[str, dict[str, int]] = {}
    for path in inputs.get("decompositions") or []:
        info = read_json(path)
        dec_usage[info["mode"]] = info["usage"]
        dec_counts[info["mode"]] = {"failed": int(info.get("failed") or 0), "unparsed": int(info.get("unparsed") or 0)}
        dec_prices[info["mode"]] = _prices_of(info)
    ver_prices = {info["verifier"]: _prices_of(info) for info in map(read_json, inputs.get("verifications") or [])}
    arms: dict[tuple[str, str], Arm] = {}
    for (verifier, mode), recs in sorted(groups.items()):
        arm = arms[(verifier, mode)] = _arm(recs, answers, options, report)
        eff = [effective_verdict(r, options.tau) for r in recs]
        answered = [e for r, e in zip(recs, eff) if not r.get("failed")]
        cost = analysis.cost_summary(dec_usage.get(mode, {}), _usage_of(recs), dec_prices.get(mode), ver_prices.get(verifier))
        arm["scores"] = {"verifier": verifier, "mode": mode, **binary_scores(arm["gold"], arm["pred"], "drop"),
                         "ff1_interval": analysis.ff1_interval(arm["gold"], arm["pred"], arm["clusters"], options.n_resamples,
                                                               options.seed, 1 - options.ci_level) if arm["gold"] else None,
                         "n_units": len(recs),
                         "unit_coverage": sum(e is not None for e in answered) / len(answered) if answered else 0.0,
                         "n_failed": len(recs) - len(answered),
                         "n_unparsed": sum(bool(r.get("unparsed") or r.get("malformed")) for r in recs),
                         "decompose": dec_counts.get(mode, {"failed": 0, "unparsed": 0}),
                         "verdicts": dict(Counter(str(e) for e in eff)), "cost": cost,
                         "rounds_mean": sum(r.get("rounds", 0) for r in recs) / len(recs)}
        if "nei_pred" in arm:
            arm["scores"]["nei_predictions"] = nei_counts(arm["nei_pred"])
    for (verifier, mode), arm in sorted(arms.items()):
        base = arms.get((verifier, options.baseline_mode))
        if base is not None and mode != options.baseline_mode and base["gold"] and arm["gold"]:
            arm["scores"]["vs_baseline"] = _compare(base, arm, options)
    units_by_mode: dict[str, list[Verdict]] = {}
    for (verifier, mode), recs in groups.items():
        units_by_mode.setdefault(mode, recs)
    result = {
        "options": options.as_dict(),
        "n_answers": len(answers), "n_answers_gold_false": sum(a.get("label") == FALSE for a in answers.values()),
        "n_answers_nei": len(_nei_ids(answers)),
        "arms": {f"{v}/{m}": arm["scores"] for (v, m), arm in sorted(arms.items())},
        "per_pattern": _per_pattern(groups, options),
        "boundary_fidelity": _fidelity(answers, units_by_mode, options),
        "patterns": {m: dict(sorted(Counter(str(u["pattern"]) for u in us).items())) for m, us in sorted(units_by_mode.items())},
    }
    write_json(outputs["scores"], result)
    if outputs.get("report"):
        report.write(outputs["report"])
    return result


# -------------------------------------------------------------------------------------------- table


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def table_rows(scores: Mapping[str, JSONValue]) -> list[dict[str, JSONValue]]:
    """One row per verifier and mode (in :data:`MODES` order) of a ``score`` result: units and coverage,
    FF1 with its interval, Δ vs the baseline mode with its interval, the units whose verification call
    failed (not scored) or whose answer was unreadable (``unparsed``; FALSE or abstained as the verifier's
    option says), the answers whose decomposition call failed (no units) or stayed malformed, calls,
    tokens and dollars."""
    base = scores["options"]["baseline_mode"]
    rows = []
    for s in sorted(scores["arms"].values(), key=lambda a: (a["verifier"], MODES.index(a["mode"]))):
        ci = s.get("ff1_interval") or {}
        cmp = s.get("vs_baseline") or {}
        total = s["cost"]["total"]
        dec = s.get("decompose") or {}
        rows.append({"verifier": s["verifier"], "mode": s["mode"], "units": s["n_units"], "unit_coverage": _r(s["unit_coverage"]),
                     "failed": s.get("n_failed", 0), "unparsed": s.get("n_unparsed", 0),
                     "decompose_failed": dec.get("failed", 0), "decompose_unparsed": dec.get("unparsed", 0),
                     "scored": s["n_scored"], "coverage": _r(s["coverage"]), "FF1": _r(s["ff1"]),
                     "FF1_ci_low": _r(ci.get("ci_low")), "FF1_ci_high": _r(ci.get("ci_high")),
                     f"delta_vs_{base}": _r(cmp.get("diff")), "delta_ci_low": _r(cmp.get("ci_low")),
                     "delta_ci_high": _r(cmp.get("ci_high")), "p_gt_0": _r(cmp.get("p_gt_0")),
                     "verify_calls": s["cost"]["verify"]["calls"], "decompose_calls": s["cost"]["decompose"]["calls"],
                     "total_calls": total["calls"], "tokens": total["prompt_tokens"] + total["completion_tokens"],
                     "cost_usd": total["cost_usd"]})
    return rows


def _fidelity_caption(fidelity: Mapping[str, JSONValue]) -> str:
    """'. Boundary fidelity vs the human snippets: group sentence-set F1 0.875, cosine 0.952, ROUGE-L 0.841
    (8 snippets); …' — empty without automatic snippets on a bench with human ones."""
    parts = []
    for mode in ("group", "direct"):
        f = fidelity.get(mode)
        if f:
            extra = "".join(f", {name} {f[key]:.3f}" for key, name in (("cosine", "cosine"), ("rouge_l", "ROUGE-L")) if f.get(key) is not None)
            parts.append(f"{mode} sentence-set F1 {f['sentence_set_f1']:.3f}{extra} ({f['n_auto_snippets']} snippets)")
    return f". Boundary fidelity vs the human snippets: {'; '.join(parts)}" if parts else ""


def _clusters_caption(o: Mapping[str, JSONValue]) -> str:
    """The unit-level Δ interval's clusters when they are the repository's (the default says nothing)."""
    if o["level"] == "unit" and o.get("cluster_bootstrap") == "sorted_intersection":
        return ", resampling the answers both arms hold, sorted; Δ = 0 when an arm draws no unit (as the MedSNIP repository)"
    return ""


def _nei_caption(scores: Mapping[str, JSONValue]) -> str:
    """'. 3 NOT ENOUGH INFO claims (not scored) predicted TRUE / FALSE: v/atoms 1 / 2, …' — empty without
    such claims (the prepare step leaves HealthFC's out)."""
    n = scores.get("n_answers_nei") or 0
    if not n:
        return ""
    parts = [f"{name} {a['nei_predictions']['n_pred_true']} / {a['nei_predictions']['n_pred_false']}"
             for name, a in sorted(scores["arms"].items(), key=lambda kv: (kv[1]["verifier"], MODES.index(kv[1]["mode"])))
             if a.get("nei_predictions")]
    return f". {n} NOT ENOUGH INFO claims (not scored) predicted TRUE / FALSE: {', '.join(parts)}"


def _failed_caption(rows: Sequence[Mapping[str, JSONValue]]) -> str:
    """'. Failed calls (allowed by max_failed_share): 2 units not verified, 1 answer not decomposed, not scored' —
    empty when no call failed."""
    units, answers = sum(r["failed"] for r in rows), max((r["decompose_failed"] for r in rows), default=0)
    if not units and not answers:
        return ""
    return (f". Failed calls (allowed by max_failed_share), not scored: {units} units not verified"
            f"{f', and answers not decomposed in some modes (column decompose_failed)' if answers else ''}")


def table(inputs: StepFiles, outputs: StepFiles, options: TableOptions) -> list[dict[str, JSONValue]]:
    """The atoms-vs-snippets table of one dataset as CSV, Markdown and LaTeX (outputs on one stem)."""
    stem = table_stem(outputs)
    scores = read_json(inputs["scores"])
    o = scores["options"]
    rows = table_rows(scores)
    level = (f"answer level, units aggregated by {o['aggregation']}" if o["level"] == "answer"
             else "unit level, no aggregation")
    caption = (f"MedSNIP on {options.title} ({scores['n_answers']} answers; {level}): FF1 of each verifier and mode with its "
               f"{o['ci_level']:.0%} bootstrap interval, and Δ FF1 vs {o['baseline_mode']} (paired bootstrap, "
               f"{o['n_resamples']} resamples, seed {o['seed']}{_clusters_caption(o)}); retrieval verdicts count at confidence ≥ τ = {o['tau']}"
               + _fidelity_caption(scores.get("boundary_fidelity") or {}) + _nei_caption(scores) + _failed_caption(rows))
    write_table(pd.DataFrame(rows), stem, caption=caption)
    return rows
