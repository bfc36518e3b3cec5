"""CliniFact Table 8 and the significance tests between systems (Zhang et al., 2025): each a tidy frame and a LaTeX
table in the paper's layout; Table 8's companion :func:`table8_extra`; a declared dataset's table in Table 8's
layout."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
import pandas as pd

from medfc.common.io import read_json, read_jsonl
from medfc.common.latex import Block, Column, LatexTable, Tex, marked
from medfc.scoring import classification
from medfc.common.labels import CLINIFACT_LABELS
from medfc.experiments.clinifact.systems import CLINIFACT_SYSTEM_NAMES, DEFAULT_SYSTEM, clinifact_system, system_of_row
from medfc.common.jsontypes import JSONValue
from medfc.common.papers import reported_title
from medfc.tables.common import (SCALE_TITLES, SMOKE_NOTE, Entry, clinifact_name, not_run_note, ours_only, pct,
                                 stack_kept, stack_note)


T8_COLUMNS = ["source", "scale", "model", "system", "n", "accuracy", "macro P", "macro R", "macro F1", "macro F1 95% CI", "note"]
DATASET_COLUMNS = ["scale", "model", "n", "accuracy", "macro P", "macro R", "macro F1", "CI low", "CI high", "note"]


def _interval(scores: Mapping[str, JSONValue]) -> str:
    ci = (scores.get("ci") or {}).get("macro_f1")
    return f"{pct(ci['low'])}–{pct(ci['high'])}" if ci else ""


def significance(predictions: Sequence[str], entries: Sequence[Entry]) -> pd.DataFrame:
    """McNemar–Bowker between every pair of CliniFact systems on the same test pairs."""
    recs = [(e, {str(r["id"]): r for r in read_jsonl(f) if r.get("split", "test") == "test"}) for e, f in zip(entries, predictions)]
    rows = []
    for (ea, ra), (eb, rb) in itertools.combinations(recs, 2):
        ids = sorted(i for i in set(ra) & set(rb) if ra[i].get("pred_label") is not None and rb[i].get("pred_label") is not None)
        la, lb = ([str(r[i]["pred_label"]) for i in ids] for r in (ra, rb))
        mb = classification.mcnemar_bowker(la, lb, CLINIFACT_LABELS)
        gold = [str(ra[i]["label"]) for i in ids]
        rows.append({"system A": clinifact_name(ea), "system B": clinifact_name(eb), "pairs": len(ids),
                     "accuracy A": pct(classification.accuracy(gold, la)) if ids else None,
                     "accuracy B": pct(classification.accuracy(gold, lb)) if ids else None,
                     "McNemar-Bowker chi2": round(mb["statistic"], 3), "df": mb["df"], "p": mb["p_value"]})
    return pd.DataFrame(rows, columns=["system A", "system B", "pairs", "accuracy A", "accuracy B", "McNemar-Bowker chi2", "df", "p"])


# ------------------------------------------------------------------------------------------ the paper's layouts

def _kind(system: str) -> str:
    """A system's kind as Table 8 names it: discriminative, zero-shot, fine-tuned generative."""
    return {"fine_tuned": "fine-tuned generative"}.get(system, clinifact_system(system).title)


