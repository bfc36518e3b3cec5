"""Rebuilt CliniFact pairs (``all_pairs.csv``) against the release, each row in one of :data:`CATEGORIES`; a one-sided
row's reason is read from the pipeline's own records (the studies step's ``excluded`` list, the skip reports)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
import pandas as pd

from medfc.clinifact.ctgov import nct_id
from medfc.clinifact.pairs import LABEL_NAMES, LIST_COLUMNS, RELEASE_COLUMNS, parse_list_literal
from medfc.common.diff import SAME, TEXT, WHITESPACE, after, text_difference, whitespace_detail
from medfc.common.jsontypes import JSONValue

Row = Mapping[str, object]  # a release-format row (a CSV's cells: text, numbers, NaN for an empty one)
Cell = str | tuple[str, ...]  # a cell as compared (:func:`comparable`)

CATEGORIES: dict[str, str] = {
    "identical": "paired by (nctId, PMID, outcome title): the label and every other column agree exactly",
    "whitespace_only": "paired, the same label, columns that differ only in whitespace (no-break or thin spaces, line breaks, a space beside markup): named in whitespace_columns, the first place in detail",
    "label_differs": "paired, with different labels (both labels and both p-value lists are shown)",
    "fields_differ": "paired, the same label, other columns differ (named in differing_columns)",
    "release_only_not_in_studies": "in the release only: the trial is not among the studies the rebuild read (not in the source, or past clinifact.studies.limit)",
    "release_only_filtered": "in the release only: the study filter left the trial out (status, study type or results, as registered today)",
    "release_only_skipped": "in the release only: the rebuild skipped the study, outcome or pair (the step and its skip reason)",
    "release_only_missing_abstract": "in the release only: the abstract is missing, not fetched or under the minimum length",
    "release_only_other": "in the release only, for another reason (the outcome title or PMID is not in the study as registered today, or none recorded)",
    "rebuilt_only_completed_after_release": "rebuilt only: the trial was completed after the release date",
    "rebuilt_only_abstract_after_release": "rebuilt only: the abstract was published after the release date",
    "rebuilt_only_nei_downsampled": "rebuilt only: a NOT ENOUGH INFO pair, left out by the release's random downsampling of NEI",
    "rebuilt_only_other": "rebuilt only, for another reason",
}
#: the columns of the diff table (``diff_rows.csv``)
COLUMNS = ["category", "nctId", "PMID", "outcome_title", "reason", "detail", "rebuilt_label", "release_label", "rebuilt_pValues", "release_pValues",
           "differing_columns", "whitespace_columns", "release_split", "in_rebuilt_splits", "rebuilt_claim", "release_claim"]
#: the columns the Markdown report lists for each category that is not ``identical``
LISTED: dict[str, list[str]] = {
    "label_differs": ["nctId", "PMID", "outcome_title", "rebuilt_label", "release_label", "rebuilt_pValues", "release_pValues"],
    "whitespace_only": ["nctId", "PMID", "outcome_title", "whitespace_columns", "detail"],
    "fields_differ": ["nctId", "PMID", "outcome_title", "differing_columns", "rebuilt_claim", "release_claim"],
    **{c: ["nctId", "PMID", "outcome_title", "reason", "detail", "release_label", "release_claim"]
       for c in CATEGORIES if c.startswith("release_only_")},
    **{c: ["nctId", "PMID", "outcome_title", "reason", "detail", "rebuilt_label", "in_rebuilt_splits", "rebuilt_claim"]
       for c in CATEGORIES if c.startswith("rebuilt_only_")},
}
#: compared between paired rows besides the label (``index`` numbers rows differently on each side)
COMPARED = [c for c in RELEASE_COLUMNS if c not in ("index", "label")]
#: build_pairs reasons that mean the abstract, not the claim, is the problem
ABSTRACT_REASONS = frozenset({"abstract_not_fetched", "no_abstract", "abstract_under_min_words"})
_IGNORED_STUDY_SKIPS = frozenset({"no_claimable_primary_outcome"})  # its outcomes carry the real reasons


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value))


def _exact(value: object) -> str:
    return "" if _missing(value) else str(value)


def _text(value: object) -> str:
    return " ".join(_exact(value).split())


def _pmid(value: object) -> str:
    text = _text(value)
    return text[:-2] if text.endswith(".0") and text[:-2].isdigit() else text


def row_key(row: Row) -> tuple[str, str, str]:
    """(nctId, PMID, outcome title) of a release-format row."""
    return _text(row["nctId"]), _pmid(row["PMID"]), _text(row["outcome_title"])


def comparable(column: str, value: object) -> Cell:
    """A cell as compared: its exact text (empty = missing), PMIDs as numbers, list columns as parsed lists."""
    if column == "PMID":
        return _pmid(value)
    if column in LIST_COLUMNS:
        try:
            return tuple(_exact(v) for v in parse_list_literal(value))
        except (ValueError, SyntaxError):
            return _exact(value)
    return _exact(value)


def _difference(a: Cell, b: Cell) -> str:
    if a == b:
        return SAME
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) == len(b) and all(text_difference(x, y) != TEXT for x, y in zip(a, b)):
            return WHITESPACE
        return TEXT
    return text_difference(str(a), str(b))


def compare_columns(rebuilt: Row, released: Row) -> tuple[list[str], list[str], str]:
    """The columns that differ in text, those that differ in whitespace only, and where the first of those differs."""
    differs, spaces, detail = [], [], ""
    for c in COMPARED:
        a, b = comparable(c, rebuilt.get(c)), comparable(c, released.get(c))
        kind = _difference(a, b)
        if kind == WHITESPACE:
            spaces.append(c)
            if not detail:
                pairs = zip(a, b) if isinstance(a, tuple) else [(a, b)]
                x, y = next((x, y) for x, y in pairs if x != y)
                detail = f"{c}: {whitespace_detail(x, y, ('rebuilt', 'release'))}"
        elif kind != SAME:
            differs.append(c)
    return differs, spaces, detail


# --------------------------------------------------------------------------- what the pipeline recorded


@dataclass(frozen=True)
class StudyFacts:
    """What the diff needs of one study as the rebuild read it."""

    completion: str | None  #: completionDateStruct.date ("2018-06" or "2018-06-30")
    primary_outcomes: dict[str, list[int]]  #: outcome title (whitespace collapsed) → outcome indices
    references: dict[str, str]  #: PMID → reference type (RESULT, BACKGROUND, DERIVED)


def study_facts(studies: Iterable[Mapping[str, JSONValue]], wanted: set[str]) -> dict[str, StudyFacts]:
    """The facts of the studies in ``wanted`` (streamed: only those are kept)."""
    out: dict[str, StudyFacts] = {}
    for study in studies:
        ps = study.get("protocolSection") or {}
        nct = nct_id(study)
        if nct not in wanted:
            continue
        outcomes: dict[str, list[int]] = defaultdict(list)
        measures = ((study.get("resultsSection") or {}).get("outcomeMeasuresModule") or {}).get("outcomeMeasures") or []
        for i, om in enumerate(measures):
            if om.get("type") == "PRIMARY":
                outcomes[_text(om.get("title"))].append(i)
        refs = {str(r.get("pmid")): str(r.get("type")) for r in ((ps.get("referencesModule") or {}).get("references") or []) if r.get("pmid")}
        completion = ((ps.get("statusModule") or {}).get("completionDateStruct") or {}).get("date")
        out[nct] = StudyFacts(completion, dict(outcomes), refs)
    return out


def skips_by_id(report: Mapping[str, JSONValue]) -> dict[str, list[dict[str, str]]]:
    """A SkipReport file's skipped items grouped by their id."""
    out: dict[str, list[dict[str, str]]] = defaultdict(list)
    for s in report.get("skipped") or []:
        out[str(s["id"])].append(s)
    return dict(out)


