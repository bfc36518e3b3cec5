"""The rebuilt HealthFC dataset as a folder ``datasets`` loads by config (docs/healthfc.md §3): each fold's claims in
the ``source`` and ``bigbio_te`` views (:func:`export_fold`) and the card declaring them (:func:`write_card`)."""

from __future__ import annotations

import csv
import os
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medfc.common import hf_dataset
from medfc.common.labels import VERACITY_LABELS
from medfc.healthfc.records import DatasetRecord
from medfc.healthfc.verdicts import LEVELS

if TYPE_CHECKING:
    import pyarrow as pa

NAME = "healthfc"
#: the source view's class-label columns and their names in index order
CLASS_LABELS: Mapping[str, Sequence[str]] = {"label": VERACITY_LABELS, "evidence_level": LEVELS}
VIEWS = ("source", "bigbio_te")


CARD_SECTION = """## Configs

`datasets.load_dataset("<this folder>", "<config>")` loads a config of this folder (this `README.md` declares
them; the files are under `views/`):

| config | splits | rows |
| --- | --- | --- |
{rows}

- `healthfc_source` (the default): one record per claim, the fields of `healthfc.jsonl` (German and English side
  by side; `sentences_en[i]` translates `sentences_de[i]`, `evidence_ids` index the gold evidence sentences) and
  `fold`, the claim's cross-validation fold ({n_folds} folds, `healthfc/folds/folds.csv`). `label` is a
  `ClassLabel` ({labels}) and so is `evidence_level` ({levels}).
- `healthfc_bigbio_te`: BigBio's textual-entailment schema (`id`, `premise`, `hypothesis`, `label`, all strings):
  `premise` is the claim's gold evidence sentences in English joined by spaces (empty for the {no_evidence}
  claim(s) without gold evidence), `hypothesis` the English claim, `label` its verdict.
- `healthfc_fold<k>_source`, `healthfc_fold<k>_bigbio_te`: fold k of the paper's cross-validation, `train` the
  other folds and `test` fold k.
"""


def _arrow_type(hint: object) -> pa.DataType:
    """A record field's type hint as an Arrow type (``X | None``: X; ``list[X]``: a list of X)."""
    import pyarrow as pa

    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return _arrow_type(args[0])
    if typing.get_origin(hint) is list:
        return pa.list_(_arrow_type(args[0]))
    return {str: pa.string(), int: pa.int64(), bool: pa.bool_(), float: pa.float64()}[hint]  # type: ignore[index]


def source_table(dataset: pa.Table, folds: Mapping[str, int]) -> pa.Table:
    """The dataset's records with their ``fold``, each field of a record typed by its hint (whatever the mode left empty
    or pandas wrote as a float); a claim without a fold is an error."""
    import pyarrow as pa

    ids = [str(i) for i in dataset.column("id").to_pylist()]
    if missing := [i for i in ids if i not in folds]:
        raise ValueError(f"{len(missing)} claim(s) of the dataset have no fold in folds.csv (e.g. {missing[0]!r}): "
                         "the folds were made from another dataset")
    hints = typing.get_type_hints(DatasetRecord)
    schema = pa.schema([(name, _arrow_type(hints[name])) for name in dataset.column_names])
    table = dataset.replace_schema_metadata(None).cast(schema)
    table = table.append_column("fold", pa.array([folds[i] for i in ids], pa.int64()))
    hf_dataset.check_labels(table, CLASS_LABELS, "healthfc dataset")
    return table


def bigbio_te_rows(records: Sequence[Mapping[str, object]]) -> list[dict[str, str]]:
    """Each claim as BigBio's entailment pair: its gold evidence (English) → its English claim, its verdict."""
    rows = []
    for r in records:
        sentences = list(r.get("sentences_en") or [])
        evidence = [str(sentences[i]).strip() for i in (r.get("evidence_ids") or []) if 0 <= int(i) < len(sentences)]
        rows.append({"id": str(r["id"]), "premise": " ".join(s for s in evidence if s), "hypothesis": str(r.get("claim_en") or ""),
                     "label": str(r["label"])})
    return rows


