"""MedSNIP's atoms-vs-snippets table (the ``table`` step's library): its rows and its caption, from a ``score`` result.

* :func:`table_rows` — one row per verifier and mode: units and coverage, FF1 with its interval, Δ vs the
  baseline mode with its interval, failed and unparsed units and decompositions, calls, tokens and dollars.
* :func:`table_latex` — the rows as MedSNIP's Table 2 sets them: FF1 of each verifier and mode with its interval and
  Δ FF1 vs the baseline mode with its interval, three decimals; calls, tokens and failures stay in the CSV.
* :func:`table_caption` — what the rows are (dataset, level, interval, bootstrap, τ), the boundary fidelity,
  the NOT ENOUGH INFO claims' predictions and the failed calls when there are any.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from medfc.common.jsontypes import JSONValue
from medfc.common.latex import Block, Column, LatexTable, Tex
from medfc.medsnip.options import MODES


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


def table_caption(scores: Mapping[str, JSONValue], rows: Sequence[Mapping[str, JSONValue]], title: str) -> str:
    """The caption of the table of ``rows`` (:func:`table_rows` of ``scores``) on the dataset ``title``: its
    answers and level, the interval and the bootstrap of Δ, τ, then the boundary fidelity, the NOT ENOUGH INFO
    claims and the failed calls where there are any."""
    o = scores["options"]
    level = (f"answer level, units aggregated by {o['aggregation']}" if o["level"] == "answer"
             else "unit level, no aggregation")
    return (f"MedSNIP on {title} ({scores['n_answers']} answers; {level}): FF1 of each verifier and mode with its "
            f"{o['ci_level']:.0%} bootstrap interval, and Δ FF1 vs {o['baseline_mode']} (paired bootstrap, "
            f"{o['n_resamples']} resamples, seed {o['seed']}{_clusters_caption(o)}); retrieval verdicts count at confidence ≥ τ = {o['tau']}"
            + _fidelity_caption(scores.get("boundary_fidelity") or {}) + _nei_caption(scores) + _failed_caption(rows))


def _interval(low: object, high: object) -> Tex | None:
    if low is None or high is None:
        return None
    text = f"[{float(low):.3f}, {float(high):.3f}]"  # type: ignore[arg-type]
    return Tex(text.replace("-", "$-$"), len(text))


def table_latex(scores: Mapping[str, JSONValue], rows: Sequence[Mapping[str, JSONValue]], caption: str) -> LatexTable:
    """MedSNIP's Table 2 layout of :func:`table_rows`: Verifier | Mode | Units | FF1 [interval] | Δ FF1 vs the baseline
    mode [interval] | P(Δ > 0) | verifier calls, the verifier shown once for its modes."""
    base = scores["options"]["baseline_mode"]
    body = [[r["verifier"], r["mode"], r["units"], r["FF1"], _interval(r["FF1_ci_low"], r["FF1_ci_high"]),
             r[f"delta_vs_{base}"], _interval(r["delta_ci_low"], r["delta_ci_high"]), r["p_gt_0"], r["verify_calls"]]
            for r in rows]
    level = f"{float(scores['options']['ci_level']):.0%}"
    columns = [Column("Verifier", align="l"), Column("Mode", align="l"), Column("Units", fmt="int"),
               Column("FF1", group="FF1", fmt="dec3"), Column(f"{level} CI", group="FF1", align="l"),
               Column("Δ", group=f"Δ FF1 vs {base}", fmt="dec3"), Column(f"{level} CI", group=f"Δ FF1 vs {base}", align="l"),
               Column("P(Δ>0)", group=f"Δ FF1 vs {base}", fmt="dec3"), Column("Calls", fmt="int")]
    return LatexTable(caption, "tab:medsnip-table2", columns, [Block(body, "Ours")],
                      notes=["Calls: verification calls. Coverage, tokens, dollars and failed or unparsed calls: the table's CSV."],
                      merge_first=True)
