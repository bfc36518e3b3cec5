"""Read the official HealthFC release file (docs/sources.md §2, docs/healthfc.md §1; CC BY-NC-ND 4.0: read from a path
or downloaded once into the cache, never shipped), the published 12-column file (:data:`COLUMNS_12`) or the earlier
18-column one (:data:`COLUMNS_18`): strict UTF-8, mojibake repaired and listed, a row with a bad label skipped."""

from __future__ import annotations

import ast
import hashlib
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from medfc.common.csvfile import field_count_problem, read_csv_records, require_columns
from medfc.common.report import SkipReport
from medfc.common.sources import local_or_cached
from medfc.healthfc.portal import TITLE_SUFFIX, parse_german_date
from medfc.healthfc.sentences import normalize_text, split_sentences
from medfc.healthfc.verdicts import NEI, REFUTED, SUPPORTED, UnknownVerdict, verdict_from_text

if TYPE_CHECKING:  # the HTTP client (requests) is loaded only to download a release
    from medfc.common.http import HttpClient

log = logging.getLogger(__name__)

COLUMNS_12 = (
    "en_claim", "en_explanation", "en_top_sentences", "de_claim", "de_explanation", "de_top_sentences",
    "label", "de_verdict", "de_title", "authors", "date", "url",
)
COLUMNS_18 = (
    "en_claim", "en_explanation", "en_text", "en_studies", "en_sentences", "en_ids",
    "de_claim", "de_explanation", "de_text", "de_studies", "de_sentences", "de_ids",
    "label", "de_verdict", "de_title", "authors", "date", "url",
)
#: Columns every variant has (docs/sources.md §2); a file without one of them is an error naming it.
REQUIRED = ("en_claim", "en_explanation", "de_claim", "de_explanation", "label", "de_verdict", "de_title", "authors", "date", "url")
#: The evidence columns of each variant, required too.
VARIANT_COLUMNS = {
    "12col": ("de_top_sentences", "en_top_sentences"),
    "18col": ("de_sentences", "de_ids", "en_sentences", "en_ids"),
}
#: The label column's codes exactly as the release writes them (docs/sources.md §2); any other text is a skip.
LABEL_TEXTS: dict[str, str] = {"0": SUPPORTED, "1": NEI, "2": REFUTED}
#: The columns mojibake is repaired in.
TEXT_COLUMNS = frozenset(COLUMNS_12 + COLUMNS_18) - {"label", "date", "url", "en_ids", "de_ids"}


def _mojibake_pattern(codec: str) -> re.Pattern[str]:
    """A UTF-8 multi-byte sequence whose bytes were decoded one by one with ``codec`` (bytes it leaves undefined
    skipped): a lead byte of 2, 3 or 4 bytes, then its continuation bytes."""
    lead2, lead3, lead4, cont = (re.escape(bytes(range(lo, hi + 1)).decode(codec, errors="ignore"))
                                 for lo, hi in ((0xC2, 0xDF), (0xE0, 0xEF), (0xF0, 0xF4), (0x80, 0xBF)))
    return re.compile(f"[{lead2}][{cont}]|[{lead3}][{cont}]{{2}}|[{lead4}][{cont}]{{3}}")


_MOJIBAKE = {codec: _mojibake_pattern(codec) for codec in ("mac_roman", "cp1252")}


def fix_mojibake(text: str) -> tuple[str, int]:
    """Repair UTF-8 text mis-decoded as Mac Roman or Windows-1252; return (text, repairs made). Only sequences
    valid as UTF-8 once re-encoded are replaced (``"√º"``, ``"Ã¼"`` → ``"ü"``), so ``"ß"`` or ``"√2"`` stay."""
    if not text or text.isascii():
        return text, 0
    total = 0
    for codec, pattern in _MOJIBAKE.items():
        def repl(m: re.Match[str]) -> str:
            nonlocal total
            try:
                fixed = m.group(0).encode(codec).decode("utf-8")
            except (UnicodeEncodeError, UnicodeDecodeError):
                return m.group(0)
            total += 1
            return fixed

        text = pattern.sub(repl, text)
    return text, total


_AUTHOR_SPLIT = re.compile(r"\s*,\s*|\s*;\s*|\s*&\s*|\s+und\s+", re.IGNORECASE)


