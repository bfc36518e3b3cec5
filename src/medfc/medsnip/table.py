"""MedSNIP's tables: the atoms-vs-snippets table of a ``score`` result (MedSNIP's Table 2 with the paper's rows),
Table 3 (:func:`structure_table`), Table 6 (:func:`tau_table`); and Fig. 21, its points (:func:`calls_points`)
and its drawing (:func:`calls_figure`: at a column's printed width with no text under 7 pt, as PNG and PDF;
matplotlib is imported only when the figure is drawn)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from medfc.common.jsontypes import JSONValue
from medfc.common.latex import Block, Column, LatexTable, Tex
from medfc.medsnip.analysis import SNIPPET_MODES
from medfc.medsnip.options import MODES


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _arm_order(arm: Mapping[str, JSONValue]) -> tuple[str, int]:
    return arm["verifier"], MODES.index(arm["mode"])


def _change(value: float, base: float) -> float | None:
    """How much ``value`` is above ``base``, in percent of it (None without a base)."""
    return round(100.0 * (value / base - 1.0), 1) if base else None


def _saved(value: float, base: float) -> float | None:
    """How much ``value`` is below ``base``, in percent of it (None without a base)."""
    return round(100.0 * (1.0 - value / base), 1) if base else None


# the columns a paper's row fills (the others stay empty) from its keys
PAPER_KEYS = {"units": "units", "scored": "scored", "FF1": "ff1", "verify_calls_saved_pct": "verify_saving", "total_calls_change_pct": "calls_change"}


def table_rows(scores: Mapping[str, JSONValue]) -> list[dict[str, JSONValue]]:
    """One row per verifier and mode of a ``score`` result, with the calls saved against the same verifier's baseline
    mode in percent (MedSNIP's cost accounting)."""
    base = scores["options"]["baseline_mode"]
    baseline = {a["verifier"]: a["cost"] for a in scores["arms"].values() if a["mode"] == base}
    rows = []
    for s in sorted(scores["arms"].values(), key=_arm_order):
        ci = s.get("ff1_interval") or {}
        cmp = s.get("vs_baseline") or {}
        total = s["cost"]["total"]
        dec = s.get("decompose") or {}
        own = baseline.get(s["verifier"]) if s["mode"] != base else None
        rows.append({"source": "ours", "verifier": s["verifier"], "mode": s["mode"], "units": s["n_units"], "unit_coverage": _r(s["unit_coverage"]),
                     "failed": s.get("n_failed", 0), "unparsed": s.get("n_unparsed", 0), "decompose_failed": dec.get("failed", 0),
                     "decompose_unparsed": dec.get("unparsed", 0), "scored": s["n_scored"], "coverage": _r(s["coverage"]), "FF1": _r(s["ff1"]),
                     "FF1_ci_low": _r(ci.get("ci_low")), "FF1_ci_high": _r(ci.get("ci_high")), f"delta_vs_{base}": _r(cmp.get("diff")),
                     "delta_ci_low": _r(cmp.get("ci_low")), "delta_ci_high": _r(cmp.get("ci_high")), "p_gt_0": _r(cmp.get("p_gt_0")),
                     "verify_calls": s["cost"]["verify"]["calls"], "decompose_calls": s["cost"]["decompose"]["calls"], "total_calls": total["calls"],
                     "verify_calls_saved_pct": None if own is None else _saved(s["cost"]["verify"]["calls"], own["verify"]["calls"]),
                     "total_calls_change_pct": None if own is None else _change(total["calls"], own["total"]["calls"]),
                     "tokens": total["prompt_tokens"] + total["completion_tokens"], "cost_usd": total["cost_usd"]})
    return rows


def paper_rows(papers: Mapping[str, JSONValue], dataset: str, modes: Sequence[str]) -> list[dict[str, JSONValue]]:
    """The paper's rows of ``dataset`` (an answer source) in ``modes``, with the columns of :func:`table_rows` (those
    it does not state empty)."""
    ms = papers.get("medsnip") or {}
    reported = (ms.get("datasets") or {}).get(dataset) or {}
    return [{"source": f"paper ({ms['cite']})", "verifier": ms["verifier"], "mode": mode,
             **{col: reported[mode].get(key) for col, key in PAPER_KEYS.items()}}
            for mode in sorted((m for m in reported if m in modes), key=MODES.index)]


def _fidelity_caption(fidelity: Mapping[str, JSONValue]) -> str:
    """'. Boundary fidelity vs the human snippets: group sentence-set F1 0.875, cosine 0.952, …' or empty."""
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
    """'. 3 NOT ENOUGH INFO claims (not scored) predicted TRUE / FALSE: v/atoms 1 / 2, …' or empty."""
    n = scores.get("n_answers_nei") or 0
    if not n:
        return ""
    parts = [f"{name} {a['nei_predictions']['n_pred_true']} / {a['nei_predictions']['n_pred_false']}"
             for name, a in sorted(scores["arms"].items(), key=lambda kv: _arm_order(kv[1]))
             if a.get("nei_predictions")]
    return f". {n} NOT ENOUGH INFO claims (not scored) predicted TRUE / FALSE: {', '.join(parts)}"


def _failed_caption(rows: Sequence[Mapping[str, JSONValue]]) -> str:
    """'. Failed calls (allowed by max_failed_share), not scored: 2 units not verified…' or empty."""
    units, answers = sum(r["failed"] for r in rows), max((r["decompose_failed"] for r in rows), default=0)
    if not units and not answers:
        return ""
    return (f". Failed calls (allowed by max_failed_share), not scored: {units} units not verified"
            f"{f', and answers not decomposed in some modes (column decompose_failed)' if answers else ''}")


def _paper_caption(paper: Sequence[Mapping[str, JSONValue]], base: str) -> str:
    """'. Below ours, the paper's rows (Iqbal et al. 2026; GPT-5.4 (claim-only)): …' — empty without paper rows."""
    if not paper:
        return ""
    return (f". Below ours, the rows of the {paper[0]['source']} with {paper[0]['verifier']} as verifier: its units, "
            f"FF1 and the calls its modes save against {base}, as it states them")


def table_caption(scores: Mapping[str, JSONValue], rows: Sequence[Mapping[str, JSONValue]], title: str,
                  paper: Sequence[Mapping[str, JSONValue]] = ()) -> str:
    """The caption of the table of ``rows`` on the dataset ``title``."""
    o = scores["options"]
    level = (f"answer level, units aggregated by {o['aggregation']}" if o["level"] == "answer" else "unit level, no aggregation")
    return (f"MedSNIP on {title} ({scores['n_answers']} answers; {level}): FF1 of each verifier and mode with its "
            f"{o['ci_level']:.0%} bootstrap interval, and Δ FF1 vs {o['baseline_mode']} (paired bootstrap, "
            f"{o['n_resamples']} resamples, seed {o['seed']}{_clusters_caption(o)}); retrieval verdicts count at confidence ≥ τ = {o['tau']}"
            + _fidelity_caption(scores.get("boundary_fidelity") or {}) + _nei_caption(scores) + _failed_caption(rows)
            + _paper_caption(paper, o["baseline_mode"]))


def _interval(low: object, high: object) -> Tex | None:
    if low is None or high is None:
        return None
    text = f"[{float(low):.3f}, {float(high):.3f}]"  # type: ignore[arg-type]
    return Tex(text.replace("-", "$-$"), len(text))


def table_latex(scores: Mapping[str, JSONValue], rows: Sequence[Mapping[str, JSONValue]], caption: str,
                paper: Sequence[Mapping[str, JSONValue]] = (), paper_title: str = "") -> LatexTable:
    """MedSNIP's Table 2 layout of :func:`table_rows`, the paper's rows (units and FF1) in a block of their own."""
    base = scores["options"]["baseline_mode"]
    body = [[r["verifier"], r["mode"], r["units"], r["FF1"], _interval(r["FF1_ci_low"], r["FF1_ci_high"]),
             r[f"delta_vs_{base}"], _interval(r["delta_ci_low"], r["delta_ci_high"]), r["p_gt_0"], r["verify_calls"]]
            for r in rows]
    reported = [[r["verifier"], r["mode"], r["units"], r["FF1"], None, None, None, None, None] for r in paper]
    level = f"{float(scores['options']['ci_level']):.0%}"
    columns = [Column("Verifier", align="l"), Column("Mode", align="l"), Column("Units", fmt="int"),
               Column("FF1", group="FF1", fmt="dec3"), Column(f"{level} CI", group="FF1", align="l"),
               Column("Δ", group=f"Δ FF1 vs {base}", fmt="dec3"), Column(f"{level} CI", group=f"Δ FF1 vs {base}", align="l"),
               Column("P(Δ>0)", group=f"Δ FF1 vs {base}", fmt="dec3"), Column("Calls", fmt="int")]
    blocks = [Block(body, "Ours")] + ([Block(reported, paper_title)] if reported else [])
    return LatexTable(caption, "tab:medsnip-table2", columns, blocks,
                      notes=["Calls: verification calls. Coverage, the calls saved against the baseline mode, tokens, dollars and failed "
                             "or unparsed calls: the table's CSV."],
                      merge_first=True)


MODE_NAMES = {m: m.replace("_", " ") for m in MODES}


def structure_table(stats: Sequence[tuple[str, Mapping[str, float | int | None]]]) -> tuple[list[dict[str, object]], str, LatexTable]:
    """MedSNIP Table 3 from each dataset's (title, structure stats): rows, caption and LaTeX."""
    rows = [{"dataset": title, **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in st.items()}} for title, st in stats]
    modes = [m for m in MODES if any(st.get(f"units_{m}") is not None for _, st in stats)]
    snippet_modes = [m for m in SNIPPET_MODES if any(st.get(f"atoms_per_snippet_{m}") is not None for _, st in stats)]
    columns = [Column("Dataset", align="l"), Column("n", "Answers", fmt="int"), Column("words", "Answers", fmt="dec1"),
               Column("sent.", "Answers", fmt="dec1"), Column("1-sent. %", "Answers", fmt="pct1"),
               *[Column(MODE_NAMES[m], "Units per answer", fmt="dec1") for m in modes],
               *[Column(MODE_NAMES[m], "Atoms per snippet", fmt="dec1") for m in snippet_modes]]
    body = [[title, st["answers"], st["words_per_answer"], st["sentences_per_answer"], st["single_sentence_share"],
             *[st.get(f"units_{m}") for m in modes], *[st.get(f"atoms_per_snippet_{m}") for m in snippet_modes]] for title, st in stats]
    caption = ("MedSNIP Table 3: the structure of each dataset's answers and units, as this run decomposed them. Answers: how many, "
               "their mean words (whitespace tokens) and sentences, and the share of single-sentence answers; units per answer "
               "in each decomposition mode; atoms per snippet: the mean number of atoms a snippet groups (atomize-then-group, "
               "and the bench's own human snippets). Empty: the mode did not run on that dataset.")
    return rows, caption, LatexTable(caption, "tab:medsnip-table3", columns, [Block(body)])


