"""Join the HealthFC release to the crawl (docs/healthfc.md §2b): rows → crawled claims, then each row's evidence
sentences → ids of its article's sentences (``exact``, ``contained``, ``merged``, ``fuzzy``, else *unaligned*)."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from urllib.parse import unquote, urlparse

from rapidfuzz import fuzz, process

from medfc.common.jsontypes import JSONValue
from medfc.healthfc.records import ClaimRecord
from medfc.healthfc.release import ReleaseRow
from medfc.healthfc.sentences import normalize_text


def normalize_url(url: str) -> str:
    """``https://www.Host.at/a/b/?x#y`` and ``http://host.at/a/b`` → ``host.at/a/b`` (percent-encoding decoded, NFC)."""
    parsed = urlparse((url or "").strip())
    host = (parsed.hostname or "").lower().removeprefix("www.")
    return host + unicodedata.normalize("NFC", unquote(parsed.path or "").rstrip("/"))


_QUOTES = str.maketrans({
    "„": '"', "“": '"', "”": '"', "‟": '"', "«": '"', "»": '"', "″": '"',
    "‚": "'", "‘": "'", "’": "'", "‛": "'", "‹": "'", "›": "'", "´": "'", "`": "'", "′": "'",
    "–": "-", "—": "-", "‑": "-", "−": "-",
    "\u00a0": " ", "\u202f": " ", "\u2009": " ",
})
# footnote marks glued to a word or punctuation: "Studie1." "Studie.1 " "[1]" "(2,3)"
_FOOTNOTE = re.compile(r"\[\d+(?:[,–-]\s*\d+)*\]|(?<=[a-zäöüß.)])\d{1,2}(?=[\s.,;:]|$)")


def normalize_sentence(text: str) -> str:
    """Comparison form of a sentence: NFC, quotes/dashes unified, footnote marks and extra space gone."""
    text = " ".join(_FOOTNOTE.sub("", normalize_text(text or "").translate(_QUOTES)).split())
    return re.sub(r"\s+([.,;:!?)])", r"\1", text)


@dataclass
class SentenceAlignment:
    """Where one release evidence sentence was found in the crawled article."""

    text: str
    ids: list[int]
    method: str  #: exact | contained | merged | fuzzy | unaligned
    score: float
    best_id: int | None = None  #: the nearest candidate (also for unaligned sentences)

    @property
    def aligned(self) -> bool:
        return bool(self.ids)


def _merged_ids(piece: str, norm: Sequence[str]) -> list[int] | None:
    """Ids of consecutive sentences whose concatenation is ``piece`` (at least two)."""
    target = piece.replace(" ", "")
    for start, first in enumerate(norm):
        f = first.replace(" ", "")
        if not f or not target.startswith(f) or len(f) >= len(target):
            continue
        acc = f
        ids = [start]
        for k in range(start + 1, len(norm)):
            acc += norm[k].replace(" ", "")
            ids.append(k)
            if acc == target:
                return ids
            if not target.startswith(acc):
                break
    return None


def align_evidence(evidence: Sequence[str], sentences: Sequence[str], threshold: float,
                   min_contained_chars: int) -> list[SentenceAlignment]:
    """Align each evidence sentence to ids of ``sentences`` (see the module doc for the order)."""
    norm = [normalize_sentence(s) for s in sentences]
    first = {s: i for i, s in reversed(list(enumerate(norm)))}  # each normal form's first id
    out: list[SentenceAlignment] = []
    for text in evidence:
        piece = normalize_sentence(text)
        if not piece:
            continue
        if piece in first:
            out.append(SentenceAlignment(text, [first[piece]], "exact", 100.0, first[piece]))
            continue
        if len(piece) >= min_contained_chars:
            holders = [i for i, s in enumerate(norm) if piece in s]
            if len(holders) == 1:
                i = holders[0]
                out.append(SentenceAlignment(text, [i], "contained", round(100.0 * len(piece) / len(norm[i]), 2), i))
                continue
        merged = _merged_ids(piece, norm)
        if merged:
            out.append(SentenceAlignment(text, merged, "merged", 100.0, merged[0]))
            continue
        best = process.extractOne(piece, norm, scorer=fuzz.ratio) if norm else None
        if best is not None and best[1] >= threshold:
            out.append(SentenceAlignment(text, [best[2]], "fuzzy", round(float(best[1]), 2), best[2]))
        else:
            score = round(float(best[1]), 2) if best is not None else 0.0
            out.append(SentenceAlignment(text, [], "unaligned", score, best[2] if best is not None else None))
    return out


@dataclass
class ClaimMatch:
    release_row: int
    claim_id: str
    score: float  #: similarity of the German claim texts (0–100)


def claim_similarity(a: str, b: str) -> float:
    """Similarity (0–100) of two German claim texts: ``token_sort_ratio`` of their lower-cased normal forms."""
    return float(fuzz.token_sort_ratio(normalize_sentence(a).lower(), normalize_sentence(b).lower()))


