"""An imported dataset as a folder ``datasets.load_dataset`` reads (``<results_dir>/datasets/<name>/card/``): the
card ``README.md`` (:mod:`medfc.common.hf_dataset`) and each split as ``source/<split>.parquet`` (config
``<name>_source``, the default, ``label`` a ``ClassLabel``) and ``bigbio_te/<split>.parquet`` (``<name>_bigbio_te``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common import hf_dataset
from medfc.common.jsontypes import JSONValue
from medfc.common.pinning import describe
from medfc.common.report import SkipReport
from medfc.datasets.options import ImportOptions
from medfc.datasets.records import Record
from medfc.datasets.sources import SPLITS

if TYPE_CHECKING:
    import pyarrow as pa


def source_table(records: Sequence[Record], with_title: bool) -> pa.Table:
    """The records as the source view's table: every field a string, ``title`` only ``with_title``."""
    import pyarrow as pa

    columns = ["id", "claim", *(["title"] if with_title else []), "evidence", "label"]
    return pa.table({c: pa.array([r[c] for r in records], pa.string()) for c in columns})


def _section(options: ImportOptions, splits: Mapping[str, Sequence[Record]], how: Mapping[str, str], report: SkipReport,
             record: Mapping[str, JSONValue]) -> str:
    classes = options.classes
    name = options.name
    title_field = " `title`," if options.fields.title else ""
    lines = [f"# {options.title}", "",
             f"Imported by medfc as the run's config declares it (`datasets.{name}`, docs/datasets.md). Read from: "
             f"{describe(record)}.", "",
             "## Configs", "",
             f"`datasets.load_dataset(\"<this folder>\", \"<config>\")` loads a config, each with the splits "
             f"{', '.join(f'`{s}`' for s in SPLITS)}:", "",
             f"- `{name}_source` (the default): `id`, `claim`,{title_field} `evidence`, `label`; `label` is a `ClassLabel` "
             f"({', '.join(f'{i} {c}' for i, c in enumerate(classes))}).",
             f"- `{name}_bigbio_te`: BigBio's textual-entailment schema (`id`, `premise` the evidence, `hypothesis` the claim, "
             "`label` the class, all strings).", "",
             "## Rows per split and class", "",
             "| split | " + " | ".join(classes) + " | rows | from |",
             "| --- | " + " | ".join("---:" for _ in classes) + " | ---: | --- |"]
    for split in SPLITS:
        counts = [sum(1 for r in splits[split] if r["label"] == c) for c in classes]
        lines.append(f"| {split} | " + " | ".join(map(str, counts)) + f" | {len(splits[split])} | {how[split]} |")
    left_out = {**report.reasons(), **dict(report.excluded)}
    lines += ["", "## Rows left out", "", ", ".join(f"{reason}: {n}" for reason, n in sorted(left_out.items())) or "none"]
    if options.card_notes.strip():
        lines += ["", "## Notes", "", options.card_notes.strip()]
    return "\n".join(lines) + "\n"


def write_card(outputs: Mapping[str, str | os.PathLike], options: ImportOptions, splits: Mapping[str, Sequence[Record]],
               how: Mapping[str, str], report: SkipReport, record: Mapping[str, JSONValue]) -> None:
    """The card folder: ``readme`` and each split's ``source_<split>`` and ``bigbio_<split>`` Parquet file."""
    from medfc.common.io import atomic_write

    class_labels = {"label": options.classes}
    with_title = options.fields.title is not None
    for split in SPLITS:
        table = source_table(splits[split], with_title)
        hf_dataset.check_labels(table, class_labels, f"{options.key} {split} split")
        hf_dataset.write_parquet(table, outputs[f"source_{split}"])
        bigbio = [{"id": r["id"], "premise": r["evidence"], "hypothesis": r["claim"], "label": r["label"]}
                  for r in splits[split]]  # BigBio's entailment pairs: the evidence → the claim
        hf_dataset.write_parquet(hf_dataset.bigbio_te_table(bigbio), outputs[f"bigbio_{split}"])
    features = hf_dataset.features(source_table([], with_title).schema, class_labels)
    configs = hf_dataset.split_configs(options.name, Path(outputs["readme"]).parent, {s: outputs[f"source_{s}"] for s in SPLITS},
                                       {s: outputs[f"bigbio_{s}"] for s in SPLITS}, features, SPLITS)
    card = hf_dataset.Card(pretty_name=options.title, license="unknown", languages=(), n_rows=sum(len(v) for v in splits.values()),
                           configs=configs, tags=("claim-verification",))
    atomic_write(outputs["readme"], hf_dataset.front_matter(card) + _section(options, splits, how, report, record))