def tau_table(sweep: Sequence[Mapping[str, object]], title: str, tau: float, level: str) -> tuple[list[dict[str, object]], str, LatexTable]:
    """MedSNIP Table 6 of one dataset from :func:`~medfc.medsnip.evaluate.tau_sweep`: rows, caption and LaTeX."""
    rows = [{**r, "coverage": round(float(r["coverage"]), 4), "ff1": round(float(r["ff1"]), 4)} for r in sweep]
    gated = [r for r in sweep if r["tau"] is not None]
    single = [r for r in sweep if r["tau"] is None]

    def cells(r: Mapping[str, object], tau: object) -> list[object]:
        return [r["verifier"], MODE_NAMES.get(str(r["mode"]), r["mode"]), tau, r["scored"], r["coverage"], r["ff1"]]

    blocks = []
    if gated:
        blocks.append(Block([cells(r, Tex(f"{r['tau']:.2f}" + ("$^*$" if r["configured"] else ""), 5)) for r in gated],
                            "Retrieval verifier: a verdict counts at confidence ≥ τ"))
    if single:
        blocks.append(Block([cells(r, "–") for r in single], "Single-call verifiers (no τ)"))
    columns = [Column("Verifier", align="l"), Column("Mode", align="l"), Column("τ", align="r"), Column("Scored", fmt="int"),
               Column("Coverage %", fmt="pct1"), Column("FF1", fmt="dec3")]
    unit = "answers" if level == "answer" else "units"
    caption = (f"MedSNIP Table 6 on {title}: the abstention threshold τ of the retrieval verifier swept against coverage (the share "
               f"of gold-labelled {unit} with a TRUE or FALSE verdict) and false-class F1 (FF1, over the {unit} it scores), from the "
               f"verdicts already made (no new LLM call). * the configured τ = {tau:g} of the run's other tables. The single-call "
               f"verifiers, which τ does not gate, once each for comparison."
               + ("" if gated else " No retrieval verifier ran in this run: only the single-call rows."))
    return rows, caption, LatexTable(caption, "tab:medsnip-table6", columns, blocks)


