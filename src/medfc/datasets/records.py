"""A dataset's rows as the run's records ``{"id", "claim", "title" (only with fields.title), "evidence", "label"}``,
and its three splits (the rules: docs/datasets.md, Checks and Splits)."""

from __future__ import annotations

import json
import math
import numbers
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from medfc.common.io import InputFileError
from medfc.common.report import SkipReport
from medfc.datasets.options import ImportOptions, SplitsOptions
from medfc.datasets.sources import SINGLE, SPLITS
from medfc.datasets.tables import Table

Record = dict[str, str]
WHOLE_NUMBER = re.compile(r"[+-]?\d+(?:\.0*)?")


def as_text(value: Any) -> str:
    """A raw value as text: a whole number without its ``.0``, ``true``/``false`` for booleans, "" for null or NaN."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer():
            return str(int(value))
    return str(value).strip()


def label_text(value: Any) -> str:
    """:func:`as_text`, and a text reading as a whole number (``"1.0"``, ``"+1"``) as its digits (``"1"``)."""
    text = as_text(value)
    return str(int(text.partition(".")[0])) if WHOLE_NUMBER.fullmatch(text) else text


def evidence_text(value: Any, text_cell: bool = False) -> str:
    """The evidence as one text: a list of sentences (or a ``text_cell`` holding a JSON list of texts) joined by
    spaces, empty ones left out."""
    if text_cell and isinstance(value, str) and value.lstrip().startswith("["):
        try:
            listed = json.loads(value)
        except ValueError:
            listed = None
        if isinstance(listed, list) and all(isinstance(v, str) for v in listed):
            value = listed
    if isinstance(value, (list, tuple)):
        return " ".join(t for t in map(as_text, value) if t)
    return as_text(value)


def labels_by_text(labels: Mapping[Any, str | None]) -> dict[str, str | None]:
    """``datasets.<name>.labels`` keyed by :func:`label_text`."""
    return {label_text(k): v for k, v in labels.items()}


def _kind(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"list of {', '.join(sorted({type(v).__name__ for v in value})) or 'nothing'}"
    return type(value).__name__


def _readable(value: Any, listed: bool) -> bool:
    """Whether a field's value is text, a number or null (or, ``listed``, a list of texts)."""
    if value is None or isinstance(value, (str, numbers.Number)):
        return True
    return listed and isinstance(value, (list, tuple)) and all(v is None or isinstance(v, str) for v in value)


def _rows(n: int) -> str:
    return f"{n} row{'' if n == 1 else 's'}"


def check_fields(table: Table, options: ImportOptions) -> None:
    """Stop on a field ``fields`` names that the file does not have."""
    fields = options.fields
    for role in ("id", "claim", "evidence", "title", "label"):
        name = getattr(fields, role)
        if name is not None and name not in table.columns:
            raise InputFileError(table.location, None, f"no field {name!r} ({options.key}.fields.{role}); the file's fields: "
                                                       f"{', '.join(table.columns) or 'none'}")


