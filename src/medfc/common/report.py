"""Counted, logged reasons for every item a step skips: bad input never stops a run and never disappears."""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from medfc.common.io import atomic_write
from medfc.common.redact import redact

log = logging.getLogger(__name__)


class Skipped(TypedDict):
    """One skipped item: its id, the reason (a short key) and a detail (redacted)."""

    id: str
    reason: str
    detail: str


class ReportRecord(TypedDict):
    """A report as written (:meth:`SkipReport.as_dict`)."""

    step: str
    counts: dict[str, int]
    n_skipped: int
    skipped_by_reason: dict[str, int]
    excluded_by_reason: dict[str, int]
    skipped: list[Skipped]


@dataclass
class SkipReport:
    """Collects skipped items as (id, reason, detail) and the counts of what was kept."""

    step: str
    skipped: list[Skipped] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    excluded: Counter[str] = field(default_factory=Counter)

    def skip(self, item_id: str, reason: str, detail: str = "") -> None:
        detail = redact(detail)  # details quote error texts and URLs: never a credential in a report
        self.skipped.append({"id": str(item_id), "reason": reason, "detail": detail})
        log.warning("%s: skipped %s (%s%s)", self.step, item_id, reason, f": {detail}" if detail else "")

    def exclude(self, reason: str, n: int = 1) -> None:
        """Count items left out by design (a filter), not as bad: only counts are kept, so the report stays small."""
        self.excluded[reason] += n

    def keep_first(self, item_id: str | None, seen: set[str], duplicate: str = "duplicate_id", missing: str = "missing_id") -> bool:
        """True the first time ``item_id`` is seen (added to ``seen``); a missing or repeated id is skipped."""
        if not item_id:
            self.skip("?", missing)
            return False
        if item_id in seen:
            self.skip(item_id, duplicate)
            return False
        seen.add(item_id)
        return True

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] += n

    def reasons(self) -> dict[str, int]:
        return dict(sorted(Counter(s["reason"] for s in self.skipped).items()))

    def as_dict(self) -> ReportRecord:
        return {
            "step": self.step,
            "counts": dict(sorted(self.counts.items())),
            "n_skipped": len(self.skipped),
            "skipped_by_reason": self.reasons(),
            "excluded_by_reason": dict(sorted(self.excluded.items())),
            "skipped": sorted(self.skipped, key=lambda s: (s["reason"], s["id"])),
        }

    def write(self, path: str | Path) -> None:
        atomic_write(path, json.dumps(self.as_dict(), ensure_ascii=False, indent=2) + "\n")