def export_fold(dataset_parquet: str | os.PathLike, folds_csv: str | os.PathLike, fold: int, source_out: str | os.PathLike,
                bigbio_out: str | os.PathLike) -> dict[str, int]:
    """Write fold ``fold``'s claims in the source view and in BigBio's; returns its rows and those without gold
    evidence. An empty fold is an error."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    with open(folds_csv, encoding="utf-8", newline="") as fh:  # id,fold
        folds = {row["id"]: int(row["fold"]) for row in csv.DictReader(fh)}
    table = source_table(pq.read_table(dataset_parquet), folds)
    part = table.filter(pc.equal(table.column("fold"), fold))
    if part.num_rows == 0:
        raise ValueError(f"fold {fold} holds no claim: folds.csv has {len(set(folds.values()))} folds (healthfc.folds.n_splits changed "
                         "since it was made?)")
    rows = bigbio_te_rows(part.to_pylist())
    hf_dataset.write_parquet(part, source_out)
    hf_dataset.write_parquet(hf_dataset.bigbio_te_table(rows), bigbio_out)
    return {"claims": part.num_rows, "without_gold_evidence": sum(1 for r in rows if not r["premise"])}


def write_card(card_md: str | os.PathLike, files: Mapping[str, Sequence[str | os.PathLike]], readme: str | os.PathLike) -> dict[str, int]:
    """Write the card ``readme``: the dataset card's text with the configs of the views' ``files`` (fold 0 first);
    returns the rows per fold."""
    import pyarrow.parquet as pq

    from medfc.common.io import atomic_write

    paths = {view: [Path(p) for p in files[view]] for view in VIEWS}
    counts = {f"fold_{k}": pq.ParquetFile(p).metadata.num_rows for k, p in enumerate(paths["source"])}
    no_evidence = sum(sum(1 for premise in pq.read_table(p, columns=["premise"]).column("premise").to_pylist() if not premise)
                      for p in paths["bigbio_te"])
    # the configs: every claim per view, then each fold's train/test per view
    feats = {"source": hf_dataset.features(pq.read_schema(paths["source"][0]), CLASS_LABELS),
             "bigbio_te": hf_dataset.bigbio_te_features()}
    rel = {view: [hf_dataset.relative(p, Path(readme).parent) for p in ps] for view, ps in paths.items()}
    cfgs = [hf_dataset.Config(f"{NAME}_{view}", {"train": rel[view]}, feats[view], default=view == "source")
            for view in VIEWS]
    for k in range(len(rel["source"])):
        for view in VIEWS:
            splits = {"train": [p for j, p in enumerate(rel[view]) if j != k], "test": [rel[view][k]]}
            cfgs.append(hf_dataset.Config(f"{NAME}_fold{k}_{view}", splits, feats[view]))
    table_rows = "\n".join(f"| `{c.name}` | {', '.join(f'`{s}`' for s in c.splits)} | "
                           f"{', '.join(str(sum(counts[Path(p).stem] for p in split_files)) for split_files in c.splits.values())} |"
                           for c in cfgs)
    section = CARD_SECTION.format(rows=table_rows, n_folds=len(counts), no_evidence=no_evidence,
                                  labels=", ".join(f"{i} {n}" for i, n in enumerate(CLASS_LABELS["label"])),
                                  levels=", ".join(f"{i} {n}" for i, n in enumerate(CLASS_LABELS["evidence_level"])))
    body = hf_dataset.insert_after_title(hf_dataset.card_body(Path(card_md).read_text(encoding="utf-8")), section)
    card = hf_dataset.Card(pretty_name="HealthFC (rebuilt)", license="cc-by-nc-nd-4.0", languages=("de", "en"), n_rows=sum(counts.values()),
                           configs=cfgs, tags=("medical", "health", "fact-checking"))
    atomic_write(readme, hf_dataset.front_matter(card) + body)
    return {**counts, "without_gold_evidence": no_evidence}
