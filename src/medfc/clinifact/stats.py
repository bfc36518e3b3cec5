"""CliniFact statistics: Table 6 (labels per split), Table 4 (word counts), Fig. 2 (claims per
disease class), Fig. S1 (publications per year)."""

from __future__ import annotations

import os
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from medfc.clinifact.claims import disease_classes
from medfc.clinifact.ctgov import nct_id
from medfc.common.jsontypes import JSONValue
from medfc.common.labels import CLINIFACT_CODES, CLINIFACT_RELEASE_NAMES
from medfc.common.latex import Block, Column, LatexTable


def save_figure(fig, png: str | os.PathLike) -> list[Path]:
    """:func:`medfc.common.plots.save_figure` (PNG and PDF, byte-stable metadata); tests replace it."""
    from medfc.common.plots import save_figure as save

    return save(fig, png)


def word_count_table(df: pd.DataFrame) -> pd.DataFrame:
    """Table 4: words (whitespace tokens) of claim, title and abstract: mean, std, min, max."""
    rows = []
    for name, col in (("claim", "claim"), ("title", "article_title"), ("abstract", "article_abstract")):
        words = df[col].fillna("").astype(str).str.split().str.len()
        rows.append({"text": name, "mean": round(float(words.mean()), 1) if len(words) else 0.0,
                     "std": round(float(words.std(ddof=1)), 1) if len(words) > 1 else 0.0, "min": int(words.min()) if len(words) else 0,
                     "max": int(words.max()) if len(words) else 0})
    return pd.DataFrame(rows)


RELEASE_TITLE = "Released data: Zhang et al. 2025"


def table4_latex(ours: pd.DataFrame, release: Mapping[str, Mapping[str, JSONValue]], title: str) -> LatexTable:
    """Table 4 in the paper's layout: ours (:func:`word_count_table`) under ``title``, then the released data's."""
    columns = [Column("Text field", align="l"), Column("Mean", fmt="dec1"), Column("Std", fmt="dec1"), Column("Min", fmt="int"),
               Column("Max", fmt="int")]
    rows = [[r["text"], r["mean"], r["std"], r["min"], r["max"]] for r in ours.to_dict("records")]
    theirs = [[name, v["mean"], v["std"], v["min"], v["max"]] for name, v in release.items()]
    return LatexTable("CliniFact Table 4: number of words (whitespace-separated tokens) of the text fields of all pairs.",
                      "tab:clinifact-table4", columns, [Block(rows, title), Block(theirs, RELEASE_TITLE)],
                      notes=["The released data's numbers are counted the same way from its three CSV files (1,970 pairs)."])


def table6_latex(ours: pd.DataFrame, release: Mapping[str, Mapping[str, JSONValue]], title: str) -> LatexTable:
    """Table 6 in the paper's layout: ours (``pairs.label_table``) under ``title``, then the released data's."""
    keys = (*(CLINIFACT_RELEASE_NAMES[code] for code in (1, 0, 2)), "total")
    columns = [Column("Split", align="l"), *(Column(CLINIFACT_CODES[code].capitalize() if code != 2 else CLINIFACT_CODES[code], fmt="int")
                                             for code in (1, 0, 2)), Column("Total", fmt="int")]
    rows = [[r["split"], *(r[k] for k in keys)] for r in ours.to_dict("records")]
    theirs = [[split, *(v[k] for k in keys)] for split, v in release.items()]
    return LatexTable("CliniFact Table 6: distribution of the labels in the train, validation and test splits (pairs).",
                      "tab:clinifact-table6", columns, [Block(rows, title), Block(theirs, RELEASE_TITLE)],
                      notes=["NEI: not enough information. The released data's counts come from its three CSV files."])


def study_classes(studies: Iterable[Mapping[str, JSONValue]], excluded: Iterable[str]) -> dict[str, list[str]]:
    """nctId → disease classes (browse branch names), leaving out the branches abbreviated in ``excluded``."""
    excluded = set(excluded)
    return {nct: [c["name"] for c in disease_classes(s) if c["name"] and c["abbrev"] not in excluded]
            for s in studies if (nct := nct_id(s))}


def disease_class_table(df: pd.DataFrame, classes: Mapping[str, list[str]]) -> pd.DataFrame:
    """Fig. 2 data: pairs per disease class (a trial in several classes counts in each)."""
    c = Counter(name for nct in df["nctId"] for name in classes.get(nct, []) or [NO_CLASS])
    return pd.DataFrame(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])), columns=["disease_class", "claims"])


def year_table(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. S1 data: distinct publications per year (from "Publication Date")."""
    pubs = df.drop_duplicates("PMID")
    years = pubs["Publication Date"].astype(str).str.extract(r"^(\d{4})")[0].dropna().astype(int)
    counts = years.value_counts().sort_index()
    return pd.DataFrame({"year": counts.index.astype(int), "publications": counts.values.astype(int)})


#: The printed width of each figure ("text": 7 in, "column": 3.3 in; :mod:`medfc.common.plots`).
FIGURE_WIDTHS = {"fig2": "text", "figS1": "column"}
NO_CLASS = "(no class)"


def disease_class_note(table: pd.DataFrame, n_pairs: int, paper: Mapping[str, JSONValue] | None = None) -> str:
    """How to read Fig. 2 (the bars add up to more than the pairs); with ``paper``, the paper's number of classes."""
    note = f"A pair counts once in each of its trial's disease classes: the bars add up to {int(table['claims'].sum())} for {n_pairs} pairs."
    if paper:
        ours = int((table["disease_class"] != NO_CLASS).sum())
        note += f" {ours} disease classes here; the paper's dataset has {paper['disease_classes']} (of MeSH's {paper['mesh_categories']})."
    return note


def plot_disease_classes(table: pd.DataFrame, png: str | os.PathLike, n_pairs: int | None = None,
                         paper: Mapping[str, JSONValue] | None = None) -> list[Path]:
    """Fig. 2 at text width: pairs per disease class; with ``n_pairs``, :func:`disease_class_note` below it."""
    from matplotlib.ticker import MaxNLocator

    from medfc.common.plots import MIN_FONT_PT, new_figure

    fig, ax = new_figure("text", 0.2 * max(3, len(table)) + (1.2 if n_pairs is not None else 0.9))
    bars = ax.barh(table["disease_class"][::-1], table["claims"][::-1], 0.7, color="#4c72b0")
    ax.bar_label(bars, labels=[str(int(v)) if v else "" for v in table["claims"][::-1]], fontsize=MIN_FONT_PT, padding=2)
    ax.set_xlim(0, max(1, int(table["claims"].max()) if len(table) else 1) * 1.12)
    ax.set_ylim(-0.5, max(len(table), 1) - 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("claim–evidence pairs")
    ax.set_title("CliniFact claims per disease class")
    if n_pairs is not None:
        fig.supxlabel(textwrap.fill(disease_class_note(table, n_pairs, paper), 110), fontsize=MIN_FONT_PT, color="#444444")
    return save_figure(fig, png)


def plot_years(table: pd.DataFrame, png: str | os.PathLike) -> list[Path]:
    """Fig. S1 at column width: publications per year, whole years and whole counts on the axes."""
    from matplotlib.ticker import MaxNLocator

    from medfc.common.plots import new_figure

    fig, ax = new_figure("column", 2.2)
    ax.bar(table["year"], table["publications"], 0.8, color="#55a868")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("publication year")
    ax.set_ylabel("publications")
    ax.set_title("CliniFact publications per year")
    return save_figure(fig, png)