def calls_points(scores: Mapping[str, JSONValue]) -> list[dict[str, object]]:
    """One point per arm of a ``score`` result for MedSNIP Fig. 21, in the table's order."""
    return [{"verifier": s["verifier"], "mode": s["mode"], "verify_calls": s["cost"]["verify"]["calls"],
             "total_calls": s["cost"]["total"]["calls"], "ff1": round(float(s["ff1"]), 4), "scored": s["n_scored"]}
            for s in sorted(scores["arms"].values(), key=_arm_order)]


WIDTH_IN, HEIGHT_IN = 3.3, 2.6  # a column of a two-column paper
FONT_PT = 7.5
MODE_COLOURS = {"atoms": "#4c72b0", "group": "#dd8452", "direct": "#55a868", "human_atoms": "#8172b3",
                "human_snippets": "#c44e52"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def calls_figure(points: Sequence[Mapping[str, object]], title: str, stem: str | os.PathLike) -> list[Path]:
    """Verifier calls (x) against FF1 (y) of each arm: colour by mode, marker by verifier, a verifier's modes joined
    by a line; points that coincide stay visible as rings (each later mode drawn smaller on top)."""
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from medfc.common.plots import save_figure

    with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, "font.size": FONT_PT}):  # TrueType in the PDF
        fig, ax = plt.subplots(figsize=(WIDTH_IN, HEIGHT_IN))
        verifiers = list(dict.fromkeys(str(p["verifier"]) for p in points))
        for k, verifier in enumerate(verifiers):
            mine = [p for p in points if p["verifier"] == verifier]
            ax.plot([p["verify_calls"] for p in mine], [p["ff1"] for p in mine], color="0.75", linewidth=0.6, zorder=1)
            for j, p in enumerate(mine):
                ax.scatter(p["verify_calls"], p["ff1"], s=max(46 - 8 * j, 8), marker=MARKERS[k % len(MARKERS)],
                           zorder=2 + j, color=MODE_COLOURS.get(str(p["mode"]), "0.3"), edgecolors="black",
                           linewidths=0.4)
        ax.set_xlabel("verifier calls", fontsize=FONT_PT)
        ax.set_ylabel("false-class F1 (FF1)", fontsize=FONT_PT)
        ax.set_title(f"MedSNIP on {title}", fontsize=FONT_PT + 0.5)
        ax.set_ylim(-0.03, 1.03)
        ax.tick_params(labelsize=FONT_PT)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # calls are counts
        ax.grid(True, linewidth=0.3, color="0.85")
        modes = list(dict.fromkeys(str(p["mode"]) for p in points))
        handles = [Line2D([], [], linestyle="", marker="o", markersize=4.5, markerfacecolor=MODE_COLOURS.get(m, "0.3"),
                          markeredgecolor="black", markeredgewidth=0.4, label=MODE_NAMES.get(m, m)) for m in modes]
        if len(verifiers) > 1:
            handles += [Line2D([], [], linestyle="", marker=MARKERS[k % len(MARKERS)], markersize=4.5, color="0.5",
                               label=v) for k, v in enumerate(verifiers)]
        ax.legend(handles=handles, fontsize=FONT_PT, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.25),
                  ncol=3, handletextpad=0.3, columnspacing=0.8)  # below the axes: the figure keeps a column's width
        fig.tight_layout()
        return save_figure(fig, stem)
