"""The rebuilt CliniFact pairs as a folder ``datasets`` loads by config (rule ``clinifact_export``): the card
``README.md`` and BigBio's textual-entailment view of each split, ``bigbio_te/<split>_set.parquet``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from medfc.common import hf_dataset
from medfc.common.labels import CLINIFACT_RELEASE_NAMES

NAME = "clinifact"
SPLITS = ("train", "validation", "test")
#: label code → name, in index order (the release's codes are the ClassLabel's indices)
LABEL_NAMES = [CLINIFACT_RELEASE_NAMES[code] for code in range(len(CLINIFACT_RELEASE_NAMES))]

CARD_SECTION = """## Configs

`datasets.load_dataset("<this folder>", "<config>")` loads a config of this folder (this `README.md` declares
them), each with the splits `train`, `validation` and `test`:

| config | rows (train, validation, test) | files |
| --- | --- | --- |
{rows}

- `clinifact_source` (the default): the pairs in the release's 22 columns, `pValues`, `statisticalMethods` and
  `nonInferiorityTypes` as lists of strings; `label` is a `ClassLabel` whose index is the release's code
  ({labels}).
- `clinifact_bigbio_te`: BigBio's textual-entailment schema (`id`, `premise`, `hypothesis`, `label`, all strings):
  `id` the pair's `index`, `premise` the publication's abstract, `hypothesis` the claim, `label` the label's name.

The files beside them hold the same pairs in the release's other formats: `<split>_set.csv` (its CSV, list
columns as Python-list literals) and `instruction/<split>_set.jsonl` (its instruction format, one field `text`;
the test lines stop before the answer, as in the release), which `datasets.load_dataset("json", data_files=...)`
reads: the configs above are Parquet, and `datasets` reads every config of a folder in one format.
"""

LICENCE = """## Licence

The CliniFact release, whose format and construction these pairs follow, is MIT (Zhang et al., 2025). The pairs
quote PubMed records (titles and abstracts) and are built from ClinicalTrials.gov study records; this card
states no licence for those texts, which keep the terms of their sources. This folder describes a locally built
dataset; medfc redistributes none of it.
"""


def bigbio_te_rows(records: Sequence[Mapping[str, object]]) -> list[dict[str, str]]:
    """Each pair as BigBio's entailment pair: the abstract → the claim, the label's name."""
    return [{"id": str(r["index"]), "premise": str(r.get("article_abstract") or ""), "hypothesis": str(r.get("claim") or ""),
             "label": CLINIFACT_RELEASE_NAMES[int(r["label"])]} for r in records]


def export(parquet: Mapping[str, str | os.PathLike], card_md: str | os.PathLike, readme: str | os.PathLike,
           bigbio: Mapping[str, str | os.PathLike]) -> dict[str, int]:
    """Write the BigBio view of each split and the card ``readme`` (the pairs' card with the configs); returns the
    rows per split."""
    import pyarrow.parquet as pq

    from medfc.common.io import atomic_write

    tables = {split: pq.read_table(parquet[split]) for split in SPLITS}
    class_labels = {"label": LABEL_NAMES}
    for split, table in tables.items():
        hf_dataset.check_labels(table, class_labels, f"clinifact {split} split")
        hf_dataset.write_parquet(hf_dataset.bigbio_te_table(bigbio_te_rows(table.to_pylist())), bigbio[split])
    counts = {split: t.num_rows for split, t in tables.items()}
    card_dir = Path(readme).parent
    cfgs = hf_dataset.split_configs(NAME, card_dir, parquet, bigbio, hf_dataset.features(tables["train"].schema, class_labels), SPLITS)
    n = ", ".join(str(counts[s]) for s in SPLITS)
    rows = "\n".join(f"| `{c.name}` | {n} | {', '.join(f'`{c.splits[s][0]}`' for s in SPLITS)} |" for c in cfgs)
    section = CARD_SECTION.format(rows=rows, labels=", ".join(f"{i} {name}" for i, name in enumerate(LABEL_NAMES)))
    body = hf_dataset.without_section(hf_dataset.card_body(Path(card_md).read_text(encoding="utf-8")), "Files and configs")
    body = hf_dataset.insert_after_title(body, section) + "\n" + LICENCE
    card = hf_dataset.Card(pretty_name="CliniFact (rebuilt)", license="mit", languages=("en",), n_rows=sum(counts.values()),
                           configs=cfgs, tags=("medical", "clinical-trials", "fact-checking"))
    atomic_write(readme, hf_dataset.front_matter(card) + body)
    return counts
