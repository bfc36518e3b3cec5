"""What ``medfc predict`` reads: an input file's rows and of each row the fields a kept model needs, each under the
first of its names (:data:`FIELD_NAMES`) a row gives (docs/experiments.md, "Predicting new claims")."""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from medfc.common.io import numbered_json_lines
from medfc.common.jsontypes import JSONValue
from medfc.common.report import SkipReport

# one input row by its fields: a JSON object (a JSONL line), a CSV row's texts or a Parquet row's values
Row = dict[str, JSONValue]

LIST_FIELDS = ("evidence", "document", "sentences")  # fields that hold a list of texts (or one text)
ID_FIELD = "id"

PAIRS = "pairs"  # the rows of every dataset but HealthFC: a claim and a text (medfc.experiments.pairs)

# each dataset's fields → the names each is read under, in order: medfc predict's own name first, then the exports'.
# ``{lang}``: the kept model's language; ``a[b]``: the texts of list ``a`` at the indices of list ``b``.
FIELD_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    PAIRS: {
        ID_FIELD: ("id", "index"),
        "claim": ("claim", "hypothesis"),
        "evidence": ("evidence", "abstract", "article_abstract", "premise"),
        "title": ("title", "article_title"),
    },
    "healthfc": {
        ID_FIELD: ("id",),
        "claim": ("claim", "claim_{lang}", "hypothesis"),
        "evidence": ("evidence", "sentences_{lang}[evidence_ids]", "premise"),
        "explanation": ("explanation", "explanation_{lang}"),
        "document": ("document", "sentences_{lang}"),
        "sentences": ("sentences", "sentences_{lang}"),
    },
}
# the fields a model reads when a row gives them, beside those it needs
OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {PAIRS: ("title",), "healthfc": ()}
# the names under which a HealthFC record gives its gold evidence (not a source's snippets)
GOLD_EVIDENCE_NAMES = ("sentences_{lang}[evidence_ids]", "premise")
INDEXED = re.compile(r"(\w+)\[(\w+)\]")


def texts(value: JSONValue) -> list[str]:
    """A list field's texts: a list (empty texts left out), one text, or a CSV cell holding a JSON list."""
    value = _unpacked(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, (list, tuple)):
        return [str(x).strip() for x in value if x is not None and str(x).strip()]
    return [str(value)]


def sentence_list(value: JSONValue) -> list[str]:
    """The ``sentences`` field with every position kept (``evidence_ids`` index it; a null is an empty sentence)."""
    value = _unpacked(value)
    if isinstance(value, (list, tuple)):
        return ["" if x is None else str(x).strip() for x in value]
    return texts(value)


def text(value: JSONValue) -> str:
    """A text field's value (a number is its text; a list, its texts joined)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return " ".join(texts(value))
    return str(value).strip()


def _unpacked(value: JSONValue) -> JSONValue:
    """A text holding a JSON list (a CSV cell) as that list; any other value as it is."""
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        return parsed if isinstance(parsed, list) else value
    return value


def present(field: str, value: JSONValue) -> bool:
    """Whether ``value`` gives the field: a text that is not empty (a list field: a list with a text)."""
    return bool(texts(value) if field in LIST_FIELDS else text(value))


def _jsonl_rows(path: Path, report: SkipReport) -> Iterable[tuple[int, Row]]:
    """(line number, object) of each JSON object of a JSONL file; any other line is skipped and counted."""
    with open(path, encoding="utf-8") as fh:
        for n, row in numbered_json_lines(fh):
            if isinstance(row, json.JSONDecodeError):
                report.skip(f"line {n}", "not_json", str(row))
            elif not isinstance(row, dict):
                report.skip(f"line {n}", "not_an_object", type(row).__name__)
            else:
                yield n, row


def read_rows(path: str | os.PathLike, report: SkipReport, id_names: Sequence[str] = (ID_FIELD,)) -> list[tuple[str, Row]]:
    """(id, row) of each row of a CSV, Parquet or JSONL file (a JSONL line that is not an object: skipped and counted);
    the id is the first of ``id_names`` a row gives, else ``row-<n>`` (1-based)."""
    path = Path(path)
    suffix = path.suffix.lower()
    numbered: Iterable[tuple[int, Row]]
    if suffix == ".csv":
        with open(path, encoding="utf-8-sig", newline="") as fh:
            numbered = enumerate(list(csv.DictReader(fh)), 1)
    elif suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError(f"{path}: reading a Parquet file needs pyarrow, which is not installed "
                              "(pip install pyarrow)") from None
        numbered = enumerate(pq.read_table(path).to_pylist(), 1)
    else:
        numbered = _jsonl_rows(path, report)
    out = []
    for number, row in numbered:
        rid = next((text(row[name]) for name in id_names if text(row.get(name))), "")
        if not rid:
            rid = f"row-{number}"
            report.count("rows_without_id")
        out.append((rid, row))
    return out


@dataclass(frozen=True)
class InputSpec:
    """What a kept model reads of a row: the fields it ``needs``, and each field it reads with its names, in order."""

    needs: tuple[str, ...]
    names: Mapping[str, tuple[str, ...]]

    def view(self, row: Mapping[str, JSONValue]) -> Row:
        """The row under the model's field names: each field's value from the first of its names the row gives."""
        out: Row = {}
        for field, names in self.names.items():
            for name in names:
                value = _value(row, name)
                if present(field, value):
                    out[field] = value
                    break
        return out

    def missing(self, view: Mapping[str, JSONValue]) -> list[str]:
        """The fields the model needs that a row's :meth:`view` lacks."""
        return [f for f in self.needs if not present(f, view.get(f))]