@dataclass
class Trace:
    """The rebuild's own record of what it read, left out and skipped."""

    studies: dict[str, StudyFacts]
    excluded: dict[str, str] = field(default_factory=dict)  #: nctId → the study filter's reason
    claim_skips: dict[str, list[dict[str, str]]] = field(default_factory=dict)  #: build_claims report
    abstract_skips: dict[str, list[dict[str, str]]] = field(default_factory=dict)  #: fetch_abstracts report
    pair_skips: dict[str, list[dict[str, str]]] = field(default_factory=dict)  #: build_pairs report

    @classmethod
    def from_reports(cls, studies: dict[str, StudyFacts], excluded: Iterable[Mapping[str, JSONValue]], claims_report: Mapping[str, JSONValue],
                     abstracts_report: Mapping[str, JSONValue], pairs_report: Mapping[str, JSONValue], wanted: set[str] | None = None) -> Trace:
        """``wanted``: the only nctIds whose exclusions are kept (None: all)."""
        kept = {str(e["nctId"]): str(e["reason"]) for e in excluded if wanted is None or str(e["nctId"]) in wanted}
        return cls(studies, kept, skips_by_id(claims_report), skips_by_id(abstracts_report), skips_by_id(pairs_report))


Finding = tuple[str, str, str]  # (category, reason, detail)