def split_authors(text: str) -> list[str]:
    """``"A, B und C"`` → ``["A", "B", "C"]`` (commas, ";", "&" and "und"; order kept, no empties)."""
    names = [n.strip(" .\t") for n in _AUTHOR_SPLIT.split(normalize_text(text or ""))]
    return [n for n in names if n]


def _parse_list(value: str) -> list[object]:
    """A Python list literal's items ([] for anything else)."""
    try:
        parsed = ast.literal_eval((value or "").strip())  # "" is a SyntaxError too
    except (ValueError, SyntaxError):
        return []
    return list(parsed) if isinstance(parsed, (list, tuple)) else []


@dataclass
class ReleaseRow:
    """One claim of the release, cleaned."""

    row: int  #: 0-based position in the file (the order the authors' folds use)
    url: str
    de_claim: str
    en_claim: str
    de_explanation: str
    en_explanation: str
    de_evidence: list[str]  #: gold evidence sentences, German
    en_evidence: list[str]  #: gold evidence sentences, English (not aligned 1:1 with the German)
    label: str
    label_code: int
    de_verdict: str
    evidence_level: str | None
    small_effect: bool
    title: str
    authors: list[str]
    date: str | None
    date_text: str
    variant: str  #: "12col" or "18col"
    # the 18-column variant only: the article's sentences and the gold indices into them
    de_sentences: list[str] | None = None
    en_sentences: list[str] | None = None
    de_ids: list[int] | None = None
    en_ids: list[int] | None = None


