"""MedSNIP's scoring of verdicts (the ``score`` step): every (verifier, mode) *arm* at the scoring level, Δ vs the
baseline mode, the NEI claims' predictions, per-pattern analysis, boundary fidelity, and the τ sweep of MedSNIP
Table 6. A unit whose call failed is left out of the scores (not an abstention), counted in the report."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from medfc.common.jsontypes import JSONValue
from medfc.common.report import SkipReport
from medfc.llm.base import Prices
from medfc.medsnip import analysis
from medfc.medsnip.decompose import answer_sentences, human_units
from medfc.medsnip.options import ANSWER_SOURCES, MODES, ScoreOptions
from medfc.medsnip.records import Answer, UnitFields, Verdict, usage_total
from medfc.scoring.medsnip import FALSE, Bootstrap, aggregate, binary_scores, clustered_paired_bootstrap, nei_counts, paired_bootstrap

VerdictGroups = dict[tuple[str, str], list[Verdict]]
# one (verifier, mode) arm at the scoring level (:func:`_arm`): gold, pred and clusters, the NEI claims' predictions
# (nei_pred, HealthFC), and its scores once computed
Arm = dict[str, object]


def group_verdicts(records: Iterable[Verdict]) -> VerdictGroups:
    """The verdict records by (verifier, mode), in the order read (the first verifier of a mode gives that mode's
    units to the fidelity and the patterns)."""
    groups: VerdictGroups = defaultdict(list)
    for r in records:
        groups[(r["verifier"], r["mode"])].append(r)
    return groups


def effective_verdict(v: Verdict, tau: float) -> str | None:
    """The unit's verdict after the τ gate of the retrieval verifier (None = not addressed or failed)."""
    if v.get("failed") or v.get("verdict") is None or v.get("abstained"):
        return None
    if v.get("gated"):
        conf = v.get("confidence")
        if v.get("cap_hit") or conf is None or conf < tau:
            return None
    return v["verdict"]


def _unit_gold(mode: str, recs: Sequence[Verdict], answers: Mapping[str, Answer], opts: ScoreOptions) -> list[str | None]:
    """The gold of each unit: a human unit's label, the projected label of an automatic one (None without snippets)."""
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
    """Gold, predictions and clusters of one (verifier, mode) arm at the scoring level."""
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
        return {"gold": [gold[i] for i in keep], "pred": [eff[i] for i in keep], "clusters": [recs[i]["answer_id"] for i in keep]}
    per_answer: dict[str, list[str | None]] = defaultdict(list)
    for r, e in zip(recs, eff):
        if not r.get("failed"):
            per_answer[r["answer_id"]].append(e)
    ids = [aid for aid, a in answers.items() if a.get("label") is not None]
    out: Arm = {"gold": [answers[aid]["label"] for aid in ids],
                "pred": [aggregate(per_answer.get(aid, []), opts.aggregation, opts.threshold_k) for aid in ids], "clusters": ids}
    if any(_unlabelled_nei(a) for a in answers.values()):
        out["nei_pred"] = [aggregate(per_answer.get(aid, []), opts.aggregation, opts.threshold_k) for aid in _nei_ids(answers)]
    return out


def _unlabelled_nei(answer: Answer) -> bool:
    """Whether ``answer``'s source takes an answer without a label as a NOT ENOUGH INFO claim (HealthFC's)."""
    source = ANSWER_SOURCES.get(str(answer.get("source")))
    return source is not None and source.unlabelled_nei


def _nei_ids(answers: Mapping[str, Answer]) -> list[str]:
    """The NOT ENOUGH INFO claims among the answers (no label, from such a source): verified, never scored."""
    return [aid for aid, a in answers.items() if a.get("label") is None and _unlabelled_nei(a)]


def _fidelity(answers: Mapping[str, Answer], units_by_mode: Mapping[str, Sequence[UnitFields]],
              options: ScoreOptions) -> dict[str, dict[str, float | int | None]]:
    """Boundary fidelity of every automatic snippet mode against the bench's human snippets: sentence-set F1, ARI,
    and the best pairs' texts compared by embedding cosine and ROUGE-L."""
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
            matched = analysis.best_human_pairs([u["source_sentences"] for u in auto],
                                                [h["source_sentences"] for h in human])
            best += [f for _, f in matched]
            pairs += [(u.get("text") or "", human[i].get("text") or "")
                      for u, (i, _) in zip(auto, matched) if i is not None]
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
    """Per verifier of both the human snippets and atoms: each pattern's FF1 of the snippets against their atoms'."""
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
    """The prices a decompose or verify step's info recorded (None: not priced)."""
    p = info.get("prices")
    return Prices(p["input_per_mtok"], p["output_per_mtok"]) if p else None