def _skip_finding(category: str, step: str, skip: Mapping[str, str]) -> Finding:
    return category, f"{step}: {skip['reason']}", skip.get("detail") or ""


def why_not_rebuilt(row: Row, trace: Trace) -> Finding:
    """The category, reason and detail of a release row the rebuild has no row for."""
    nct, pmid, title = row_key(row)
    facts = trace.studies.get(nct)
    if facts is None:
        if nct in trace.excluded:
            return "release_only_filtered", f"fetch_studies: {trace.excluded[nct]}", "left out by the study filter"
        return "release_only_not_in_studies", "not_in_studies", "not among the studies read"
    outcomes = facts.primary_outcomes.get(title, [])
    ref_type = facts.references.get(pmid)
    for oid in [f"{nct}#{i}" for i in outcomes]:
        for skip in trace.claim_skips.get(oid, []):
            return _skip_finding("release_only_skipped", "build_claims", skip)
    for skip in trace.claim_skips.get(nct, []):
        if skip["reason"] in _IGNORED_STUDY_SKIPS or (skip["reason"] == "multiple_result_references" and ref_type != "RESULT"):
            continue
        return _skip_finding("release_only_skipped", "build_claims", skip)
    if not outcomes:
        return "release_only_other", "outcome_not_found", "no primary outcome with this title in the study"
    if ref_type is None:
        return "release_only_other", "pmid_not_referenced", "the PMID is not a reference of the study"
    if ref_type not in ("RESULT", "BACKGROUND"):
        return "release_only_other", "pmid_reference_type", f"the study cites the PMID as {ref_type}"
    for skip in trace.abstract_skips.get(pmid, []):
        return _skip_finding("release_only_missing_abstract", "fetch_abstracts", skip)
    for oid in [f"{nct}#{i}/{pmid}" for i in outcomes] + [f"{nct}/{pmid}"]:
        for skip in trace.pair_skips.get(oid, []):
            category = "release_only_missing_abstract" if skip["reason"] in ABSTRACT_REASONS else "release_only_skipped"
            return _skip_finding(category, "build_pairs", skip)
    return "release_only_other", "no_reason_recorded", "the rebuild kept no pair for this outcome and PMID"


def why_not_released(row: Row, trace: Trace, release_date: date) -> Finding:
    """The category, reason and detail of a rebuilt row the release has no row for."""
    facts = trace.studies.get(_text(row["nctId"]))
    completion = facts.completion if facts else None
    if after(completion, release_date):
        return "rebuilt_only_completed_after_release", "completed_after_release", f"completed {completion}"
    published = _text(row.get("Publication Date"))
    if after(published, release_date):
        return "rebuilt_only_abstract_after_release", "published_after_release", f"published {published}"
    if int(row["label"]) == 2:
        return "rebuilt_only_nei_downsampled", "nei_downsampled", "NOT ENOUGH INFO pairs are downsampled at random"
    return "rebuilt_only_other", "not_in_release", ""


# --------------------------------------------------------------------------- the diff


def _label(value: object) -> str:
    return "" if _missing(value) else LABEL_NAMES.get(int(value), str(value))