def _value(row: Mapping[str, JSONValue], name: str) -> JSONValue:
    """The value of ``name`` in ``row``; ``a[b]``: the texts of list ``a`` at the indices of list ``b``."""
    indexed = INDEXED.fullmatch(name)
    if indexed is None:
        return row.get(name)
    items = sentence_list(row.get(indexed.group(1)))
    if not items:
        return None
    ids = _unpacked(row.get(indexed.group(2)))  # a CSV cell: a JSON list; what is not a whole number is left out
    ids = [i for i in ids if isinstance(i, int) and not isinstance(i, bool)] if isinstance(ids, list) else []
    return [items[i] for i in sorted(set(ids)) if 0 <= i < len(items)]


def fields_of(dataset: str) -> str:
    """Whose fields a row of ``dataset`` gives: its own (HealthFC's), else a pair's (:data:`PAIRS`)."""
    return dataset if dataset in FIELD_NAMES else PAIRS


def input_spec(dataset: str, needs: Sequence[str], lang: str = "en", gold_evidence: bool = True) -> InputSpec:
    """The :class:`InputSpec` of a kept model of ``dataset`` that needs ``needs``; ``gold_evidence`` False: its
    ``evidence`` is a source's snippets, which no export holds (read as ``evidence`` only)."""
    table = FIELD_NAMES[fields_of(dataset)]
    unknown = [f for f in needs if f not in table]
    if unknown:
        raise ValueError(f"the model card's {dataset} model needs {', '.join(unknown)}, no field of a {dataset} row")
    names = {}
    for field in dict.fromkeys([*needs, *OPTIONAL_FIELDS[fields_of(dataset)]]):
        given = [n for n in table[field] if gold_evidence or n not in GOLD_EVIDENCE_NAMES]
        names[field] = tuple(dict.fromkeys(n.format(lang=lang) for n in given))
    return InputSpec(tuple(needs), names)


def id_names(dataset: str) -> tuple[str, ...]:
    """The names a row of ``dataset`` gives its id under."""
    return FIELD_NAMES[fields_of(dataset)][ID_FIELD]


def accepted_names(specs: Sequence[InputSpec], dataset: str) -> dict[str, list[str]]:
    """Each field the models of ``specs`` read, with every name it is read under (the id's first)."""
    out: dict[str, list[str]] = {ID_FIELD: list(id_names(dataset))}
    for spec in specs:
        for field, names in spec.names.items():
            out[field] = list(dict.fromkeys([*out.get(field, []), *names]))
    return out


def describe_names(names: Mapping[str, Sequence[str]]) -> str:
    """``claim: claim or hypothesis; ...``: each field and the names it is read under."""
    def alternatives(ns: Sequence[str]) -> str:
        return ns[0] if len(ns) == 1 else f"{', '.join(ns[:-1])} or {ns[-1]}"

    return "; ".join(f"{field}: {alternatives(ns)}" for field, ns in names.items())