def table8(scores: Sequence[str], entries: Sequence[Entry], papers: Mapping[str, JSONValue], scale: str,
           infos: Sequence[str] = ()) -> tuple[pd.DataFrame, LatexTable]:
    """Table 8: accuracy and macro P/R/F1 on the test split per model, our rows then the paper's of the kinds we ran;
    as a frame and in the paper's layout, rows grouped by kind."""
    kept, marks = stack_kept(infos, scores, entries)
    rows = []
    for e, f in zip(entries, scores):
        s, model = read_json(f), str(e["model"])
        rows.append({"source": "ours", "scale": scale, "model": clinifact_name(e),
                     "system": e.get("system", DEFAULT_SYSTEM), "n": s["n"], "accuracy": pct(s["accuracy"]),
                     "macro P": pct(s["macro_precision"]), "macro R": pct(s["macro_recall"]),
                     "macro F1": pct(s["macro_f1"]), "macro F1 95% CI": _interval(s),
                     "note": f"kept its best member, {kept[model]}" if model in kept else ""})
    cf = papers["clinifact"]
    systems = {r["system"] for r in rows}
    for model, v in cf["table8"].items():
        system = system_of_row(model)
        if system in systems:
            rows.append({"source": f"paper ({cf['cite']})", "scale": "paper", "model": model, "system": system,
                         "accuracy": v["accuracy"], "macro F1": v["macro_f1"]})
    order = {s: i for i, s in enumerate(CLINIFACT_SYSTEM_NAMES)}
    ours = []
    for e, f in sorted(zip(entries, scores), key=lambda ef: order.get(str(ef[0].get("system", DEFAULT_SYSTEM)), 99)):
        s = read_json(f)
        name = clinifact_name(e)
        system = str(e.get("system", DEFAULT_SYSTEM))
        ours.append([_kind(system), marked(name, marks[str(e["model"])]) if str(e["model"]) in marks else name,
                     pct(s["accuracy"]), pct(s["macro_precision"]), pct(s["macro_recall"]), pct(s["macro_f1"])])
    dash = Tex("---", 1.5)
    paper = []
    for system in CLINIFACT_SYSTEM_NAMES:
        for model, v in cf["table8"].items():
            if system_of_row(model) == system and system in systems:
                paper.append([_kind(system), model, v["accuracy"] if v.get("accuracy") is not None else dash, dash, dash,
                              v["macro_f1"] if v.get("macro_f1") is not None else dash])
    columns = [Column("Kind", align="l"), Column("Model", align="l"), Column("Accuracy", fmt="dec1"),
               Column("P", group="Macro", fmt="dec1"), Column("R", group="Macro", fmt="dec1"), Column("F1", group="Macro", fmt="dec1")]
    caption = ("CliniFact Table 8: discriminative and generative language models on the test split: accuracy and macro "
               "precision, recall and F1 (%).")
    notes = []
    if paper:
        notes.append("---: a number the paper does not state (its text gives accuracy and macro-F1 only, some rows accuracy alone).")
    notes += [f"{marks[m]}: {stack_note(m, kept[m])}" for m in marks]
    notes.append(not_run_note([r[1] for r in paper], [str(e["model"]) for e in entries]))
    notes.append("Our rows' 95% intervals of macro-F1 and the pairs scored: the companion table clinifact_table8_extra.")
    if scale == "smoke":
        notes.append(SMOKE_NOTE)
    blocks = [Block(ours, SCALE_TITLES[scale]), *([Block(paper, reported_title(cf["cite"]))] if paper else [])]
    return (pd.DataFrame(rows, columns=T8_COLUMNS).astype(object).fillna(""),
            LatexTable(caption, "tab:clinifact-table8", columns, blocks, notes=[n for n in notes if n],
                       merge_first=True))


def table8_extra(scores: Sequence[str], entries: Sequence[Entry], scale: str) -> tuple[pd.DataFrame, LatexTable]:
    """Table 8's companion: the test pairs scored and the 95% interval of macro-F1 of our rows."""
    rows, tex_rows = [], []
    for e, f in zip(entries, scores):
        s = read_json(f)
        ci = (s.get("ci") or {}).get("macro_f1")
        rows.append({"scale": scale, "model": clinifact_name(e), "system": e.get("system", DEFAULT_SYSTEM), "n": s["n"],
                     "macro F1": pct(s["macro_f1"]), "CI low": pct(ci["low"]) if ci else None, "CI high": pct(ci["high"]) if ci else None})
        tex_rows.append([_kind(str(e.get("system", DEFAULT_SYSTEM))), clinifact_name(e), s["n"], pct(s["macro_f1"]),
                         pct(ci["low"]) if ci else None, pct(ci["high"]) if ci else None])
    columns = [Column("Kind", align="l"), Column("Model", align="l"), Column("Pairs", fmt="int"), Column("F1", group="Macro", fmt="dec1"),
               Column("low", group="Macro", fmt="dec1"), Column("high", group="Macro", fmt="dec1")]
    caption = ("CliniFact Table 8, companion: the test pairs scored and the percentile bootstrap 95% interval (low, high) "
               "of macro-F1 (%) over the test pairs, of our rows.")
    table = ours_only(caption, "tab:clinifact-table8-extra", columns, tex_rows, scale)
    return pd.DataFrame(rows, columns=["scale", "model", "system", "n", "macro F1", "CI low", "CI high"]), table


