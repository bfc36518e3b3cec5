"""The HealthFC dataset (docs/healthfc.md §3): one record per claim (fields: :data:`FIELDS`), German and English side
by side, with gold evidence ids; its ``source`` is crawl+release, crawl or release."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

import pandas as pd

from medfc.common.hf_card import front_matter, relative_files
from medfc.common.io import write_jsonl
from medfc.common.jsontypes import JSONValue
from medfc.common.report import SkipReport
from medfc.healthfc.align import AlignmentResult, normalize_url
from medfc.healthfc.records import ArticleRecord, ClaimRecord, DatasetRecord
from medfc.healthfc.release import ReleaseRow
from medfc.healthfc.sentences import DEFAULT_BASE, article_sentence_records

log = logging.getLogger(__name__)

FIELDS = tuple(DatasetRecord.__annotations__)  # the output's column order


@dataclass
class DatasetReport(SkipReport):
    """The dataset step's :class:`SkipReport` plus every crawl/release verdict disagreement."""

    verdict_disagreements: list[dict[str, object]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        disagreements = sorted(self.verdict_disagreements, key=lambda x: (x["release_row"], x["id"]))
        return dict(super().as_dict(), verdict_disagreements=disagreements)


def sentences_by_article(articles: Iterable[ArticleRecord], sentence_records: Iterable[Mapping[str, JSONValue]] | None = None, *,
                         base: str = DEFAULT_BASE) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """article_id → German sentences (body, then studies), and article_id → their sections; a differing list in
    ``sentence_records`` (the translation step's ``sentences``) is logged."""
    recs = {art["article_id"]: article_sentence_records(art, base=base) for art in articles}  # type: ignore[arg-type]
    sentences = {aid: [str(r["text"]) for r in rs] for aid, rs in recs.items()}
    sections = {aid: [str(r["section"]) for r in rs] for aid, rs in recs.items()}
    stale = [rec["article_id"] for rec in sentence_records or ()
             if rec.get("article_id") in sentences and rec.get("sentences_de") != sentences[rec["article_id"]]]
    if stale:
        log.warning("%d translated sentence lists differ from article_sentences (stale translation outputs?): %s",
                    len(stale), ", ".join(stale[:5]))
    return sentences, sections


def known_translations(sentence_records: Iterable[Mapping[str, JSONValue]], claim_records: Iterable[Mapping[str, JSONValue]]) -> dict[str, str]:
    """German → English pairs of the translation step's ``sentences`` and ``claims_en`` records."""
    table: dict[str, str] = {}
    for rec in sentence_records:
        for key in ("sentences", "topics"):
            de, en = rec.get(f"{key}_de") or [], rec.get(f"{key}_en") or []
            if len(de) == len(en):
                table.update((d, e) for d, e in zip(de, en) if d and e)
    for rec in claim_records:
        for key in ("question", "explanation"):
            if rec.get(f"{key}_de") and rec.get(f"{key}_en"):
                table[rec[f"{key}_de"]] = rec[f"{key}_en"]
    return table


def pair_sentences(de: Sequence[str], en: Sequence[str]) -> tuple[list[str], list[str]]:
    """Make two sentence lists of one text 1:1: the longer regrouped into as many pieces as the shorter, cut where the
    cumulative character shares best agree (dynamic programming); equal lengths or an empty side unchanged."""
    de, en = list(de), list(en)
    if len(de) == len(en) or not de or not en:
        return de, en
    longer, shorter = (de, en) if len(de) > len(en) else (en, de)
    n, m = len(longer), len(shorter)

    def shares(xs: list[str]) -> list[float]:
        total = sum(len(x) for x in xs) or 1
        return [acc / total for acc in accumulate(len(x) for x in xs)]

    ls, ss = shares(longer), shares(shorter)
    inf = float("inf")
    # cost[k][j]: best cost of cutting longer[:j] into k groups whose ends match shorter's first k ends
    cost = [[inf] * (n + 1) for _ in range(m + 1)]
    back = [[0] * (n + 1) for _ in range(m + 1)]
    cost[0][0] = 0.0
    for k in range(1, m + 1):
        for j in range(k, n - (m - k) + 1):
            for i in range(k - 1, j):
                c = cost[k - 1][i] + abs(ls[j - 1] - ss[k - 1])
                if c < cost[k][j]:
                    cost[k][j], back[k][j] = c, i
    cuts, j = [], n
    for k in range(m, 0, -1):
        i = back[k][j]
        cuts.append((i, j))
        j = i
    grouped = [" ".join(longer[i:j]) for i, j in reversed(cuts)]
    return (grouped, shorter) if longer is de else (shorter, grouped)


def _slug(url: str) -> str:
    parts = [p for p in normalize_url(url).split("/")[1:] if p]
    return parts[-1] if parts else "article"


def _release_only_record(row: ReleaseRow, rid: str, report: SkipReport) -> DatasetRecord:
    if row.de_sentences:
        sentences = list(row.de_sentences)
        ids = sorted({i for i in (row.de_ids or []) if 0 <= i < len(sentences)})
        en = list(row.en_sentences) if row.en_sentences and len(row.en_sentences) == len(sentences) else None
    else:
        sentences, en = pair_sentences(row.de_evidence, row.en_evidence)
        if len(sentences) != len(row.de_evidence):
            report.count("release_evidence_regrouped")
        if not en or not sentences:
            en = None if sentences else []
        ids = list(range(len(sentences)))
    return {
        "id": rid, "url": row.url, "article_id": _slug(row.url), "claim_de": row.de_claim, "claim_en": row.en_claim or None,
        "label": row.label, "evidence_level": row.evidence_level, "small_effect": row.small_effect,
        "explanation_de": row.de_explanation, "explanation_en": row.en_explanation if row.en_explanation else None,
        "sentences_de": sentences, "sentences_en": en, "sentence_sections": None, "evidence_ids": ids, "date": row.date,
        "topics": [], "topics_en": [], "authors": list(row.authors), "title": row.title, "source": "release",
        "release_row": row.row, "gold_evidence": bool(ids), "n_evidence_unaligned": 0,
        "claim_en_origin": "release" if row.en_claim else None,
        "explanation_en_origin": "release" if row.en_explanation else None,
        "sentences_en_origin": "release" if en else None,
    }


def add_english(records: list[DatasetRecord], translations: Mapping[str, str]) -> dict[str, int]:
    """Fill every missing English field from ``translations`` (German → English: the translation step's) in place; a
    text it lacks stays ``""`` (``untranslated``). Returns the counts."""
    unique: set[str] = set()
    counts: Counter = Counter()

    def tr(text: str) -> str:
        if not text or not text.strip():
            return ""
        unique.add(text)
        if (en := translations.get(text)) and en.strip():
            counts["translated"] += 1
            return en
        counts["untranslated"] += 1
        return ""

    origin = "translation"
    for rec in records:
        if rec["claim_en"] is None:
            rec["claim_en"], rec["claim_en_origin"] = tr(rec["claim_de"]), origin
        if rec["explanation_en"] is None:
            rec["explanation_en"] = tr(rec["explanation_de"])
            rec["explanation_en_origin"] = origin if rec["explanation_de"] else None
        if rec["sentences_en"] is None:
            rec["sentences_en"] = [tr(s) for s in rec["sentences_de"]]
            rec["sentences_en_origin"] = origin
        if rec["topics_en"] is None:
            rec["topics_en"] = [tr(t) for t in rec["topics"]]
    return {"unique_texts": len(unique), **counts}


def build_dataset(claims: Sequence[ClaimRecord] | None, articles: Sequence[ArticleRecord] | None,
                  sentences: dict[str, list[str]] | None, rows: Sequence[ReleaseRow] | None,
                  alignment: AlignmentResult | None, translations: Mapping[str, str],
                  sections: dict[str, list[str]] | None = None) -> tuple[list[DatasetRecord], DatasetReport]:
    """One record per claim, ordered by release row, then claim id: the German side (the crawl's inputs are None in
    release mode, the release's in crawl mode), then the English (:func:`add_english`)."""
    report = DatasetReport("healthfc.dataset")
    sections = sections or {}
    claims = list(claims or [])
    articles_by_id = {a["article_id"]: a for a in (articles or [])}
    sentences = sentences or {}
    rows = list(rows or [])
    row_by_id = {r.row: r for r in rows}
    match_by_claim = {m.claim_id: m.release_row for m in (alignment.matches if alignment else [])}
    records: list[DatasetRecord] = []
    used_ids: set[str] = set()
    for claim in claims:
        art = articles_by_id.get(claim["article_id"])
        if art is None:
            report.skip(claim["claim_id"], "no_article", claim["article_id"])
            continue
        sents = sentences.get(claim["article_id"], [])
        if not sents:
            report.skip(claim["claim_id"], "no_sentences", claim["article_id"])
            continue
        row = row_by_id.get(match_by_claim.get(claim["claim_id"]))
        rec: DatasetRecord = dict.fromkeys(FIELDS) | {  # the English side and release fields None
            "id": claim["claim_id"], "url": claim["url"], "article_id": claim["article_id"], "claim_de": claim["question"],
            "label": claim["label"], "evidence_level": claim["evidence_level"], "sentences_de": list(sents),
            "small_effect": bool(claim["small_effect"]), "explanation_de": claim.get("explanation", ""),
            "sentence_sections": list(sections.get(claim["article_id"]) or ["unknown"] * len(sents)),
            "evidence_ids": [], "date": art.get("date"), "topics": list(art.get("topics") or []),
            "authors": list(art.get("authors") or []), "title": art.get("title", ""), "source": "crawl",
            "gold_evidence": False, "n_evidence_unaligned": 0,
        }
        if row is not None and alignment is not None:
            ids = alignment.evidence_ids(row.row)
            rec.update(evidence_ids=ids, gold_evidence=bool(ids), source="crawl+release", release_row=row.row,
                       n_evidence_unaligned=sum(1 for a in alignment.evidence.get(row.row, []) if not a.aligned))
            differs = []
            if row.label != claim["label"]:
                report.count("label_differs_from_crawl")
                differs.append("label")
            if row.evidence_level is not None and row.evidence_level != claim["evidence_level"]:
                report.count("level_differs_from_crawl")
                differs.append("evidence_level")
            if differs:  # the release wins; both texts are listed
                report.verdict_disagreements.append({
                    "id": claim["claim_id"], "release_row": row.row, "differs": differs,
                    "release_verdict": row.de_verdict, "release_label": row.label, "release_level": row.evidence_level,
                    "crawl_verdict": claim.get("verdict_text", ""), "crawl_label": claim["label"],
                    "crawl_level": claim["evidence_level"],
                })
            rec["label"] = row.label
            if row.evidence_level is not None:
                rec["evidence_level"] = row.evidence_level
                rec["small_effect"] = row.small_effect
            if not rec["explanation_de"] and row.de_explanation:
                rec["explanation_de"] = row.de_explanation
            if row.en_claim:
                rec["claim_en"], rec["claim_en_origin"] = row.en_claim, "release"
            if row.en_explanation:
                rec["explanation_en"], rec["explanation_en_origin"] = row.en_explanation, "release"
            rec.update(date=rec["date"] or row.date, authors=rec["authors"] or list(row.authors),
                       title=rec["title"] or row.title)
            if not rec["gold_evidence"]:
                report.count("matched_without_aligned_evidence")
        else:
            report.count("crawl_without_release_row")
        records.append(rec)
        used_ids.add(rec["id"])
    matched_rows = set(match_by_claim.values())
    ordinal: Counter = Counter()
    for row in rows:
        key = normalize_url(row.url)
        k = ordinal[key]
        ordinal[key] += 1
        if row.row in matched_rows:
            continue
        rid = f"{_slug(row.url)}#{k}"
        if rid in used_ids:
            rid = f"{_slug(row.url)}#r{row.row}"
        used_ids.add(rid)
        records.append(_release_only_record(row, rid, report))
        report.count("release_without_crawl")
    records.sort(key=lambda r: (r["release_row"] is None, r["release_row"] if r["release_row"] is not None else 0, r["id"]))
    report.counts.update("evidence_level_unknown" for rec in records if rec["evidence_level"] is None)
    for key, n in add_english(records, translations).items():
        report.count(f"english/{key}", n)
    report.counts.update(f"{key}/{rec[key]}" for rec in records for key in ("source", "label"))
    report.count("records", len(records))
    return records, report


def dataset_card(records: Sequence[DatasetRecord], alignment_report: Mapping[str, object] | None = None,
                 mode: str = "", release: str | None = None) -> str:
    """A markdown dataset card with the dataset's counts; ``release`` describes the release read."""
    # each article with its full text once: its first record's sentence count
    full_text = {normalize_url(r["url"]): len(r["sentences_de"]) for r in reversed(records) if r["source"] != "release"}
    rate = (alignment_report or {}).get("alignment_rate")
    lines = [
        "# HealthFC (rebuilt) — dataset card",
        "",
        f"Built in mode `{mode}`." if mode else "",
        f"The release file read: {release}." if release else None,
        "One record per claim; German and English side by side (`sentences_en[i]` translates "
        "`sentences_de[i]`); `evidence_ids` index the gold evidence sentences. See docs/healthfc.md.",
        "",
        "| count | value |",
        "| --- | --- |",
        f"| claims | {len(records)} |",
        f"| articles | {len({normalize_url(r['url']) for r in records})} |",
        f"| articles with full text | {len(full_text)} |",
        f"| claims with gold evidence | {sum(1 for r in records if r['gold_evidence'])} |",
        f"| article sentences (German) | {sum(full_text.values())} |",
        f"| gold evidence sentences (aligned ids) | {sum(len(r['evidence_ids']) for r in records)} |",
        f"| release evidence sentences left unaligned | {sum(r['n_evidence_unaligned'] for r in records)} |",
        f"| alignment rate | {'n/a' if rate is None else f'{100 * rate:.1f} %'} |",
        "",
    ]
    for title, column, key in (("Labels", "label", "label"), ("Levels of evidence", "level", "evidence_level"),
                               ("Sources", "source", "source")):
        counts = sorted(Counter(str(r[key]) for r in records).items())
        lines += [f"## {title}", "", f"| {column} | claims |", "| --- | --- |", *[f"| {k} | {v} |" for k, v in counts],
                  ""]
    lines += [
        "Licence: the release annotations (labels, evidence sentences, English claims and explanations) "
        "are CC BY-NC-ND 4.0 (Vladika et al., 2024); the article text belongs to Medizin Transparent. "
        "This file describes a locally built dataset; it is not redistributed.",
        "",
    ]
    return "\n".join(line for line in lines if line is not None)


def write_dataset(records: Sequence[DatasetRecord], jsonl: str | Path, parquet: str | Path, card: str | Path,
                  alignment_report: Mapping[str, object] | None, mode: str, release: str | None) -> None:
    """Write the records as JSONL and Parquet (fields in :data:`FIELDS` order) and the card, whose Hugging Face
    metadata name the Parquet file as the one split."""
    rows = [{k: r.get(k) for k in FIELDS} for r in records]
    write_jsonl(jsonl, rows)
    df = pd.DataFrame(rows, columns=list(FIELDS))
    df["release_row"] = df["release_row"].astype("Int64")
    df.to_parquet(parquet, index=False)
    meta = front_matter(license="cc-by-nc-nd-4.0", languages=["de", "en"], task_categories=["text-classification"],
                        task_ids=["fact-checking"], tags=["medical", "health", "fact-checking"], n_rows=len(rows),
                        data_files=relative_files(card, {"train": parquet}), pretty_name="HealthFC (rebuilt)")
    Path(card).write_text(meta + dataset_card(records, alignment_report, mode, release), encoding="utf-8")