def _finding(category: str, key: tuple[str, str, str], rebuilt: Row | None, released: Row | None, reason: str = "", detail: str = "",
             differs: Sequence[str] = (), kept: set[int] | None = None, spaces: Sequence[str] = ()) -> dict[str, object]:
    ours, theirs = rebuilt or {}, released or {}  # a missing side's cells are empty
    return {"category": category, "nctId": key[0], "PMID": key[1], "outcome_title": key[2], "reason": reason, "detail": detail,
            "rebuilt_label": _label(ours.get("label")), "release_label": _label(theirs.get("label")),
            "rebuilt_pValues": _exact(ours.get("pValues")), "release_pValues": _exact(theirs.get("pValues")),
            "differing_columns": ", ".join(differs), "whitespace_columns": ", ".join(spaces),
            "release_split": theirs.get("release_split", ""),
            "in_rebuilt_splits": "" if rebuilt is None or kept is None else int(rebuilt["index"]) in kept,
            "rebuilt_claim": _exact(ours.get("claim")), "release_claim": _exact(theirs.get("claim"))}


def _pair_up(rebuilt: list[Row], released: list[Row]) -> tuple[list[tuple[Row, Row]], list[Row], list[Row]]:
    """Rows of one key paired: equal claims first, then in order; the rest on their own side."""
    rebuilt, released = list(rebuilt), list(released)
    pairs = []
    for r in list(rebuilt):
        same = next((x for x in released if _text(x["claim"]) == _text(r["claim"])), None)
        if same is not None:
            pairs.append((r, same))
            rebuilt.remove(r)
            released.remove(same)
    pairs += list(zip(rebuilt, released))
    n = min(len(rebuilt), len(released))
    return pairs, rebuilt[n:], released[n:]


def diff_pairs(rebuilt: pd.DataFrame, release: pd.DataFrame, trace: Trace, release_date: date, kept: set[int] | None = None) -> pd.DataFrame:
    """One row per paired, release-only and rebuilt-only row (columns :data:`COLUMNS`); ``kept``: the ``index``
    values of the rebuilt pairs in our own splits (None when unknown)."""
    by_key: dict[tuple[str, str, str], tuple[list[Row], list[Row]]] = defaultdict(lambda: ([], []))
    for rec in rebuilt.to_dict("records"):
        by_key[row_key(rec)][0].append(rec)
    for rec in release.to_dict("records"):
        by_key[row_key(rec)][1].append(rec)
    out = []
    for key in sorted(by_key):
        ours, theirs = by_key[key]
        pairs, ours_only, theirs_only = _pair_up(ours, theirs)
        for r, x in pairs:
            differs, spaces, detail = compare_columns(r, x)
            category = ("label_differs" if int(r["label"]) != int(x["label"]) else
                        "fields_differ" if differs else "whitespace_only" if spaces else "identical")
            out.append(_finding(category, key, r, x, detail=detail, differs=differs, kept=kept, spaces=spaces))
        for x in theirs_only:
            category, reason, detail = why_not_rebuilt(x, trace)
            out.append(_finding(category, key, None, x, reason, detail))
        for r in ours_only:
            category, reason, detail = why_not_released(r, trace, release_date)
            out.append(_finding(category, key, r, None, reason, detail, kept=kept))
    return pd.DataFrame(out, columns=COLUMNS)


def release_rows(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The release's splits as one table with a ``release_split`` column."""
    return pd.concat([df.assign(release_split=name) for name, df in splits.items()], ignore_index=True)


def preamble(release_source: str, release_date: date, rebuilt: pd.DataFrame, release: pd.DataFrame, kept: set[int] | None) -> list[str]:
    return [
        f"Rebuilt pairs (`all_pairs.csv`, before NEI downsampling): {len(rebuilt)}"
        + (f", of which {len(kept)} are in our splits" if kept is not None else "") + ".",
        f"Release rows: {len(release)} (`{release_source}`), release date {release_date.isoformat()}.",
        "Rows are paired by (nctId, PMID, outcome title); each row is in one category.",
    ]
