"""Labelled claim–abstract pairs in the CliniFact release format; filtering, balancing, splitting."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Mapping

import pandas as pd

from medfc.common.jsontypes import JSONValue
from medfc.common.labels import CLINIFACT_RELEASE_NAMES
from medfc.common.report import SkipReport

RELEASE_COLUMNS = ["index", "nctId", "claim", "PMID", "article_title", "article_abstract", "label", "outcome_type", "outcome_title",
                   "outcome_description", "intervention_group_title", "comparator_group_title", "intervention_group_description",
                   "comparator_group_description", "intervention_group_intervention_label", "comparator_group_intervention_label",
                   "intervention_group_arm_group_type", "comparator_group_arm_group_type", "pValues", "statisticalMethods",
                   "nonInferiorityTypes", "Publication Date"]
LIST_COLUMNS = ("pValues", "statisticalMethods", "nonInferiorityTypes")  # Python list literals as text
# the outcome's and the two arms' columns, copied from the claim as the study gives them
STUDY_COLUMNS = RELEASE_COLUMNS[RELEASE_COLUMNS.index("outcome_type"):RELEASE_COLUMNS.index(LIST_COLUMNS[0])]
# Columns that may be empty in the release (descriptions; the comparator of a NO_INTERVENTION arm has no intervention).
OPTIONAL_COLUMNS = frozenset({"outcome_description", "intervention_group_description", "comparator_group_description",
                              "intervention_group_intervention_label", "comparator_group_intervention_label"})
REQUIRED_COLUMNS = [c for c in RELEASE_COLUMNS if c not in OPTIONAL_COLUMNS and c != "index"]
LABEL_NAMES = CLINIFACT_RELEASE_NAMES  # Table 6's headings: the release's words (medfc.common.labels)
SPLITS = ("train", "validation", "test")
# A duplicate is a row identical in every column but ``index`` (the release keeps rows that share trial,
# claim and PMID but differ elsewhere, e.g. two analyses sets of one outcome with their own p-values).
DUPLICATE_KEY = [c for c in RELEASE_COLUMNS if c != "index"]


def parse_list_literal(text: object) -> list[str]:
    if isinstance(text, list):
        return [str(v) for v in text]
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return []
    value = ast.literal_eval(str(text))
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value)) or (isinstance(value, str) and not value.strip())


def make_pairs(labelled: Iterable[Mapping[str, JSONValue]], abstracts: Mapping[str, Mapping[str, JSONValue]], report: SkipReport,
               min_abstract_words: int = 15) -> pd.DataFrame:
    """Join labelled claim × reference rows with their PubMed records; drop (with reasons) what fails. ``index``
    numbers the pairs before any filtering."""
    rows: list[dict[str, object]] = []
    for i, rec in enumerate(labelled):
        pmid = str(rec["PMID"])
        item = f"{rec['nctId']}#{rec.get('outcome_index', '')}/{pmid}"
        art = abstracts.get(pmid)
        if art is None:
            report.skip(item, "abstract_not_fetched")
            continue
        abstract = art.get("abstract")
        if _missing(abstract):
            report.skip(item, "no_abstract")
            continue
        if len(str(abstract).split()) < min_abstract_words:
            report.skip(item, "abstract_under_min_words", f"{len(str(abstract).split())} words")
            continue
        row = {"index": i, "nctId": rec["nctId"], "claim": rec["claim"], "PMID": int(pmid) if pmid.isdigit() else pmid,
               "article_title": art.get("title"), "article_abstract": abstract, "label": int(rec["label_id"]),
               **{c: rec.get(c) for c in STUDY_COLUMNS},
               **{c: repr([str(v) for v in rec.get(c) or []]) for c in LIST_COLUMNS},  # "['<0.001', '0.2']"
               "Publication Date": art.get("publication_date")}
        missing = [c for c in REQUIRED_COLUMNS if _missing(row[c])]
        if missing:
            report.skip(item, "missing_fields", ",".join(missing))
            continue
        rows.append(row)
    df = pd.DataFrame(rows, columns=RELEASE_COLUMNS)
    dup = df.duplicated(DUPLICATE_KEY, keep="first")
    for _, r in df[dup].iterrows():
        report.skip(f"{r['nctId']}/{r['PMID']}", "duplicate_pair", r["claim"][:80])
    df = df[~dup].reset_index(drop=True)
    for label, n in df["label"].value_counts().sort_index().items():
        report.count(f"pairs_label_{label}", int(n))
    return df


def downsample_nei(df: pd.DataFrame, seed: int, report: SkipReport | None = None) -> pd.DataFrame:
    """Keep at most |EVIDENCE| + |INCONCLUSIVE| NEI pairs, sampled with ``seed``; order by ``index``."""
    nei = df[df["label"] == 2]
    target = int((df["label"] != 2).sum())
    if len(nei) <= target:
        return df.reset_index(drop=True)
    kept = nei.sample(n=target, random_state=seed)
    if report is not None:
        report.count("nei_downsampled_away", len(nei) - target)
    return pd.concat([df[df["label"] != 2], kept]).sort_values("index", kind="stable").reset_index(drop=True)


def split_pairs(df: pd.DataFrame, *, seed: int, test_size: float, validation_size: float, stratify: bool) -> dict[str, pd.DataFrame]:
    """64/16/20 by default: ``train_test_split`` twice (test off the whole, validation off the rest)."""
    if len(df) < 3:
        return {"train": df.reset_index(drop=True), "validation": df.iloc[0:0], "test": df.iloc[0:0]}
    from sklearn.model_selection import train_test_split  # scikit-learn (~1 s to import): the split alone uses it

    rest, test = train_test_split(df, test_size=test_size, random_state=seed, stratify=df["label"] if stratify else None)
    train, val = train_test_split(rest, test_size=validation_size, random_state=seed, stratify=rest["label"] if stratify else None)
    return {"train": train.reset_index(drop=True), "validation": val.reset_index(drop=True), "test": test.reset_index(drop=True)}


def write_release_csv(df: pd.DataFrame, path: str) -> None:
    df[RELEASE_COLUMNS].to_csv(path, index=False)


def read_release_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A CSV in the release's 22-column format (raises on a missing column)."""
    df = pd.read_csv(path, dtype={"label": "int64"}, keep_default_na=True)
    missing = [c for c in RELEASE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a CliniFact release file, missing columns {missing}")
    return df[RELEASE_COLUMNS]


def label_table(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 6: label counts per split."""
    rows = []
    for name, df in splits.items():
        counts = df["label"].value_counts()
        rows.append({"split": name, **{LABEL_NAMES[lab]: int(counts.get(lab, 0)) for lab in (1, 0, 2)}, "total": len(df)})
    table = pd.DataFrame(rows)
    total = {"split": "total", **{c: int(table[c].sum()) for c in table.columns if c != "split"}}
    return pd.concat([table, pd.DataFrame([total])], ignore_index=True)


def dataset_card(splits: Mapping[str, pd.DataFrame], report: SkipReport, notes: str = "") -> str:
    """A markdown dataset card with the counts that describe the build."""
    allp = pd.concat(list(splits.values()), ignore_index=True) if splits else pd.DataFrame(columns=RELEASE_COLUMNS)
    lines = ["# CliniFact (rebuilt)", ""]
    if notes:
        lines += [notes, ""]
    lines += [
        f"- pairs: {len(allp)}",
        f"- trials (nctId): {allp['nctId'].nunique()}",
        f"- publications (PMID): {allp['PMID'].nunique()}",
        f"- distinct claims: {allp['claim'].nunique()}",
        "",
        "## Labels per split",
        "",
        label_table(splits).to_markdown(index=False),
        "",
        "Labels: 1 = evidence, 0 = inconclusive, 2 = not enough information. "
        "Columns follow the official release (22 columns; list columns are Python-list literals).",
        "",
    ]
    reasons = report.reasons()
    lines += ["## Dropped pairs by reason", ""]
    table = ["| reason | count |", "| --- | --- |", *(f"| {r} | {n} |" for r, n in reasons.items())]
    lines += table if reasons else ["none"]
    return "\n".join([*lines, ""])
