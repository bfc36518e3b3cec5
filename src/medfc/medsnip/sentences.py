"""Deterministic sentence splitting of an answer by the MedSNIP decomposer's rules (MedSNIP §9c, §9f; listed in
docs/medsnip.md), and atom → sentence alignment. Each :class:`Sentence` keeps its character span in the answer
(removed characters are masked, not deleted, so offsets never shift).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

CITATION_RE = re.compile(r"\[\s*[\d,\s\-–]+\s*\]")
BOLD_RE = re.compile(r"\*\*")
PREFIX_RE = re.compile(r"^(\s*)(#+\s+|[-*•]\s+|\d+\.\s+)")
GONE = "\x00"  # a removed character: keeps offsets, disappears from the sentence text
GLUE_RE = re.compile(r"\s*\x00+\s*(?=[.!?,;:])")
BOUNDARY_RE = re.compile(r"(?<=[.!?])\x00*\s[\s\x00]*(?=[A-Z(\"“])")
TOKEN_RE = re.compile(r"\b[\w']+\b")
SECTION_TITLES = frozenset({"step-by-step explanation", "step-by-step analysis", "patient presentation and initial assessment",
                            "differential diagnosis", "differential diagnosis analysis", "immediate management focus", "option analysis",
                            "options analysis", "most appropriate initial step", "most appropriate next step", "final answer", "conclusion",
                            "summary", "overview", "introduction", "background", "discussion", "key considerations",
                            "physical exam findings", "medical history and risk factors", "statements requiring authoritative references",
                            "statement requiring authoritative reference"})
HEADER_WORDS = frozenset({"step", "analysis", "presentation", "diagnosis", "management", "answer", "conclusion",
                          "summary", "overview", "rationale", "discussion", "considerations", "findings", "recommendations"})


@dataclass(frozen=True)
class Sentence:
    index: int
    text: str
    start: int
    end: int


def _mask(text: str, pattern: re.Pattern) -> str:
    return pattern.sub(lambda m: GONE * len(m.group(0)), text)


def is_header(line: str) -> bool:
    """A section header or meta line rather than a claim (see module docstring)."""
    core = line.strip(" .:;").rstrip(":")
    if not core or core.lower() in SECTION_TITLES:
        return True
    words = core.split()
    colon = line.rstrip().endswith(":")
    title_case = sum(1 for w in words if w[:1].isupper()) >= max(1, len(words) - 1)
    if len(words) <= 6 and "." not in core and "," not in core and title_case:
        if colon or any(w.lower() in HEADER_WORDS for w in words):
            return True
    return colon and len(words) <= 8


def _trim(masked: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) past whitespace and the characters `` .;:`` at both ends."""
    while start < end and masked[start] in " \t\r\n.;:" + GONE:
        start += 1
    while end > start and masked[end - 1] in " \t\r\n.;:" + GONE:
        end -= 1
    return start, end


def split_sentences(text: str) -> list[Sentence]:
    """The answer's sentences with their spans (see module docstring)."""
    text = text or ""
    masked = _mask(_mask(text, CITATION_RE), BOLD_RE)
    out: list[Sentence] = []
    pos = 0
    for line in masked.split("\n"):
        line_start = pos
        pos += len(line) + 1
        m = PREFIX_RE.match(line)
        if m:
            line = line[: m.start(2)] + GONE * len(m.group(2)) + line[m.end(2):]
        if not line.replace(GONE, "").strip() or is_header(line.replace(GONE, "").strip()):
            continue
        cuts = [0, *(b.start() for b in BOUNDARY_RE.finditer(line)), len(line)]
        for a, b in zip(cuts, cuts[1:]):
            s, e = _trim(line, a, b)
            # a removed marker takes the space before it along when punctuation follows ("skin [1]." -> "skin.")
            piece = " ".join(GLUE_RE.sub("", line[s:e]).replace(GONE, "").split())
            if len(piece.split()) < 2 or is_header(piece):
                continue
            out.append(Sentence(len(out), piece, line_start + s, line_start + e))
    return out


def token_recall(atom: str, sentence: str) -> float:
    """Share of the atom's word tokens that occur in the sentence."""
    a, s = ({t.lower() for t in TOKEN_RE.findall(text or "")} for text in (atom, sentence))
    return len(a & s) / len(a) if a and s else 0.0


def align_atoms(atoms: Sequence[str], sentences: Sequence[Sentence], min_recall: float = 0.5) -> list[int | None]:
    """For each atom, the index of the sentence with the highest token recall (first on ties), or None
    when that recall is below ``min_recall``."""
    out: list[int | None] = []
    for atom in atoms:
        best, best_r = None, 0.0
        for s in sentences:
            r = token_recall(atom, s.text)
            if r > best_r:
                best, best_r = s.index, r
        out.append(best if best_r >= min_recall else None)
    return out


def numbered(sentences: Sequence[Sentence]) -> str:
    """``[0] First sentence.`` lines, as the decomposer prompts show them."""
    return "\n".join(f"[{s.index}] {s.text}" for s in sentences)
