"""The CliniFact pairs in two more formats beside the release-format CSVs: the release's instruction JSONL, byte for
byte, and typed Parquet (docs/clinifact.md, "Instruction format and typed Parquet")."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from medfc.clinifact.pairs import LIST_COLUMNS, RELEASE_COLUMNS, parse_list_literal
from medfc.common.io import atomic_output

if TYPE_CHECKING:  # pandas and pyarrow are imported where used
    import pandas as pd

#: the release's instruction, word for word (its "## Input:" header included)
INSTRUCTION = (
    "## Instruction:\n"
    "Given a scientific claim and an abstract, determine if the abstract reports positive results (TRUE), "
    "inconclusive results (FALSE), or offers no information (NONE) about the claim.\n"
    "The task is to classify the pair claim abstract as follows:\n"
    "TRUE: if the abstract provides positive support for the claim.\n"
    "FALSE: if the abstract provides negative or inconclusive support for the claim.\n"
    "NONE: if the abstract provides contextual or background information without directly reporting results about the claim.\n"
    "## Input:\n"
)
RESPONSE = "## Response:\n"
#: release label code → the answer word of the instruction format (1 evidence, 0 inconclusive, 2 NEI)
ANSWER_WORDS = {1: "TRUE", 0: "FALSE", 2: "NONE"}
#: the splits whose instruction lines end with their answer (the release's test lines have none)
SPLITS_WITH_RESPONSE = ("train", "validation")
TEXT_FIELD = "text"  # the release's only field (its scripts' ``dataset_text_field``)
INT_COLUMNS = ("index", "PMID", "label")


def write_instruction_jsonl(df: pd.DataFrame, path: str | os.PathLike, *, with_response: bool) -> int:
    """The split as the release's instruction JSONL (atomically), ``with_response`` each line's answer word; returns
    the number of lines."""
    with atomic_output(path) as fh:
        for claim, abstract, label in zip(df["claim"], df["article_abstract"], df["label"]):
            answer = ANSWER_WORDS[int(label)] if with_response else ""
            rec = {TEXT_FIELD: f"{INSTRUCTION}Claim: {claim}\nAbstract: {abstract}\n{RESPONSE}{answer}"}
            fh.write((json.dumps(rec) + "\n").encode("ascii"))  # json.dumps' defaults, as the release
    return len(df)


def write_parquet(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """A release-format split as Parquet (atomically): list literals parsed into lists of strings, ``index``,
    ``PMID`` and ``label`` int64, the rest strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {}
    for col in RELEASE_COLUMNS:
        values = [None if v is None or (isinstance(v, float) and v != v) else v for v in df[col]]
        if col in LIST_COLUMNS:
            kind, values = pa.list_(pa.string()), [parse_list_literal(v) for v in values]
        elif col in INT_COLUMNS:
            kind, values = pa.int64(), [None if v is None else int(v) for v in values]
        else:
            kind, values = pa.string(), [None if v is None else str(v) for v in values]
        columns[col] = pa.array(values, type=kind)
    with atomic_output(path) as fh:
        pq.write_table(pa.table(columns), fh)


#: the dataset card's words on its three Hugging Face configs (appended to :func:`medfc.clinifact.pairs.dataset_card`)
CARD_CONFIGS = """
## Files and configs

- `default`: `{train,validation,test}_set.csv`, the release's format (list columns are Python-list literals).
- `parquet`: `{train,validation,test}_set.parquet`, the same rows and columns with `pValues`, `statisticalMethods`
  and `nonInferiorityTypes` typed as lists of strings.
- `instruction`: `instruction/{train,validation,test}_set.jsonl`, the release's instruction format
  (`primary_outcome_publication_instruction`): one field `text` (instruction, claim, abstract, `## Response:` and
  the answer TRUE / FALSE / NONE for evidence / inconclusive / not enough information; the test lines stop
  before the answer, as in the release).
"""