class RowMapper:
    """The records of an import's files, one file after another: keeps the ids, the (claim, evidence) pairs per
    split, and the label values ``labels`` does not list (:meth:`check_labels`)."""

    def __init__(self, options: ImportOptions, report: SkipReport):
        self.options, self.report = options, report
        self.labels = labels_by_text(options.labels)
        self.ids: dict[str, str] = {}  # id → the split of its row
        self.pairs: dict[tuple[str, str, str], str] = {}  # (split, claim, evidence) → its row's id
        self.first: dict[tuple[str, str], str] = {}  # (claim, evidence) → the first split that holds it
        self.unmapped: dict[str, Counter[str]] = {}  # label value → its rows per file

    def value(self, table: Table, row: Mapping[str, Any], n: int, role: str) -> Any:
        """The row's value of the field ``fields.<role>`` names, if it is one the import reads."""
        name = getattr(self.options.fields, role)
        value = row.get(name)
        if not _readable(value, listed=role == "evidence"):
            read = "text, a number or a list of texts" if role == "evidence" else "text or a number"
            raise InputFileError(table.location, None, f"row {n}: field {name!r} ({self.options.key}.fields.{role}) holds a "
                                                       f"{_kind(value)}; read is {read}")
        return value

    def map(self, table: Table, file_key: str, *, split_here: bool) -> list[Record]:
        """The records of one file's rows; counts ``read_<file key>`` and ``kept_<file key>``. ``split_here``: the
        import makes splits of this file (a repeated pair is skipped, not kept and counted)."""
        check_fields(table, self.options)
        fields, report = self.options.fields, self.report
        split = "train" if file_key == SINGLE else file_key
        out: list[Record] = []
        for n, row in enumerate(table.rows, 1):
            raw = label_text(self.value(table, row, n, "label"))
            item = as_text(self.value(table, row, n, "id")) if fields.id else f"{file_key}-{n}"
            where, at = item or f"{file_key} row {n}", f"{table.location}, row {n}"
            if raw not in self.labels:
                if raw:
                    self.unmapped.setdefault(raw, Counter())[table.location] += 1
                else:
                    report.skip(where, "missing_label", f"{at}: no {fields.label!r}")
                continue
            label = self.labels[raw]
            if label is None:
                report.exclude("label_dropped")
                continue
            record: Record = {"id": item, "claim": as_text(self.value(table, row, n, "claim"))}
            if fields.title is not None:
                record["title"] = as_text(self.value(table, row, n, "title"))
            record["evidence"] = evidence_text(self.value(table, row, n, "evidence"), table.text_cells)
            record["label"] = label
            pair = (record["claim"], record["evidence"])
            if not record["claim"]:
                report.skip(where, "empty_claim", at)
            elif not record["evidence"]:
                report.skip(where, "empty_evidence", at)
            elif not item:
                report.skip(where, "missing_id", f"{at}: empty {fields.id!r}")
            elif item in self.ids:
                report.skip(where, "duplicate_id", f"{at} ({split} split): the id of a row of the {self.ids[item]} split")
            elif split_here and (split, *pair) in self.pairs:
                report.skip(where, "duplicate_row", f"{at} ({split} split): the claim and evidence of {self.pairs[(split, *pair)]}")
            else:
                self.ids[item] = split
                if (split, *pair) in self.pairs:
                    report.count(f"repeated_pairs_{split}")
                self.pairs.setdefault((split, *pair), item)
                if self.first.setdefault(pair, split) != split:
                    report.count(f"overlap_{split}_{self.first[pair]}")
                out.append(record)
        report.count(f"read_{file_key}", len(table.rows))
        report.count(f"kept_{file_key}", len(out))
        return out

    def check_labels(self) -> None:
        """Stop, in one line, on the label values not in ``labels``, each with its rows."""
        if not self.unmapped:
            return
        values = "; ".join(f"{value!r} ({_rows(sum(files.values()))}: {', '.join(files)})" for value, files in self.unmapped.items())
        raise ValueError(f"config: {self.options.key}.labels does not list {len(self.unmapped)} label value"
                         f"{'' if len(self.unmapped) == 1 else 's'} of the data: {values}; map each to a class, or to null "
                         f"to leave its rows out (listed: {', '.join(repr(k) for k in self.labels)})")


def stratified_take(records: Sequence[Record], share: float, rng: random.Random, classes: Sequence[str]) -> tuple[list[Record], list[Record]]:
    """(taken, rest): round(share × n) of each class's records, at random; both in the records' order."""
    taken: set[int] = set()
    for name in classes:
        members = [i for i, r in enumerate(records) if r["label"] == name]
        rng.shuffle(members)
        taken.update(members[: math.floor(share * len(members) + 0.5)])
    return [r for i, r in enumerate(records) if i in taken], [r for i, r in enumerate(records) if i not in taken]


def make_splits(given: Mapping[str, list[Record]], splits: SplitsOptions, classes: Sequence[str], key: str) -> tuple[dict[str, list[Record]], dict[str, str]]:
    """train, validation and test from the splits ``given`` (a single table as train), and how each came (``given``
    or ``made from train``); a split left empty stops in one line."""
    if "train" not in given:
        raise ValueError(f"config: {key}: the data has no train split (it has {', '.join(given) or 'none'}): name its files "
                         f"{', '.join(SPLITS)}, or rename its splits with {key}.splits.names")
    out = dict(given)
    how = {name: "given" for name in given}
    for name, share in (("test", splits.test_size), ("validation", splits.validation_size)):
        if name not in out:
            out[name], out["train"] = stratified_take(out["train"], share, random.Random(f"{splits.seed}:{name}"), classes)
            how[name] = f"made from train ({share:g} of it, stratified by class, seed {splits.seed})"
    empty = [name for name in SPLITS if not out[name]]
    if empty:
        per_class = Counter(r["label"] for rows in out.values() for r in rows)
        raise ValueError(f"config: {key}.splits: the {' and '.join(empty)} split{'s are' if len(empty) > 1 else ' is'} empty: "
                         f"the rows kept per class are {', '.join(f'{c} {per_class[c]}' for c in classes)}, and a split made "
                         f"from train takes round(share × a class's rows) of each class (test_size {splits.test_size:g}, then "
                         f"validation_size {splits.validation_size:g} of what is left); give more rows, or larger shares")
    return {name: out[name] for name in SPLITS}, {name: how[name] for name in SPLITS}
