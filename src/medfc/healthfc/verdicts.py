"""Medizin Transparent verdicts → HealthFC labels and levels of evidence (docs/sources.md §1, §1a).

The portal answers on an answer scale (current layout), with a free verdict text (2014–2017 layout) or with a
"Beweislage" plus a direction (before June 2014); the release's ``de_verdict`` holds all of these, also lower-case,
comma-less and reversed ("möglicherweise Nein", "wahrscheinlich nicht"). Each maps to a ``label`` (NOT ENOUGH INFO:
evidence missing or conflicting), an ``evidence_level`` (``high``: plain Ja/Nein, Hohe; ``moderate``: wahrscheinlich,
Mittlere; ``low``: möglicherweise, Niedrige; ``insufficient``; ``conflicting``) and ``small_effect`` ("ein bisschen").

The rules, in the order :func:`verdict_from_text` applies them (docs/healthfc.md §1 has the table):

1. "widersprüchlich" anywhere → NOT ENOUGH INFO / conflicting.
2. "Belege fehlen", "Beweise fehlen", "Beweislage unzureichend", "Unzureichende …",
   "Ungenügende …", "nicht (ausreichend) erforscht" → NOT ENOUGH INFO / insufficient.
3. "<Hohe|Mittlere|Niedrige> wissenschaftliche Beweislage [| : , –] <direction>" (pre-2014):
   the level comes from the first word; the direction is free text and is REFUTED when it
   contains a negation (:data:`NEGATION`: "gegen", "dagegen", "nicht", "Nicht-…", "kein…",
   "nein"; so "stimmt wahrscheinlich nicht" too), SUPPORTED otherwise ("für …", "dafür",
   "möglicherweise"). An empty direction matches no rule.
4. Answer words: a negation ("nein", "nicht", "kein…") → REFUTED; otherwise "ja", or a bare
   "möglicherweise"/"wahrscheinlich" (an abbreviated yes) → SUPPORTED. The negation decides the
   direction wherever it stands, so "möglicherweise Nein" is REFUTED, never a yes. The level is
   low with "möglicherweise", moderate with "wahrscheinlich", high otherwise.

Anything else raises :class:`UnknownVerdict` (the caller counts it; it is never guessed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medfc.common.labels import NOT_ENOUGH_INFO as NEI, REFUTED, SUPPORTED

LABELS = (SUPPORTED, NEI, REFUTED)
LEVELS = ("high", "moderate", "low", "insufficient", "conflicting")

#: The current layout's answer scale: index → text (7 is unused on the portal).
ANSWER_SCALE: dict[int, str] = {
    1: "Ja, möglicherweise",
    2: "Ja, wahrscheinlich",
    3: "Ja",
    4: "Ja, möglicherweise ein bisschen",
    5: "Ja, wahrscheinlich ein bisschen",
    6: "Ja, ein bisschen",
    8: "Nein, möglicherweise nicht",
    9: "Nein, wahrscheinlich nicht",
    10: "Nein",
    11: "Wissenschaftliche Belege fehlen",
}

_PRE2014_LEVELS = {"hohe": "high", "mittlere": "moderate", "niedrige": "low"}
_BEWEISLAGE = re.compile(
    r"^(?P<level>hohe|mittlere|niedrige)\s+wissenschaftliche\s+beweislage\b\s*[|:,;–—-]?\s*(?P<direction>.*)$",
    re.IGNORECASE,
)
_CONFLICTING = re.compile(r"widersprüchlich|widerspruchlich")
_INSUFFICIENT = re.compile(
    r"(belege|beweise)\s+fehlen|beweislage\s+(unzureichend|ungenügend)|\b(unzureichende|ungenügende)\b"
    r"|nicht\s*\(?\s*(ausreichend\s*)?\)?\s*erforscht"
)
#: Negations that make a direction or an answer REFUTED ("Nicht-Wirksamkeit" matches "nicht").
NEGATION = re.compile(r"\b(nein|nicht|kein\w*|gegen|dagegen)\b")
_WORD = re.compile(r"[a-zäöüß]+")


@dataclass(frozen=True)
class Verdict:
    label: str
    evidence_level: str
    small_effect: bool
    answer_index: int | None


class UnknownVerdict(ValueError):
    """Raised for a verdict text that no mapping rule covers (the claim is then skipped or counted)."""


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip()


def _key(text: str) -> str:
    return _norm(text).lower()


_SCALE_BY_TEXT = {_key(v): k for k, v in ANSWER_SCALE.items()}


def index_for_text(text: str) -> int | None:
    """The answer-scale index of a verdict text, or None when the text is not on the scale."""
    return _SCALE_BY_TEXT.get(_key(text))


def _hedge_level(t: str) -> str:
    return "low" if "möglicherweise" in t else "moderate" if "wahrscheinlich" in t else "high"


def verdict_from_text(text: str, answer_index: int | None = None) -> Verdict:
    """Map an answer-scale index (which wins over the text; one off the scale raises) or a verdict text of any layout."""
    if answer_index is not None:
        if answer_index not in ANSWER_SCALE:
            raise UnknownVerdict(f"answer index {answer_index} is not on the answer scale")
        t = _key(ANSWER_SCALE[answer_index])
        index = answer_index
    else:
        t = _key(text)
        index = index_for_text(text)
    if not t:
        raise UnknownVerdict("empty verdict")
    if _CONFLICTING.search(t):
        return Verdict(NEI, "conflicting", False, index)
    if _INSUFFICIENT.search(t):
        return Verdict(NEI, "insufficient", False, index)
    m = _BEWEISLAGE.match(t)
    if m:
        direction = m.group("direction").strip(" .")
        if not _WORD.search(direction):
            raise UnknownVerdict(f"Beweislage {text!r} has no direction")
        label = REFUTED if NEGATION.search(direction) else SUPPORTED
        return Verdict(label, _PRE2014_LEVELS[m.group("level").lower()], False, None)
    if "beweislage" in t:
        raise UnknownVerdict(f"Beweislage {text!r} matches no rule")
    words = set(_WORD.findall(t))
    if NEGATION.search(t):
        label = REFUTED
    elif "ja" in words or words & {"möglicherweise", "wahrscheinlich"}:
        label = SUPPORTED
    else:
        raise UnknownVerdict(f"verdict text {text!r} matches no rule")
    return Verdict(label, _hedge_level(t), "ein bisschen" in t, index)


def verdict_from_beweislage(text: str) -> Verdict:
    """Map a pre-2014 "Beweislage" cell ("Mittlere wissenschaftliche Beweislage dafür"); a cell that is not one raises."""
    t = _key(text)
    if "beweislage" not in t and not _INSUFFICIENT.search(t):
        raise UnknownVerdict(f"Beweislage {text!r} matches no rule")
    return verdict_from_text(text)
