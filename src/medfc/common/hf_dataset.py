"""A dataset folder that the Hugging Face ``datasets`` library loads by config (``<dataset>_source``, and
``<dataset>_bigbio_te``: BigBio's textual-entailment view), described by its ``README.md``'s front matter."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from medfc.common.hf_card import relative, size_category

if TYPE_CHECKING:
    import pyarrow as pa

CARD = "README.md"  # the file datasets.load_dataset reads in a local folder
BIGBIO_TE_FIELDS = ("id", "premise", "hypothesis", "label")  # BigBio's textual-entailment schema, each a string


@dataclass(frozen=True)
class Config:
    """One config: its name, each split's files (relative to the folder), its features (:func:`features`), and
    whether ``load_dataset(<folder>)`` without a name loads it."""

    name: str
    splits: Mapping[str, Sequence[str]]
    features: list[dict[str, object]]
    default: bool = False


@dataclass(frozen=True)
class Card:
    """A dataset card's metadata: what the Hub shows and what ``datasets`` reads."""

    pretty_name: str
    license: str
    languages: Sequence[str]
    n_rows: int
    configs: Sequence[Config]
    tags: Sequence[str]


def _dtype(t: pa.DataType) -> object:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return str(t)  # int64, int32, uint8, ...
    if pa.types.is_floating(t):
        return {16: "float16", 32: "float32", 64: "float64"}[t.bit_width]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"list": _dtype(t.value_type)}
    raise ValueError(f"no dataset-card type for the Arrow type {t}")


def features(schema: pa.Schema, class_labels: Mapping[str, Sequence[str]]) -> list[dict[str, object]]:
    """The card's ``features`` for an Arrow schema; a ``class_labels`` column is a ``ClassLabel`` with those names
    (index i → names[i]), whatever its stored type."""
    out: list[dict[str, object]] = []
    for f in schema:
        if f.name in class_labels:
            names = {str(i): str(name) for i, name in enumerate(class_labels[f.name])}
            out.append({"name": f.name, "dtype": {"class_label": {"names": names}}})
            continue
        dtype = _dtype(f.type)
        out.append({"name": f.name, **(dtype if isinstance(dtype, dict) else {"dtype": dtype})})
    return out


def bigbio_te_features() -> list[dict[str, object]]:
    """BigBio's ``bigbio_te`` features: four strings."""
    return [{"name": name, "dtype": "string"} for name in BIGBIO_TE_FIELDS]


def bigbio_te_table(rows: Sequence[Mapping[str, str]]) -> pa.Table:
    """Rows of the BigBio view as an Arrow table of exactly its four string fields."""
    import pyarrow as pa

    return pa.table({name: pa.array([str(r[name]) for r in rows], pa.string()) for name in BIGBIO_TE_FIELDS})


def check_labels(table: pa.Table, class_labels: Mapping[str, Sequence[str]], where: str) -> None:
    """Stop on a class-label column value outside its names (null allowed)."""
    for column, names in class_labels.items():
        allowed = set(names) | set(range(len(names)))
        unknown = sorted({str(v) for v in table.column(column).to_pylist() if v is not None and v not in allowed})
        if unknown:
            raise ValueError(f"{where}: column {column!r} holds {unknown}, not among its class names {list(names)}")


def write_parquet(table: pa.Table, path: str | os.PathLike) -> None:
    """A table as Parquet, written atomically, without pandas metadata."""
    import pyarrow.parquet as pq

    from medfc.common.io import atomic_output

    with atomic_output(path) as fh:
        pq.write_table(table.replace_schema_metadata(None), fh)


def split_configs(name: str, card_dir: str | os.PathLike, source: Mapping[str, str | os.PathLike],
                  bigbio: Mapping[str, str | os.PathLike], source_features: list[dict[str, object]],
                  splits: Sequence[str]) -> list[Config]:
    """``<name>_source`` (the default, ``source_features``) and ``<name>_bigbio_te`` for fixed ``splits`` of one
    file each, relative to ``card_dir``."""
    def rel(files: Mapping[str, str | os.PathLike]) -> dict[str, list[str]]:
        return {split: [relative(files[split], card_dir)] for split in splits}

    return [Config(f"{name}_source", rel(source), source_features, default=True), Config(f"{name}_bigbio_te", rel(bigbio), bigbio_te_features())]


def front_matter(card: Card) -> str:
    """The ``---``-fenced YAML block that opens the card's ``README.md`` (ends with a blank line)."""
    import yaml

    configs = [{"config_name": c.name, **({"default": True} if c.default else {}),
                "data_files": [{"split": split, "path": list(files) if len(files) != 1 else files[0]}
                               for split, files in c.splits.items()]} for c in card.configs]
    meta = {"pretty_name": card.pretty_name, "license": card.license, "language": list(card.languages),
            "task_categories": ["text-classification"], "task_ids": ["fact-checking"], "tags": list(card.tags),
            "size_categories": [size_category(card.n_rows)], "configs": configs,
            "dataset_info": [{"config_name": c.name, "features": c.features} for c in card.configs]}
    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{text}---\n\n"


def card_body(text: str) -> str:
    """A card's markdown without its front matter."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            return text[end + len("\n---\n"):].lstrip("\n")
    return text


def without_section(markdown: str, heading: str) -> str:
    """The markdown without the ``## heading`` section (up to the next heading of its level or higher)."""
    lines = markdown.splitlines(keepends=True)
    out, skipping = [], False
    for line in lines:
        if line.rstrip("\n") == f"## {heading}":
            skipping = True
            continue
        if skipping and (line.startswith("## ") or line.startswith("# ")):
            skipping = False
        if not skipping:
            out.append(line)
    return "".join(out).rstrip("\n") + "\n"


def insert_after_title(markdown: str, section: str) -> str:
    """``section`` placed after the markdown's first ``# `` title line (at the top when it has none)."""
    lines = markdown.splitlines(keepends=True)
    if lines and lines[0].startswith("# "):
        return lines[0] + "\n" + section.rstrip("\n") + "\n\n" + "".join(lines[1:]).lstrip("\n")
    return section.rstrip("\n") + "\n\n" + markdown
