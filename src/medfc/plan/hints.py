"""The hint a config message gives for a misspelt name."""

from __future__ import annotations

import difflib
from typing import Any


def did_you_mean(name: str, choices: Any) -> str:
    """``"; did you mean <the closest of choices>?"``, or ``""`` when none is close: a config message's hint."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""
