"""The translation memory (an append-only JSONL store keyed by ``(model, source)``, over read-only seeds) and the
manual corrections that override memory and model (docs/translation.md §2, §3)."""

from __future__ import annotations

import csv
import json
import os
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from medfc.common.appendlog import append_jsonl, read_appended
from medfc.common.io import atomic_output

ORIGINS = ("model", "correction", "deepl", "demo")


def normalize_key(text: str) -> str:
    """Memory keys: NFC and single spaces, so whitespace noise never causes a miss."""
    return " ".join(unicodedata.normalize("NFC", text).split())


@dataclass(frozen=True)
class MemoryRecord:
    model: str
    source: str
    target: str
    origin: str = "model"
    timestamp: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)


def _read_records(path: Path) -> tuple[list[MemoryRecord], int]:
    """Records of one JSONL memory file and the number of unreadable lines skipped (torn, not UTF-8, not a record)."""
    rows, skipped = read_appended(path, what="translation memory record",
                                  valid=lambda d: all(isinstance(d.get(k), str) for k in ("model", "source", "target")))
    records = [MemoryRecord(model=str(d["model"]), source=normalize_key(str(d["source"])), target=str(d["target"]),
                            origin=str(d.get("origin", "model")), timestamp=str(d.get("timestamp", ""))) for d in rows]
    return records, len(skipped)


class TranslationMemory:
    """(model, source) → target store: ``path`` the working store (created on first write), ``seeds`` read-only JSONL
    files loaded first, so the working store wins."""

    def __init__(self, path: str | os.PathLike | None, seeds: Sequence[str | os.PathLike] = ()):
        self.path = Path(path) if path is not None else None
        self._data: dict[tuple[str, str], MemoryRecord] = {}
        self.skipped_lines = 0
        for seed in seeds:
            self._load(Path(seed))
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        records, bad = _read_records(path)
        self.skipped_lines += bad
        for rec in records:
            self._data[(rec.model, rec.source)] = rec

    def __len__(self) -> int:
        return len(self._data)

    def get(self, model: str, source: str) -> str | None:
        rec = self.record(model, source)
        return rec.target if rec is not None else None

    def record(self, model: str, source: str) -> MemoryRecord | None:
        return self._data.get((model, normalize_key(source)))

    def put_many(self, model: str, pairs: Iterable[tuple[str, str]], origin: str = "model") -> int:
        """Add (source, target) pairs for ``model`` and append them to the working store."""
        if origin not in ORIGINS:
            raise ValueError(f"origin must be one of {ORIGINS}, not {origin!r}")
        stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
        new = [MemoryRecord(model, normalize_key(s), t, origin, stamp) for s, t in pairs]
        if not new:
            return 0
        for rec in new:
            self._data[(rec.model, rec.source)] = rec
        if self.path is not None:
            append_jsonl(self.path, (asdict(rec) for rec in new), fsync=True)
        return len(new)

    def merge(self, *paths: str | os.PathLike) -> int:
        """Append every record of other memory files (their entries win); return the number added."""
        added = 0
        for p in paths:
            records, bad = _read_records(Path(p))
            self.skipped_lines += bad
            by_origin: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for rec in records:
                by_origin.setdefault((rec.model, rec.origin), []).append((rec.source, rec.target))
            for (model, origin), pairs in by_origin.items():
                added += self.put_many(model, pairs, origin if origin in ORIGINS else "model")
        return added

    def compact(self, path: str | os.PathLike | None = None) -> int:
        """Rewrite the store (or write ``path``) sorted by (model, source), one line per key."""
        out = Path(path) if path is not None else self.path
        if out is None:
            raise ValueError("an in-memory TranslationMemory needs a path to compact into")
        with atomic_output(out, text=True) as fh:
            fh.writelines(rec.to_json() + "\n" for _, rec in sorted(self._data.items()))  # by (model, source)
        return len(self._data)


class Corrections:
    """Manual corrections from a TSV file: ``source<TAB>target[<TAB>model]`` with a header line."""

    def __init__(self, rows: Iterable[tuple[str, str, str]] = ()):
        # (model, source) → target; a row for every model has the model ""
        self._rows = {(model, normalize_key(source)): target for source, target, model in rows}

    @classmethod
    def load(cls, path: str | os.PathLike | None) -> Corrections:
        """Read a corrections TSV; ``None`` or a missing file gives no corrections."""
        if path is None or not Path(path).exists():
            return cls()
        rows: list[tuple[str, str, str]] = []
        with open(path, encoding="utf-8", newline="") as fh:
            lines = [ln for ln in fh if ln.strip() and not ln.lstrip().startswith("#")]
        reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            return cls()
        cols = [h.strip().lower() for h in header]
        if "source" not in cols or "target" not in cols:
            raise ValueError(f"{path}: corrections TSV needs a header 'source<TAB>target[<TAB>model]', got {header}")
        i_src, i_tgt = cols.index("source"), cols.index("target")
        i_model = cols.index("model") if "model" in cols else None
        for lineno, row in enumerate(reader, start=2):
            if len(row) <= max(i_src, i_tgt):
                raise ValueError(f"{path}: row {lineno} has {len(row)} fields, expected source and target")
            model = row[i_model].strip() if i_model is not None and i_model < len(row) else ""
            rows.append((row[i_src], row[i_tgt], model))
        return cls(rows)

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, model: str, source: str) -> str | None:
        key = normalize_key(source)
        hit = self._rows.get((model, key))
        return hit if hit is not None else self._rows.get(("", key))
