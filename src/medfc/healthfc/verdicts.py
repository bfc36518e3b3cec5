"""Medizin Transparent verdicts (the answer scale, a verdict text or a pre-2014 "Beweislage" and its direction,
docs/sources.md §1, §1a) → HealthFC ``label``, ``evidence_level`` and ``small_effect`` by the rules of docs/healthfc.md
§1a; a text no rule covers raises :class:`UnknownVerdict` (counted by the caller, never guessed)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from medfc.common.labels import NOT_ENOUGH_INFO as NEI, REFUTED, SUPPORTED

LABELS = (SUPPORTED, NEI, REFUTED)
LEVELS = ("high", "moderate", "low", "insufficient", "conflicting")

#: The current layout's answer scale: index → text (7 is unused on the portal).
ANSWER_SCALE: dict[int, str] = {
    1: "Ja, möglicherweise", 2: "Ja, wahrscheinlich", 3: "Ja",
    4: "Ja, möglicherweise ein bisschen", 5: "Ja, wahrscheinlich ein bisschen", 6: "Ja, ein bisschen",
    8: "Nein, möglicherweise nicht", 9: "Nein, wahrscheinlich nicht", 10: "Nein",
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
    """A verdict text that no mapping rule covers."""


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip().lower()


_SCALE_BY_TEXT = {_key(v): k for k, v in ANSWER_SCALE.items()}  # a verdict text on the scale → its index


def verdict_from_text(text: str, answer_index: int | None = None) -> Verdict:
    """Map an answer-scale index (which wins over the text; one off the scale raises) or a verdict text of any layout."""
    if answer_index is not None:
        if answer_index not in ANSWER_SCALE:
            raise UnknownVerdict(f"answer index {answer_index} is not on the answer scale")
        t = _key(ANSWER_SCALE[answer_index])
        index = answer_index
    else:
        t = _key(text)
        index = _SCALE_BY_TEXT.get(t)
    if not t:
        raise UnknownVerdict("empty verdict")
    if _CONFLICTING.search(t):
        return Verdict(NEI, "conflicting", False, index)
    if _INSUFFICIENT.search(t):
        return Verdict(NEI, "insufficient", False, index)
    if m := _BEWEISLAGE.match(t):
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
    level = "low" if "möglicherweise" in t else "moderate" if "wahrscheinlich" in t else "high"
    return Verdict(label, level, "ein bisschen" in t, index)


def verdict_from_beweislage(text: str) -> Verdict:
    """Map a pre-2014 "Beweislage" cell ("Mittlere wissenschaftliche Beweislage dafür"); a cell that is not one raises."""
    t = _key(text)
    if "beweislage" not in t and not _INSUFFICIENT.search(t):
        raise UnknownVerdict(f"Beweislage {text!r} matches no rule")
    return verdict_from_text(text)
