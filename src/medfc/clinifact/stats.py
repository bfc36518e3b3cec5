"""CliniFact statistics: Table 6 (labels per split), Table 4 (word counts), Fig. 2 (claims per
disease class), Fig. S1 (publications per year)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from medfc.clinifact.pairs import label_table
from medfc.common.jsontypes import JSONValue
from medfc.common.latex import Block, Column, LatexTable


def _pyplot():
    """matplotlib's pyplot with the Agg backend (medfc.common.plots sets it): loaded by the plots only."""
    from medfc.common import plots

    return plots.plt


def save_figure(fig, png: str | os.PathLike) -> list[Path]:
    """:func:`medfc.common.plots.save_figure` (PNG and PDF, byte-stable metadata)."""
    from medfc.common.plots import save_figure as save

    return save(fig, png)



def word_count_table(df: pd.DataFrame) -> pd.DataFrame:
    """Table 4: words (whitespace tokens) of claim, title and abstract: mean, std, min, max."""
    rows = []
    for name, col in (("claim", "claim"), ("title", "article_title"), ("abstract", "article_abstract")):
        words = df[col].fillna("").astype(str).str.split().str.len()
        rows.append(
            {
                "text": name,
                "mean": round(float(words.mean()), 1) if len(words) else 0.0,
                "std": round(float(words.std(ddof=1)), 1) if len(words) > 1 else 0.0,
                "min": int(words.min()) if len(words) else 0,
                "max": int(words.max()) if len(words) else 0,
            }
        )
    return pd.DataFrame(rows)


RELEASE_TITLE = "Released data: Zhang et al. 2025"


def table4_latex(ours: pd.DataFrame, release: Mapping[str, Mapping[str, JSONValue]], title: str) -> LatexTable:
    """Table 4 in the paper's layout (Text field | Mean | Std | Min | Max words) from :func:`word_count_table`'s rows:
    ours under ``title``, then the released data's (``release``: field → mean, std, min, max)."""
    columns = [Column("Text field", align="l"), Column("Mean", fmt="dec1"), Column("Std", fmt="dec1"), Column("Min", fmt="int"),
               Column("Max", fmt="int")]
    rows = [[r["text"], r["mean"], r["std"], r["min"], r["max"]] for r in ours.to_dict("records")]
    theirs = [[name, v["mean"], v["std"], v["min"], v["max"]] for name, v in release.items()]
    return LatexTable("CliniFact Table 4: number of words (whitespace-separated tokens) of the text fields of all pairs.",
                      "tab:clinifact-table4", columns, [Block(rows, title), Block(theirs, RELEASE_TITLE)],
                      notes=["The released data's numbers are counted the same way from its three CSV files (1,970 pairs)."])


def table6_latex(ours: pd.DataFrame, release: Mapping[str, Mapping[str, JSONValue]], title: str) -> LatexTable:
    """Table 6 in the paper's layout (Split | Evidence | Inconclusive | NEI | Total) from :func:`label_table`'s rows: ours
    under ``title``, then the released data's (``release``: split → count per label and total)."""
    keys = ("evidence", "inconclusive", "not enough information", "total")
    columns = [Column("Split", align="l"), Column("Evidence", fmt="int"), Column("Inconclusive", fmt="int"), Column("NEI", fmt="int"),
               Column("Total", fmt="int")]
    rows = [[r["split"], *(r[k] for k in keys)] for r in ours.to_dict("records")]
    theirs = [[split, *(v[k] for k in keys)] for split, v in release.items()]
    return LatexTable("CliniFact Table 6: distribution of the labels in the train, validation and test splits (pairs).",
                      "tab:clinifact-table6", columns, [Block(rows, title), Block(theirs, RELEASE_TITLE)],
                      notes=["NEI: not enough information. The released data's counts come from its three CSV files."])


def study_classes(studies: Iterable[Mapping[str, JSONValue]], excluded: Iterable[str]) -> dict[str, list[str]]:
    """nctId → disease classes (browse branch names) from the study records, leaving out the branches
    whose abbreviations are in ``excluded`` (``clinifact.stats.excluded_branches``)."""
    excluded = set(excluded)
    out: dict[str, list[str]] = {}
    for s in studies:
        nct = ((s.get("protocolSection") or {}).get("identificationModule") or {}).get("nctId")
        branches = ((s.get("derivedSection") or {}).get("conditionBrowseModule") or {}).get("browseBranches") or []
        if nct:
            out[nct] = [b["name"] for b in branches if b.get("abbrev") not in excluded and b.get("name")]
    return out


def disease_class_table(df: pd.DataFrame, classes: Mapping[str, list[str]]) -> pd.DataFrame:
    """Fig. 2 data: pairs per disease class (a trial in several classes counts in each)."""
    c: Counter = Counter()
    for nct in df["nctId"]:
        for name in classes.get(nct, []) or ["(no class)"]:
            c[name] += 1
    rows = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    return pd.DataFrame(rows, columns=["disease_class", "claims"])


def year_table(df: pd.DataFrame) -> pd.DataFrame:
    """Fig. S1 data: distinct publications per year (from "Publication Date")."""
    pubs = df.drop_duplicates("PMID")
    years = pubs["Publication Date"].astype(str).str.extract(r"^(\d{4})")[0].dropna().astype(int)
    counts = years.value_counts().sort_index()
    return pd.DataFrame({"year": counts.index.astype(int), "publications": counts.values.astype(int)})


def disease_class_note(table: pd.DataFrame, n_pairs: int) -> str:
    """How to read Fig. 2: a pair counts once in each of its disease classes, so the bars add up to more."""
    return (f"A pair counts once in each of its trial's disease classes: the bars add up to "
            f"{int(table['claims'].sum())} for {n_pairs} pairs.")


def plot_disease_classes(table: pd.DataFrame, png: str | os.PathLike, n_pairs: int | None = None) -> list[Path]:
    """Fig. 2: pairs per disease class; with ``n_pairs`` the figure says that the bars add up to more than the pairs."""
    plt = _pyplot()

    fig, ax = plt.subplots(figsize=(7, max(2.5, 0.32 * len(table) + 1)))
    bars = ax.barh(table["disease_class"][::-1], table["claims"][::-1], color="#4c72b0")
    ax.bar_label(bars, labels=[str(int(v)) if v else "" for v in table["claims"][::-1]], fontsize=7, padding=2)
    ax.set_xlim(0, max(1, int(table["claims"].max()) if len(table) else 1) * 1.12)
    ax.set_xlabel("claim–evidence pairs")
    ax.set_title("CliniFact claims per disease class")
    if n_pairs is not None:
        # below the axis label (offset in points, so it never overlaps it whatever the figure height)
        ax.annotate(disease_class_note(table, n_pairs), xy=(0.5, 0.0), xycoords="axes fraction", xytext=(0, -38),
                    textcoords="offset points", ha="center", va="top", fontsize=7, color="#444444")
    return save_figure(fig, png)


def plot_years(table: pd.DataFrame, png: str | os.PathLike) -> list[Path]:
    plt = _pyplot()

    fig, ax = plt.subplots(figsize=(7, 3))
    ax.bar(table["year"], table["publications"], color="#55a868")
    ax.set_xlabel("publication year")
    ax.set_ylabel("publications")
    ax.set_title("CliniFact publications per year")
    return save_figure(fig, png)


__all__ = ["label_table", "word_count_table", "study_classes", "disease_class_table", "disease_class_note", "year_table",
           "plot_disease_classes", "plot_years"]