def _compare(base: Arm, arm: Arm, opts: ScoreOptions) -> Bootstrap:
    """Paired bootstrap of Δ = FF1(arm) − FF1(base): over answers, or over whole answers' units (unit level)."""
    if opts.level == "answer":
        return paired_bootstrap(arm["gold"], base["pred"], arm["pred"], n_resamples=opts.n_resamples, seed=opts.seed, alpha=1 - opts.ci_level)
    return clustered_paired_bootstrap((base["gold"], base["pred"], base["clusters"]), (arm["gold"], arm["pred"], arm["clusters"]),
                                      n_resamples=opts.n_resamples, seed=opts.seed, alpha=1 - opts.ci_level, clusters=opts.cluster_bootstrap)


def evaluate(answers: Mapping[str, Answer], groups: Mapping[tuple[str, str], Sequence[Verdict]], decompositions: Iterable[Mapping[str, JSONValue]],
             verifications: Iterable[Mapping[str, JSONValue]], options: ScoreOptions, report: SkipReport) -> dict[str, object]:
    """The ``score`` step's result from the answers, the verdicts by (verifier, mode) and the decompose and verify
    infos: every arm's scores and Δ vs the baseline mode, the per-pattern analysis, boundary fidelity and patterns."""
    decs = {info["mode"]: info for info in decompositions}
    ver_prices = {info["verifier"]: _prices_of(info) for info in verifications}
    arms: dict[tuple[str, str], Arm] = {}
    for (verifier, mode), recs in sorted(groups.items()):
        arm = arms[(verifier, mode)] = _arm(recs, answers, options, report)
        eff = [effective_verdict(r, options.tau) for r in recs]
        answered = [e for r, e in zip(recs, eff) if not r.get("failed")]
        dec = decs.get(mode, {})
        cost = analysis.cost_summary(dec.get("usage", {}), usage_total(r.get("usage") or {} for r in recs),
                                     _prices_of(dec), ver_prices.get(verifier))
        arm["scores"] = {"verifier": verifier, "mode": mode, **binary_scores(arm["gold"], arm["pred"], "drop"),
                         "ff1_interval": analysis.ff1_interval(arm["gold"], arm["pred"], arm["clusters"], options.n_resamples,
                                                               options.seed, 1 - options.ci_level) if arm["gold"] else None,
                         "n_units": len(recs),
                         "unit_coverage": sum(e is not None for e in answered) / len(answered) if answered else 0.0,
                         "n_failed": len(recs) - len(answered),
                         "n_unparsed": sum(bool(r.get("unparsed") or r.get("malformed")) for r in recs),
                         "decompose": {k: int(dec.get(k) or 0) for k in ("failed", "unparsed")},
                         "verdicts": dict(Counter(str(e) for e in eff)), "cost": cost,
                         "rounds_mean": sum(r.get("rounds", 0) for r in recs) / len(recs)}
        if "nei_pred" in arm:
            arm["scores"]["nei_predictions"] = nei_counts(arm["nei_pred"])
    for (verifier, mode), arm in sorted(arms.items()):
        base = arms.get((verifier, options.baseline_mode))
        if base is not None and mode != options.baseline_mode and base["gold"] and arm["gold"]:
            arm["scores"]["vs_baseline"] = _compare(base, arm, options)
    units_by_mode: dict[str, Sequence[Verdict]] = {}
    for (_, mode), recs in groups.items():
        units_by_mode.setdefault(mode, recs)  # each mode's first verifier's
    return {"options": options.as_dict(), "n_answers": len(answers), "n_answers_gold_false": sum(a.get("label") == FALSE for a in answers.values()),
            "n_answers_nei": len(_nei_ids(answers)), "arms": {f"{v}/{m}": arm["scores"] for (v, m), arm in sorted(arms.items())},
            "per_pattern": _per_pattern(groups, options), "boundary_fidelity": _fidelity(answers, units_by_mode, options),
            "patterns": {m: dict(sorted(Counter(str(u["pattern"]) for u in us).items())) for m, us in sorted(units_by_mode.items())}}


def tau_sweep(answers: Mapping[str, Answer], groups: Mapping[tuple[str, str], Sequence[Verdict]], options: ScoreOptions,
              taus: Iterable[float]) -> list[dict[str, object]]:
    """Coverage and FF1 of every arm as τ varies over ``taus`` (and ``options.tau``, ascending): a gated arm (the
    retrieval verifier's) once per τ, then each ungated arm once (``tau`` None), from the verdicts as they are."""
    grid = sorted({*map(float, taus), float(options.tau)})
    rows = []
    for (verifier, mode), recs in sorted(groups.items(), key=lambda kv: (not any(r.get("gated") for r in kv[1]), kv[0][0], MODES.index(kv[0][1]))):
        gated = any(r.get("gated") for r in recs)
        for tau in (grid if gated else [None]):
            opts = dataclasses.replace(options, tau=tau) if tau is not None else options
            arm = _arm(recs, answers, opts, SkipReport("medsnip-tau-sweep"))
            s = binary_scores(arm["gold"], arm["pred"], "drop")
            rows.append({"verifier": verifier, "mode": mode, "tau": tau, "configured": tau == options.tau, "n": s["n"],
                         "scored": s["n_scored"], "coverage": s["coverage"], "ff1": s["ff1"]})
    return rows
