"""A declared dataset's table (``datasets.<name>``): its discriminative rows on its test split, as a tidy frame and
in the LaTeX layout of CliniFact's Table 8."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from medfc.common.io import read_json
from medfc.common.latex import Block, Column, LatexTable, marked
from medfc.tables.common import SMOKE_NOTE, Entry, ours_title, pct, stack_kept, stack_marks, stack_note

COLUMNS = ["scale", "model", "n", "accuracy", "macro P", "macro R", "macro F1", "CI low", "CI high", "note"]


def scores_table(scores: Sequence[str], entries: Sequence[Entry], dataset: str, title: str, scale: str,
                 infos: Sequence[str] = ()) -> tuple[pd.DataFrame, LatexTable]:
    """Each row's test scores; a stack that kept its best member says so."""
    kept = stack_kept(infos, scores, entries)
    marks = stack_marks(kept)
    rows, tex_rows = [], []
    for e, f in zip(entries, scores):
        s = read_json(f)
        model = str(e["model"])
        ci = (s.get("ci") or {}).get("macro_f1") or {}
        low, high = pct(ci.get("low")), pct(ci.get("high"))
        rows.append({"scale": scale, "model": model, "n": s["n"], "accuracy": pct(s["accuracy"]), "macro P": pct(s["macro_precision"]),
                     "macro R": pct(s["macro_recall"]), "macro F1": pct(s["macro_f1"]), "CI low": low, "CI high": high,
                     "note": f"kept its best member, {kept[model]}" if model in kept else ""})
        tex_rows.append([marked(model, marks[model]) if model in marks else model, pct(s["accuracy"]), pct(s["macro_precision"]),
                         pct(s["macro_recall"]), pct(s["macro_f1"]), low, high])
    columns = [Column("Model", align="l"), Column("Accuracy", fmt="dec1"), Column("P", group="Macro", fmt="dec1"),
               Column("R", group="Macro", fmt="dec1"), Column("F1", group="Macro", fmt="dec1"),
               Column("low", group="95% CI of F1", fmt="dec1"), Column("high", group="95% CI of F1", fmt="dec1")]
    n = rows[0]["n"] if rows else 0
    caption = (f"{title}: discriminative models on its test split ({n} items): accuracy, macro precision, recall and F1, and the "
               "percentile bootstrap 95% interval of macro-F1 (%).")
    notes = [f"{marks[m]}: {stack_note(m, kept[m])}" for m in marks] + ([SMOKE_NOTE] if scale == "smoke" else [])
    latex = LatexTable(caption, f"tab:{dataset}", columns, [Block(tex_rows, ours_title(scale))], notes=notes)
    return pd.DataFrame(rows, columns=COLUMNS).astype(object).fillna(""), latex