@dataclass
class ReleaseReport(SkipReport):
    """What reading the release did: counts and skipped rows (:class:`SkipReport`), repairs and oddities."""

    source: str = ""
    variant: str = ""
    mojibake: list[dict[str, object]] = field(default_factory=list)
    empty_explanations: list[dict[str, object]] = field(default_factory=list)
    verdict_issues: list[dict[str, object]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        fixed_rows = len({m["row"] for m in self.mojibake})
        return dict(super().as_dict(), source=self.source, variant=self.variant, mojibake=self.mojibake,
                    mojibake_fixed_fields=len(self.mojibake), mojibake_fixed_rows=fixed_rows,
                    empty_explanations=self.empty_explanations, verdict_issues=self.verdict_issues)


def _evidence_from_ids(sentences: list[str], ids: list[int]) -> list[str]:
    return [normalize_text(str(sentences[i])) for i in ids if isinstance(i, int) and 0 <= i < len(sentences)]


def read_release(path: str | os.PathLike) -> tuple[list[ReleaseRow], ReleaseReport]:
    """Read and clean a release file (either variant); return its rows in file order and a report."""
    header, records = read_csv_records(path)
    cols = set(header)
    old = "de_top_sentences" not in cols and "en_top_sentences" not in cols and bool(cols & set(VARIANT_COLUMNS["18col"]))
    variant = "18col" if old else "12col"
    # an InputFileError naming the file and every missing column
    require_columns(path, cols, REQUIRED + VARIANT_COLUMNS[variant], what="HealthFC release file")
    report = ReleaseReport("healthfc.release", source=str(path), variant=variant)
    rows: list[ReleaseRow] = []
    for i, record in enumerate(records):
        report.count("rows")
        where = f"{path}:{record.line}"
        if problem := field_count_problem(record, header):
            report.skip(where, "wrong_field_count", f"row {i}: {problem}")
            continue
        rec: dict[str, str] = {}
        for col, value in zip(header, record.fields):
            if col in TEXT_COLUMNS and value:
                fixed, n = fix_mojibake(value)
                if n:
                    report.mojibake.append({"row": i, "column": col, "repairs": n,
                                            "before": _excerpt(value, fixed), "after": _excerpt(fixed, value)})
                    value = fixed
            rec[col] = value
        code_text = rec["label"].strip()
        if code_text not in LABEL_TEXTS:
            codes = ", ".join(repr(c) for c in LABEL_TEXTS)
            report.skip(where, "bad_label", f"row {i}: label {code_text!r} is not one of the release's codes {codes}")
            continue
        label = LABEL_TEXTS[code_text]
        url = rec["url"].strip()
        if not re.match(r"^https?://", url):
            report.skip(where, "bad_url", f"row {i}: url {url!r}")
            continue
        de_claim = normalize_text(rec["de_claim"])
        if not de_claim:
            report.skip(where, "empty_claim", f"row {i}: {url}")
            continue
        de_verdict = normalize_text(rec.get("de_verdict", ""))
        level, small = None, False
        try:
            verdict = verdict_from_text(de_verdict)
            level, small = verdict.evidence_level, verdict.small_effect
            if verdict.label != label:
                report.count("verdict_label_mismatch")
                report.verdict_issues.append({"row": i, "issue": "label_mismatch", "de_verdict": de_verdict,
                                              "label": label, "verdict_label": verdict.label})
        except UnknownVerdict as exc:
            report.count("verdict_unknown")
            report.verdict_issues.append({"row": i, "issue": "unknown_verdict", "de_verdict": de_verdict,
                                          "detail": str(exc)})
        de_sentences = en_sentences = de_ids = en_ids = None
        if variant == "12col":
            de_evidence = split_sentences(rec.get("de_top_sentences") or "", "de")
            en_evidence = split_sentences(rec.get("en_top_sentences") or "", "en")
        else:
            de_sentences = [normalize_text(str(s)) for s in _parse_list(rec["de_sentences"])]
            en_sentences = [normalize_text(str(s)) for s in _parse_list(rec["en_sentences"])]
            de_ids = [int(x) for x in _parse_list(rec["de_ids"]) if str(x).lstrip("-").isdigit()]
            en_ids = [int(x) for x in _parse_list(rec["en_ids"]) if str(x).lstrip("-").isdigit()]
            de_evidence = _evidence_from_ids(de_sentences, de_ids)
            en_evidence = _evidence_from_ids(en_sentences, en_ids)
            if not de_sentences:
                report.count("no_sentence_list")
        if not de_evidence:
            report.count("no_evidence")
        for lang in ("de", "en"):
            if not normalize_text(rec.get(f"{lang}_explanation", "")):
                report.count(f"empty_explanation_{lang}")
                report.empty_explanations.append({"row": i, "lang": lang, "url": url})
        date_text = normalize_text(rec.get("date", ""))
        texts = {k: normalize_text(rec.get(k, "")) for k in ("en_claim", "de_explanation", "en_explanation")}
        rows.append(ReleaseRow(
            row=i, url=url, de_claim=de_claim, **texts, de_evidence=de_evidence, en_evidence=en_evidence,
            label=label, label_code=int(code_text), de_verdict=de_verdict, evidence_level=level, small_effect=small,
            title=TITLE_SUFFIX.sub("", normalize_text(rec.get("de_title", ""))), authors=split_authors(rec.get("authors", "")),
            date=m.group(0) if (m := re.match(r"^\d{4}-\d{2}-\d{2}", date_text)) else parse_german_date(date_text),
            date_text=date_text, variant=variant,
            de_sentences=de_sentences, en_sentences=en_sentences, de_ids=de_ids, en_ids=en_ids,
        ))
        report.count(f"label/{label}")
        report.count(f"level/{level}")
        report.count("evidence_sentences_de", len(de_evidence))
    report.count("kept", len(rows))
    report.count("mojibake_fixed_fields", len(report.mojibake))
    report.count("mojibake_fixed_rows", len({m["row"] for m in report.mojibake}))
    log.info("release %s (%s): %d rows kept, %d skipped, %d mojibake fields repaired",
             path, variant, len(rows), len(report.skipped), len(report.mojibake))
    return rows, report


def _excerpt(text: str, other: str, width: int = 30) -> str:
    """The part of ``text`` around its first difference from ``other``."""
    i = next((k for k, (a, b) in enumerate(zip(text, other)) if a != b), min(len(text), len(other)))
    return text[max(0, i - width): i + width]


def release_cache_path(url: str, cache_dir: str | os.PathLike) -> Path:
    """Where a downloaded release lives: ``<cache>/healthfc/release/<hash>-<file name>``."""
    name = Path(urlparse(url).path).name or "Datensatz.csv"
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return Path(cache_dir) / "healthfc" / "release" / f"{digest}-{name}"


def fetch_release(source: str | os.PathLike, cache_dir: str | os.PathLike, *, client: HttpClient | None = None) -> tuple[Path, bool]:
    """``(path, from_cache)``: a local path as is (the plan checked that it exists), or a URL downloaded once."""
    return local_or_cached(source, release_cache_path(str(source), cache_dir), client)
