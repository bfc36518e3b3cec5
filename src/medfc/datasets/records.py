"""A dataset's rows as the run's records, and its three splits.

Each row becomes ``{"id", "claim", "title" (only with fields.title), "evidence", "label"}`` (:func:`map_rows`): the
fields ``datasets.<name>.fields`` names, as text; an evidence that is a list of sentences is joined by single
spaces; ``label`` is the class ``datasets.<name>.labels`` maps the raw value to, the value compared as text
(:func:`as_text`: ``"0"``, ``"Supports"``; a number 1.0 is ``"1"``). Without an id field a row's id is
``<file key>-<n>``, its row number in its file (1 for the first row; the file key is its split, or ``data`` for a
single table). A field the data lacks stops the import in one line naming it, the file and the fields it has; so does
a label value ``labels`` does not list (naming the value and the key). A row whose label maps to null is left out and
counted (``label_dropped``); a row with an empty claim, an empty evidence, an empty id or the id of an earlier row of
its file is skipped with its reason (``empty_claim``, ``empty_evidence``, ``missing_id``, ``duplicate_id``).

The splits (:func:`make_splits`): the ones the files give, named by their key (renamed by ``splits.names``); the
missing ones made from train, stratified by class with ``splits.seed``: the test split first (``test_size`` of it),
then the validation split (``validation_size`` of what is left). A single table is train before that. Each class
gives round(share × its rows) of its rows, chosen at random with the seed; every split keeps its rows in file order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from medfc.common.io import InputFileError
from medfc.common.report import SkipReport
from medfc.datasets.options import ImportOptions, SplitsOptions
from medfc.datasets.sources import SPLITS
from medfc.datasets.tables import Table

Record = dict[str, str]


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


def evidence_text(value: Any) -> str:
    """The evidence as one text: a list of sentences joined by single spaces (empty ones left out)."""
    if isinstance(value, (list, tuple)):
        return " ".join(t for t in map(as_text, value) if t)
    return as_text(value)


def labels_by_text(labels: Mapping[Any, str | None]) -> dict[str, str | None]:
    """``datasets.<name>.labels`` keyed by text (a YAML key 0 or 1.0 is the value ``"0"`` or ``"1"``)."""
    return {as_text(k): v for k, v in labels.items()}


def check_fields(table: Table, options: ImportOptions) -> None:
    """Stop on a field ``fields`` names that the file does not have."""
    fields = options.fields
    for role in ("id", "claim", "evidence", "title", "label"):
        name = getattr(fields, role)
        if name is not None and name not in table.columns:
            raise InputFileError(table.location, None, f"no field {name!r} ({options.key}.fields.{role}); the file's fields: "
                                                       f"{', '.join(table.columns) or 'none'}")


def map_rows(table: Table, file_key: str, options: ImportOptions, report: SkipReport) -> list[Record]:
    """The records of one file's rows (see the module's doc); counts ``read_<file key>`` and ``kept_<file key>``."""
    check_fields(table, options)
    fields, labels = options.fields, labels_by_text(options.labels)
    seen: set[str] = set()
    out: list[Record] = []
    for n, row in enumerate(table.rows, 1):
        raw = as_text(row.get(fields.label))
        if raw not in labels:
            listed = ", ".join(repr(k) for k in labels)
            raise InputFileError(table.location, None, f"row {n}: label {raw!r} is not a value of {options.key}.labels ({listed}); "
                                                       "map it to a class, or to null to leave its rows out")
        item = as_text(row.get(fields.id)) if fields.id else f"{file_key}-{n}"
        where = item or f"{file_key} row {n}"
        if labels[raw] is None:
            report.exclude("label_dropped")
            continue
        record: Record = {"id": item, "claim": as_text(row.get(fields.claim))}
        if fields.title is not None:
            record["title"] = as_text(row.get(fields.title))
        record["evidence"] = evidence_text(row.get(fields.evidence))
        record["label"] = str(labels[raw])
        if not record["claim"]:
            report.skip(where, "empty_claim", f"{table.location}, row {n}")
        elif not record["evidence"]:
            report.skip(where, "empty_evidence", f"{table.location}, row {n}")
        elif item in seen:
            report.skip(where, "duplicate_id", f"{table.location}, row {n}")
        elif not item:
            report.skip(where, "missing_id", f"{table.location}, row {n}: empty {fields.id!r}")
        else:
            seen.add(item)
            out.append(record)
    report.count(f"read_{file_key}", len(table.rows))
    report.count(f"kept_{file_key}", len(out))
    return out


def stratified_take(records: Sequence[Record], share: float, rng: random.Random, classes: Sequence[str]) -> tuple[list[Record], list[Record]]:
    """(taken, rest): round(share × n) of each class's records, at random; both in the records' order."""
    taken: set[int] = set()
    for name in classes:
        members = [i for i, r in enumerate(records) if r["label"] == name]
        rng.shuffle(members)
        taken.update(members[: math.floor(share * len(members) + 0.5)])
    return [r for i, r in enumerate(records) if i in taken], [r for i, r in enumerate(records) if i not in taken]


def make_splits(given: Mapping[str, list[Record]], splits: SplitsOptions, classes: Sequence[str], key: str) -> tuple[dict[str, list[Record]], dict[str, str]]:
    """train, validation and test from the splits ``given`` (by the run's split names; a single table as train),
    and how each came (``given``, or ``made from train``)."""
    if "train" not in given:
        raise ValueError(f"config: {key}: the data has no train split (it has {', '.join(given) or 'none'}): name its files "
                         f"{', '.join(SPLITS)}, or rename its splits with {key}.splits.names")
    out = dict(given)
    how = {name: "given" for name in given}
    for name, share in (("test", splits.test_size), ("validation", splits.validation_size)):
        if name not in out:
            out[name], out["train"] = stratified_take(out["train"], share, random.Random(f"{splits.seed}:{name}"), classes)
            how[name] = f"made from train ({share:g} of it, stratified by class, seed {splits.seed})"
    return {name: out[name] for name in SPLITS}, {name: how[name] for name in SPLITS}
