"""Medizin Transparent verdicts → HealthFC labels and levels of evidence (SOURCES.md §1).

The portal answers each question on an answer scale (current layout), with a free verdict text
(2014–2017 layout) or with a "Beweislage" (evidence level) plus a direction (before June 2014).
All three are mapped to the paper's three labels and a level of evidence:

* ``label``: ``SUPPORTED`` (Ja…), ``REFUTED`` (Nein…), ``NOT ENOUGH INFO`` (evidence missing or
  conflicting).
* ``evidence_level``: ``high`` (plain Ja/Nein, Hohe), ``moderate`` (wahrscheinlich, Mittlere),
  ``low`` (möglicherweise, Niedrige), ``insufficient`` (Belege/Beweise fehlen, Unzureichende) or
  ``conflicting`` (Studienlage widersprüchlich).
* ``small_effect``: the "ein bisschen" answers (a small effect).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUPPORTED = "SUPPORTED"
REFUTED = "REFUTED"
NEI = "NOT ENOUGH INFO"
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

_PRE2014_LEVELS = {"hohe": "high", "mittlere": "moderate", "niedrige": "low", "unzureichende": "insufficient"}
_BEWEISLAGE = re.compile(
    r"(?P<level>hohe|mittlere|niedrige|unzureichende)\s+wissenschaftliche\s+beweislage\s*[:,–-]?\s*(?P<direction>.*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    label: str
    evidence_level: str
    small_effect: bool
    answer_index: int | None


class UnknownVerdict(ValueError):
    """Raised for a verdict text that no mapping rule covers (the claim is then skipped)."""


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip()


def _key(text: str) -> str:
    return _norm(text).lower()


_SCALE_BY_TEXT = {_key(v): k for k, v in ANSWER_SCALE.items()}


def index_for_text(text: str) -> int | None:
    """The answer-scale index of a verdict text, or None when the text is not on the scale."""
    return _SCALE_BY_TEXT.get(_key(text))


def verdict_from_text(text: str, answer_index: int | None = None) -> Verdict:
    """Map an answer-scale index and/or verdict text (current and 2014–2017 layouts).

    When an index is given it wins over the text (the text is then only a check); an index
    outside the scale raises :class:`UnknownVerdict`.
    """
    if answer_index is not None:
        if answer_index not in ANSWER_SCALE:
            raise UnknownVerdict(f"answer index {answer_index} is not on the answer scale")
        text_for_rules = ANSWER_SCALE[answer_index]
    else:
        text_for_rules = text
    t = _key(text_for_rules)
    if not t:
        raise UnknownVerdict("empty verdict")
    if "widersprüchlich" in t or "widerspruchlich" in t:
        return Verdict(NEI, "conflicting", False, answer_index)
    if re.search(r"(belege|beweise)\s+fehlen|beweislage\s+unzureichend|unzureichende", t):
        return Verdict(NEI, "insufficient", False, answer_index if answer_index is not None else index_for_text(text))
    if t.startswith("ja"):
        label = SUPPORTED
    elif t.startswith("nein"):
        label = REFUTED
    elif t.startswith(("wahrscheinlich", "möglicherweise")):
        # plain "wahrscheinlich" / "möglicherweise": an abbreviated positive answer
        label = SUPPORTED
    else:
        raise UnknownVerdict(f"verdict text {text!r} matches no rule")
    if "möglicherweise" in t:
        level = "low"
    elif "wahrscheinlich" in t:
        level = "moderate"
    else:
        level = "high"
    index = answer_index if answer_index is not None else index_for_text(text)
    return Verdict(label, level, "ein bisschen" in t, index)


def verdict_from_beweislage(text: str) -> Verdict:
    """Map a pre-2014 "Beweislage" cell, e.g. "Mittlere wissenschaftliche Beweislage dafür"."""
    m = _BEWEISLAGE.search(_norm(text))
    if not m:
        raise UnknownVerdict(f"Beweislage {text!r} matches no rule")
    level = _PRE2014_LEVELS[m.group("level").lower()]
    if level == "insufficient":
        return Verdict(NEI, "insufficient", False, None)
    direction = m.group("direction").lower()
    if re.search(r"\b(dagegen|gegen|nein)\b", direction):
        label = REFUTED
    elif re.search(r"\b(dafür|für|ja)\b", direction):
        label = SUPPORTED
    else:
        raise UnknownVerdict(f"Beweislage {text!r} has no direction (dafür/dagegen)")
    return Verdict(label, level, False, None)