def match_claims(rows: Sequence[ReleaseRow], claims: Sequence[ClaimRecord],
                 min_score: float) -> tuple[list[ClaimMatch], list[int], list[str], dict[str, object]]:
    """Pair release rows with crawled claims: ``(matches, unmatched_rows, unmatched_claim_ids, details)``. Inside an
    article with several rows or claims a pair needs ``min_score``; a lone row/claim pair is always matched."""
    by_url_rows: dict[str, list[ReleaseRow]] = defaultdict(list)
    for r in rows:
        by_url_rows[normalize_url(r.url)].append(r)
    by_url_claims: dict[str, list[ClaimRecord]] = defaultdict(list)
    for c in claims:
        by_url_claims[normalize_url(c["url"])].append(c)
    matches: list[ClaimMatch] = []
    unmatched_rows: list[int] = []
    low: list[dict[str, int | str | float]] = []
    for key, group in by_url_rows.items():
        cands = by_url_claims.get(key, [])
        if not cands:
            unmatched_rows.extend(r.row for r in group)
            continue
        lone = len(group) == 1 and len(cands) == 1  # a lone pair is matched whatever its score (a low one listed)
        scored = ((claim_similarity(r.de_claim, c["question"]), r.row, c["claim_id"]) for r in group for c in cands)
        pairs = sorted(scored, key=lambda t: (-t[0], t[1], t[2]))
        used_rows: set[int] = set()
        used_claims: set[str] = set()
        for score, row, cid in pairs:
            if row in used_rows or cid in used_claims or (score < min_score and not lone):
                continue
            used_rows.add(row)
            used_claims.add(cid)
            matches.append(ClaimMatch(row, cid, round(score, 2)))
            if lone and score < min_score:
                low.append({"release_row": row, "claim_id": cid, "score": round(score, 2)})
        unmatched_rows.extend(r.row for r in group if r.row not in used_rows)
    matched_ids = {m.claim_id for m in matches}
    unmatched_claims = sorted(c["claim_id"] for c in claims if c["claim_id"] not in matched_ids)
    matches.sort(key=lambda m: m.release_row)
    return matches, sorted(unmatched_rows), unmatched_claims, {"low_score_single_pairs": low}


@dataclass
class AlignmentResult:
    """Everything the dataset needs from the alignment, plus its report."""

    matches: list[ClaimMatch]
    unmatched_rows: list[int]
    unmatched_claims: list[str]
    evidence: dict[int, list[SentenceAlignment]] = field(default_factory=dict)  #: release row → alignments
    details: dict[str, object] = field(default_factory=dict)
    sections: dict[int, list[str]] = field(default_factory=dict)  #: release row → its article's sentence sections

    def evidence_ids(self, row: int) -> list[int]:
        return sorted({i for a in self.evidence.get(row, []) for i in a.ids})

    def report(self) -> dict[str, object]:
        methods: dict[str, int] = defaultdict(int)
        by_section: dict[str, int] = defaultdict(int)
        unaligned: list[dict[str, object]] = []
        by_row = {m.release_row: m.claim_id for m in self.matches}
        for row, alignments in sorted(self.evidence.items()):
            for a in alignments:
                methods[a.method] += 1
                if not a.aligned:
                    unaligned.append({"release_row": row, "claim_id": by_row.get(row), "sentence": a.text,
                                      "best_id": a.best_id, "best_score": a.score})
                elif row in self.sections:
                    secs = {self.sections[row][i] for i in a.ids if i < len(self.sections[row])}
                    by_section[secs.pop() if len(secs) == 1 else "mixed"] += 1
        total = sum(methods.values())
        aligned = total - methods.get("unaligned", 0)
        return {
            "release_rows_matched": len(self.matches), "release_rows_unmatched": len(self.unmatched_rows),
            "crawled_claims_unmatched": len(self.unmatched_claims), "evidence_sentences": total,
            "evidence_sentences_aligned": aligned, "alignment_rate": round(aligned / total, 4) if total else None,
            "by_method": dict(sorted(methods.items())), "aligned_by_section": dict(sorted(by_section.items())),
            "unaligned": unaligned, "unmatched_release_rows": self.unmatched_rows,
            "unmatched_crawled_claims": self.unmatched_claims, "matches": [asdict(m) for m in self.matches],
            **self.details,
        }


def align_release(rows: Sequence[ReleaseRow], claims: Sequence[ClaimRecord], article_sentences: dict[str, list[str]],
                  threshold: float, min_claim_score: float, min_contained_chars: int,
                  sections: dict[str, list[str]] | None = None) -> AlignmentResult:
    """Match rows to claims, then align each matched row's evidence in its article's sentences; ``sections``
    (``article_id`` → each sentence's section) feeds ``aligned_by_section``."""
    matches, unmatched_rows, unmatched_claims, details = match_claims(rows, claims, min_claim_score)
    claim_by_id = {c["claim_id"]: c for c in claims}
    row_by_id = {r.row: r for r in rows}
    result = AlignmentResult(matches, unmatched_rows, unmatched_claims, details=details)
    for m in matches:
        row = row_by_id[m.release_row]
        aid = claim_by_id[m.claim_id]["article_id"]
        sentences = article_sentences.get(aid, [])
        result.evidence[m.release_row] = align_evidence(row.de_evidence, sentences, threshold, min_contained_chars)
        if sections is not None and aid in sections:
            result.sections[m.release_row] = list(sections[aid])
    return result


def alignment_records(result: AlignmentResult) -> list[dict[str, object]]:
    """One JSON-able record per matched release row (the ``alignment.jsonl`` artifact)."""
    return [{"release_row": m.release_row, "claim_id": m.claim_id, "claim_score": m.score, "evidence_ids": result.evidence_ids(m.release_row),
             "sentences": [asdict(a) for a in result.evidence.get(m.release_row, [])]} for m in result.matches]


def alignment_from_records(records: Sequence[Mapping[str, JSONValue]]) -> AlignmentResult:
    """Rebuild the matches and sentence alignments written by :func:`alignment_records`."""
    matches = [ClaimMatch(int(r["release_row"]), str(r["claim_id"]), float(r.get("claim_score", 0.0))) for r in records]
    result = AlignmentResult(matches, [], [])
    for r in records:
        result.evidence[int(r["release_row"])] = [
            SentenceAlignment(a["text"], [int(i) for i in a["ids"]], a["method"], float(a["score"]), a.get("best_id"))
            for a in r.get("sentences", [])
        ]
    return result
