"""Descriptive statistics of the HealthFC dataset (docs/healthfc.md §5), records in, DataFrames out: the paper's
Table 2 and the data of Figs. 1–3, with the paper's numbers beside ours in the ``fig*_table`` functions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import re
import unicodedata

import numpy as np
import pandas as pd

from medfc.common.latex import Block, Column, LatexTable
from medfc.common.papers import reported_title
from medfc.healthfc.align import normalize_url
from medfc.healthfc.records import DatasetRecord
from medfc.healthfc.verdicts import LEVELS, NEI, REFUTED, SUPPORTED

LABEL_ORDER = (SUPPORTED, REFUTED, NEI)

#: The paper's Table 2 (English): aspect → (mean, std, min, max).
PAPER_TABLE2: dict[str, tuple[float, float, float, float]] = {
    "evidence sentences per claim": (3.4, 1.2, 1, 5),
    "sentences per article": (59.0, 25.3, 16, 168),
    "words per article": (857, 369, 244, 2677),
    "words per explanation": (40.0, 18.3, 7, 103),
    "words of evidence per claim": (76.6, 32.2, 15, 189),
}


def word_count(text: str) -> int:
    return len((text or "").split())


def _describe(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "mean": None, "std": None, "min": None, "max": None}
    arr = np.asarray(values, dtype=float)
    return {"n": int(arr.size), "mean": round(float(arr.mean()), 2), "std": round(float(arr.std(ddof=1)), 2) if arr.size > 1 else 0.0,
            "min": round(float(arr.min()), 2), "max": round(float(arr.max()), 2)}


def _articles(records: Sequence[DatasetRecord]) -> list[DatasetRecord]:
    seen: dict[str, DatasetRecord] = {}
    for r in records:
        if r["source"] != "release":
            seen.setdefault(normalize_url(r["url"]), r)
    return list(seen.values())


def table2(records: Sequence[DatasetRecord]) -> pd.DataFrame:
    """Table 2 as rows (aspect, language, n, mean, std, min, max, paper_mean, paper_std, paper_min, paper_max)."""
    gold = [r for r in records if r["gold_evidence"] and r["evidence_ids"]]
    arts = _articles(records)
    rows: list[dict[str, object]] = []
    for lang in ("en", "de"):
        sents = f"sentences_{lang}"
        values: dict[str, list[float]] = {
            "evidence sentences per claim": [len(r["evidence_ids"]) for r in gold],
            "sentences per article": [len(a[sents]) for a in arts],
            "words per article": [sum(word_count(s) for s in a[sents]) for a in arts],
            "words per explanation": [word_count(r[f"explanation_{lang}"]) for r in records
                                      if (r[f"explanation_{lang}"] or "").strip()],
            "words of evidence per claim": [sum(word_count(r[sents][i]) for i in r["evidence_ids"] if i < len(r[sents])) for r in gold],
        }
        for aspect, vals in values.items():
            paper = PAPER_TABLE2[aspect] if lang == "en" else (None, None, None, None)
            rows.append({"aspect": aspect, "language": lang, **_describe(vals),
                         "paper_mean": paper[0], "paper_std": paper[1], "paper_min": paper[2], "paper_max": paper[3]})
    return pd.DataFrame(rows)


#: Table 2's names of the aspects, in its order.
TABLE2_ASPECTS = {"evidence sentences per claim": "No. of evid. sent.", "sentences per article": "No. of all sentences",
                  "words per article": "Words: articles", "words per explanation": "Words: explanations",
                  "words of evidence per claim": "Words: evid. sent."}


def table2_latex(df: pd.DataFrame, n_claims: int) -> LatexTable:
    """Table 2 in the paper's layout (Aspect | μ | σ | Min | Max): ours in English, in German, then the paper's."""
    def rows(lang: str, paper: bool = False) -> list[list[object]]:
        p = "paper_" if paper else ""
        return [[TABLE2_ASPECTS.get(r["aspect"], r["aspect"]), r[f"{p}mean"], r[f"{p}std"], r[f"{p}min"], r[f"{p}max"]]
                for r in df[df["language"] == lang].to_dict("records")]

    columns = [Column("Aspect", align="l"), Column("μ", fmt="dec1"), Column("σ", fmt="dec1"), Column("Min", fmt="int"),
               Column("Max", fmt="int")]
    en = df[df["language"] == "en"].set_index("aspect")["n"]
    counted = {a: int(en[a]) for a in TABLE2_ASPECTS if a in en}
    note = (f"Ours: this run's dataset, {n_claims} claims; over {counted.get('evidence sentences per claim', 0)} claims with gold "
            f"evidence, {counted.get('sentences per article', 0)} articles with their full text and "
            f"{counted.get('words per explanation', 0)} explanations. Reported: the paper's English texts of its 750 claims. "
            "Words: whitespace-separated tokens.")
    blocks = [Block(rows("en"), "Ours, English"), Block(rows("de"), "Ours, German"),
              Block(rows("en", paper=True), reported_title("Vladika et al. 2024"))]
    return LatexTable("HealthFC Table 2: quantitative statistics of the dataset: mean (μ), standard deviation (σ), minimum "
                      "and maximum per claim or article.", "tab:healthfc-table2", columns, blocks, notes=[note])


def claims_per_year(records: Sequence[DatasetRecord]) -> tuple[pd.DataFrame, int]:
    """Fig. 1 data: ``DataFrame[year, claims, articles]`` and the number of undated claims."""
    claims: Counter[int] = Counter()
    articles: dict[int, set[str]] = {}
    undated = 0
    for r in records:
        date = r.get("date")
        if not date or len(str(date)) < 4 or not str(date)[:4].isdigit():
            undated += 1
            continue
        year = int(str(date)[:4])
        claims[year] += 1
        articles.setdefault(year, set()).add(normalize_url(r["url"]))
    years = range(min(claims), max(claims) + 1) if claims else range(0)
    return pd.DataFrame({"year": list(years), "claims": [claims.get(y, 0) for y in years],
                         "articles": [len(articles.get(y, ())) for y in years]}).astype(int), undated


#: Endings that make two topics one ("Nahrungsergänzung" + "smittel", "Impfung" + "en", "Vitamin" + "e").
TOPIC_SUFFIXES = ("smittel", "mittel", "en", "n", "e")


def topic_key(topic: str) -> str:
    """Comparison form of a topic: NFC, case-folded, "&" read as "und", only letters and digits."""
    t = unicodedata.normalize("NFC", topic or "").casefold().replace("&", " und ")
    return re.sub(r"[\W_]+", "", t)


def merge_topics(topics: Sequence[str], weights: dict[str, int] | None = None) -> dict[str, str]:
    """Map every topic to the name of its merged topic: two are one when their :func:`topic_key` is equal or one is
    the other plus an ending of :data:`TOPIC_SUFFIXES`; named by the variant on most claims (``weights``), then the
    shorter name, then alphabetically."""
    weights = weights or {}
    roots: dict[str, str] = {}  # key -> root key
    for key in sorted({topic_key(t) for t in topics if topic_key(t)}, key=lambda k: (len(k), k)):
        root = key
        for suffix in TOPIC_SUFFIXES:
            stem = key[: -len(suffix)]
            if key.endswith(suffix) and stem in roots:
                root = roots[stem]
                break
        roots[key] = root
    variants: dict[str, list[str]] = {}
    for t in dict.fromkeys(topics):
        if topic_key(t):
            variants.setdefault(roots[topic_key(t)], []).append(t)
    name = {root: min(vs, key=lambda v: (-weights.get(v, 0), len(v), v)) for root, vs in variants.items()}
    return {t: name[roots[topic_key(t)]] for t in dict.fromkeys(topics) if topic_key(t)}


def english_topics(records: Sequence[DatasetRecord]) -> dict[str, str]:
    """German topic → its English as the translation step gave it (``topics_en``, 1:1 with ``topics``);
    where records disagree, the English on most claims (then the first alphabetically)."""
    seen: dict[str, Counter] = {}
    for r in records:
        de, en = r.get("topics") or [], r.get("topics_en") or []
        if len(de) != len(en):
            continue
        for d, e in zip(de, en):
            if d and e and str(e).strip():
                seen.setdefault(d, Counter())[str(e).strip()] += 1
    return {d: min(c, key=lambda e: (-c[e], e)) for d, c in seen.items()}


def _topic_counts(records: Sequence[DatasetRecord]) -> Counter:
    return Counter(t for r in records for t in dict.fromkeys(r.get("topics") or []))


def top_topics(records: Sequence[DatasetRecord], k: int = 10) -> pd.DataFrame:
    """Fig. 2 data: ``DataFrame[topic, topic_en, claims, share, variants]``, the ``k`` topics on most claims (ties by
    name) after :func:`merge_topics`; ``topic_en`` the English of the name or of a variant ("" for none)."""
    raw = _topic_counts(records)
    merged = merge_topics(list(raw), dict(raw))
    counts = Counter(m for r in records
                     for m in dict.fromkeys(merged[t] for t in (r.get("topics") or []) if t in merged))
    variants: dict[str, set[str]] = {}
    for t, m in merged.items():
        variants.setdefault(m, set()).add(t)
    english = english_topics(records)

    def in_english(topic: str) -> str:
        named = [topic] + sorted(variants[topic] - {topic}, key=lambda v: (-raw[v], v))
        return next((english[v] for v in named if v in english), "")

    n = len(records)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    return pd.DataFrame({"topic": [t for t, _ in top], "topic_en": [in_english(t) for t, _ in top], "claims": [c for _, c in top],
                         "share": [round(c / n, 4) if n else 0.0 for _, c in top], "variants": ["; ".join(sorted(variants[t])) for t, _ in top]})


def level_by_verdict(records: Sequence[DatasetRecord]) -> pd.DataFrame:
    """Fig. 3 data: ``DataFrame[label, evidence_level, claims]`` over every label × level (zeros kept)."""
    counts = Counter((r["label"], r["evidence_level"]) for r in records)
    levels = list(LEVELS) + sorted({str(lv) for _, lv in counts if lv not in LEVELS})
    return pd.DataFrame([{"label": lab, "evidence_level": lv, "claims": counts.get((lab, None if lv == "None" else lv), 0)}
                         for lab in LABEL_ORDER for lv in levels])


def fig1_table(records: Sequence[DatasetRecord], paper: Mapping[str, object]) -> tuple[pd.DataFrame, int]:
    """Fig. 1 data (:func:`claims_per_year`) with ``paper_articles``, the paper's articles of a year (``fig1``)."""
    df, undated = claims_per_year(records)
    stated = {int(y): int(v) for y, v in paper["fig1"]["articles"].items()}  # type: ignore[index,union-attr]
    df["paper_articles"] = pd.Series([stated.get(int(y)) for y in df["year"]], dtype="Int64")
    return df, undated