def significance_latex(df: pd.DataFrame, scale: str) -> LatexTable:
    """The McNemar–Bowker tests of :func:`significance` in LaTeX."""
    rows = [[r["system A"], r["system B"], r["pairs"], r["accuracy A"], r["accuracy B"], r["McNemar-Bowker chi2"], r["df"], r["p"]]
            for r in df.to_dict("records")]
    columns = [Column("System A", align="l"), Column("System B", align="l"), Column("Pairs", fmt="int"),
               Column("A", group="Accuracy (%)", fmt="dec1"), Column("B", group="Accuracy (%)", fmt="dec1"),
               Column("χ²", group="McNemar–Bowker", fmt="dec1"), Column("df", group="McNemar–Bowker", fmt="int"),
               Column("p", group="McNemar–Bowker", fmt="p3")]
    caption = ("CliniFact: McNemar–Bowker tests between every two systems on the same test pairs (the paper's test of "
               "a fine-tuned model against its zero-shot run), with each system's accuracy on those pairs.")
    return ours_only(caption, "tab:clinifact-significance", columns, rows, scale)


def dataset_table(scores: Sequence[str], entries: Sequence[Entry], dataset: str, title: str, scale: str,
                  infos: Sequence[str] = ()) -> tuple[pd.DataFrame, LatexTable]:
    """A declared dataset's table (``datasets.<name>``) in Table 8's layout: each discriminative row's scores on its
    test split; a stack that kept its best member says so."""
    kept, marks = stack_kept(infos, scores, entries)
    rows, tex_rows = [], []
    for e, f in zip(entries, scores):
        s = read_json(f)
        model = str(e["model"])
        ci = (s.get("ci") or {}).get("macro_f1") or {}
        low, high = pct(ci.get("low")), pct(ci.get("high"))
        rows.append({"scale": scale, "model": model, "n": s["n"], "accuracy": pct(s["accuracy"]),
                     "macro P": pct(s["macro_precision"]), "macro R": pct(s["macro_recall"]),
                     "macro F1": pct(s["macro_f1"]), "CI low": low, "CI high": high,
                     "note": f"kept its best member, {kept[model]}" if model in kept else ""})
        tex_rows.append([marked(model, marks[model]) if model in marks else model, pct(s["accuracy"]),
                         pct(s["macro_precision"]), pct(s["macro_recall"]), pct(s["macro_f1"]), low, high])
    columns = [Column("Model", align="l"), Column("Accuracy", fmt="dec1"), Column("P", group="Macro", fmt="dec1"),
               Column("R", group="Macro", fmt="dec1"), Column("F1", group="Macro", fmt="dec1"),
               Column("low", group="95% CI of F1", fmt="dec1"), Column("high", group="95% CI of F1", fmt="dec1")]
    n = rows[0]["n"] if rows else 0
    caption = (f"{title}: discriminative models on its test split ({n} items): accuracy, macro precision, recall and "
               "F1, and the percentile bootstrap 95% interval of macro-F1 (%).")
    notes = [f"{marks[m]}: {stack_note(m, kept[m])}" for m in marks] + ([SMOKE_NOTE] if scale == "smoke" else [])
    latex = LatexTable(caption, f"tab:{dataset}", columns, [Block(tex_rows, SCALE_TITLES[scale])], notes=notes)
    return pd.DataFrame(rows, columns=DATASET_COLUMNS).astype(object).fillna(""), latex