def fig2_table(records: Sequence[DatasetRecord], k: int, paper: Mapping[str, object]) -> pd.DataFrame:
    """Fig. 2 data (:func:`top_topics`) with ``paper_topic`` and ``paper_share``, the paper's topics (``fig2``)
    matched by their German name through :func:`merge_topics`."""
    df = top_topics(records, k)
    stated = list(paper["fig2"])  # type: ignore[index]
    raw = _topic_counts(records)
    merged = merge_topics(list(raw) + [str(p["topic_de"]) for p in stated], dict(raw))
    by_topic: dict[str, Mapping[str, object]] = {}
    for topic, variants in zip(df["topic"], df["variants"]):
        names = {merged.get(v) for v in str(variants).split("; ")}
        by_topic.update({topic: p for p in stated if merged.get(str(p["topic_de"])) in names})
    df["paper_topic"] = [str(by_topic[t]["topic"]) if t in by_topic else "" for t in df["topic"]]
    df["paper_share"] = [round(float(by_topic[t]["share"]) / 100, 4) if t in by_topic else None for t in df["topic"]]
    return df


def fig3_table(records: Sequence[DatasetRecord], paper: Mapping[str, object]) -> pd.DataFrame:
    """Fig. 3 data: :func:`level_by_verdict`'s grid, then one ``all`` row per verdict (its total) with
    ``paper_claims``, the paper's total of that verdict (``fig3.claims``)."""
    grid = level_by_verdict(records)
    stated = {str(k): int(v) for k, v in paper["fig3"]["claims"].items()}  # type: ignore[index,union-attr]
    totals = grid.groupby("label", sort=False)["claims"].sum()
    rows = pd.DataFrame({"label": list(totals.index), "evidence_level": "all", "claims": totals.to_numpy()})
    out = pd.concat([grid, rows], ignore_index=True)
    out["paper_claims"] = pd.Series([stated.get(lab) if lv == "all" else None
                                     for lab, lv in zip(out["label"], out["evidence_level"])], dtype="Int64")
    return out


def summary(records: Sequence[DatasetRecord]) -> dict[str, object]:
    """Small JSON summary next to the tables (counts that are not in a figure)."""
    _, undated = claims_per_year(records)
    return {"claims": len(records), "articles": len({normalize_url(r["url"]) for r in records}),
            "articles_with_full_text": len(_articles(records)), "undated_claims": undated,
            "claims_without_topics": sum(1 for r in records if not r.get("topics")),
            "labels": dict(sorted(Counter(r["label"] for r in records).items()))}
