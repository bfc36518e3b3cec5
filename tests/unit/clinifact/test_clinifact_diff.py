"""The CliniFact diff on constructed rows: every category, its reason and detail, the pairing, the step's files."""

from __future__ import annotations

import json
from datetime import date

import pandas as pd
import pytest

from medfc.clinifact import diff as D
from medfc.clinifact import pairs as PR
from medfc.clinifact import steps
from medfc.common.io import write_jsonl
from tests.helpers.config import call_step, section

RELEASE_DATE = date(2024, 1, 15)


def row(nct: str, pmid: int, title: str, label: int, index: int = 0, **kw) -> dict:
    """A row in the release's 22 columns."""
    r = {c: f"{c} of {nct}" for c in PR.RELEASE_COLUMNS}
    r.update({"index": index, "nctId": nct, "PMID": pmid, "outcome_title": title, "label": label, "outcome_type": "PRIMARY",
              "claim": f"A is superior to B in terms of {title} Week 4", "pValues": "['0.01']", "statisticalMethods": "['ANCOVA']",
              "nonInferiorityTypes": "['Superiority']", "Publication Date": "2019-Jan-N/A"})
    r.update(kw)
    return r


def facts(completion: str = "2018-06-30", outcomes: dict | None = None, refs: dict | None = None) -> D.StudyFacts:
    return D.StudyFacts(completion, outcomes if outcomes is not None else {"Pain": [0]}, refs if refs is not None else {"1": "RESULT"})


def run(rebuilt: list[dict], released: list[dict], trace: D.Trace, kept: set[int] | None = None) -> pd.DataFrame:
    rel = pd.DataFrame(released, columns=PR.RELEASE_COLUMNS).assign(release_split="train")
    return D.diff_pairs(pd.DataFrame(rebuilt, columns=PR.RELEASE_COLUMNS), rel, trace, RELEASE_DATE, kept)


def only(rows: pd.DataFrame) -> dict:
    assert len(rows) == 1, rows
    return rows.iloc[0].to_dict()


# --------------------------------------------------------------------------- paired rows


def test_identical_rows_are_exactly_equal_but_for_index_and_list_literal_quoting():
    abstract = "BACKGROUND: Drug X at 10\u00a0mg.\nRESULTS: P\u2009<\u20090.01 for β2-microglobulin."
    ours = row("NCT1", 1, "Pain", 1, index=3, pValues="['0.01', '<0.001']", article_abstract=abstract)
    theirs = row("NCT1", 1, "Pain", 1, index=917, pValues='["0.01", "<0.001"]', article_abstract=abstract)
    got = only(run([ours], [theirs], D.Trace({})))
    assert (got["category"], got["differing_columns"], got["whitespace_columns"], got["detail"], got["release_split"]) == (
        "identical", "", "", "", "train")


def test_whitespace_only_differences_are_their_own_category_naming_columns_and_place():
    ours = row("NCT1", 1, "Pain", 1, claim="A is superior to B  in terms of Pain Week 4",
               article_abstract="RESULTS: 10 mg of serum β 2-microglobulin.", article_title="T cells")
    theirs = row("NCT1", 1, " Pain ", 1, article_abstract="RESULTS: 10\u00a0mg of serum β2-microglobulin.", article_title="T\u2009cells")
    got = only(run([ours], [theirs], D.Trace({})))
    assert (got["category"], got["differing_columns"]) == ("whitespace_only", "")
    assert got["whitespace_columns"] == "claim, article_title, article_abstract, outcome_title"
    # the release's claim is built from its title " Pain ", so it has two spaces around "Pain" where ours has one
    assert got["detail"] == "claim: U+0020+U+0020 (rebuilt) vs U+0020 (release) at offset 18; 3 places"
    abstract_only = only(run([row("NCT1", 1, "Pain", 1, article_abstract=ours["article_abstract"])],
                             [row("NCT1", 1, "Pain", 1, article_abstract=theirs["article_abstract"])], D.Trace({})))
    assert (abstract_only["category"], abstract_only["whitespace_columns"], abstract_only["detail"]) == (
        "whitespace_only", "article_abstract", "article_abstract: U+0020 (rebuilt) vs U+00A0 (release) at offset 11; 2 places")


def test_a_row_with_a_text_difference_is_fields_differ_and_still_names_its_whitespace_columns():
    ours = row("NCT1", 1, "Pain", 1, article_abstract="10 mg", article_title="A trial")
    theirs = row("NCT1", 1, "Pain", 1, article_abstract="10\u00a0mg", article_title="A trial.")
    got = only(run([ours], [theirs], D.Trace({})))
    assert (got["category"], got["differing_columns"], got["whitespace_columns"]) == ("fields_differ", "article_title", "article_abstract")


def test_label_differs_shows_both_labels_and_both_pvalue_lists():
    ours = row("NCT1", 1, "Pain", 0, pValues="['0.05']")
    theirs = row("NCT1", 1, "Pain", 1, pValues="['0.05']")
    got = only(run([ours], [theirs], D.Trace({})))
    assert {k: got[k] for k in ("category", "rebuilt_label", "release_label", "rebuilt_pValues", "release_pValues")} == {
        "category": "label_differs", "rebuilt_label": "inconclusive", "release_label": "evidence",
        "rebuilt_pValues": "['0.05']", "release_pValues": "['0.05']"}


def test_fields_differ_names_every_differing_column():
    ours = row("NCT1", 1, "Pain", 1)
    theirs = row("NCT1", 1, "Pain", 1, claim="B is superior to A in terms of Pain Week 4", intervention_group_title="B",
                 comparator_group_title="A")
    got = only(run([ours], [theirs], D.Trace({})))
    assert got["category"] == "fields_differ"
    assert got["differing_columns"] == "claim, intervention_group_title, comparator_group_title"
    assert (got["rebuilt_claim"], got["release_claim"]) == (ours["claim"], theirs["claim"])


def test_rows_on_one_key_pair_by_equal_claim_first():
    a = row("NCT1", 1, "Pain", 1, index=0, claim="A is superior to B in terms of Pain Week 4")
    b = row("NCT1", 1, "Pain", 1, index=1, claim="A is superior to B in terms of Pain Week 12")
    rows = run([a, b], [row("NCT1", 1, "Pain", 1, claim=b["claim"])], D.Trace({"NCT1": facts()}))
    assert sorted(zip(rows["category"], rows["rebuilt_claim"])) == [("identical", b["claim"]), ("rebuilt_only_other", a["claim"])]


# --------------------------------------------------------------------------- release rows the rebuild lacks


def skipped(records: str, item: str, reason: str, detail: str = "", **study) -> D.Trace:
    """A trace of study NCT1 in which one step's report (``records``: claim_skips, abstract_skips, pair_skips) skipped ``item``."""
    return D.Trace({"NCT1": facts(**study)}, **{records: {item: [{"reason": reason, "detail": detail}]}})


OUTCOME_AND_STUDY_SKIPPED = D.Trace({"NCT1": facts()}, claim_skips={
    "NCT1#0": [{"reason": "outcome_pvalue_unparseable", "detail": "NA"}], "NCT1": [{"reason": "no_claimable_primary_outcome", "detail": ""}]})

# (trace, category, reason, detail) of a release row NCT1 / PMID 1 / "Pain" the rebuild has no row for
RELEASE_ONLY = [
    (D.Trace({}), "release_only_not_in_studies", "not_in_studies", "not among the studies read"),
    (D.Trace({}, excluded={"NCT1": "no_results"}), "release_only_filtered", "fetch_studies: no_results", "left out by the study filter"),
    (OUTCOME_AND_STUDY_SKIPPED, "release_only_skipped", "build_claims: outcome_pvalue_unparseable", "NA"),
    (skipped("claim_skips", "NCT1", "not_two_arm_groups"), "release_only_skipped", "build_claims: not_two_arm_groups", ""),
    (skipped("claim_skips", "NCT1", "multiple_result_references", "2"), "release_only_skipped", "build_claims: multiple_result_references", "2"),
    (skipped("pair_skips", "NCT1#0/1", "missing_fields", "article_title"), "release_only_skipped", "build_pairs: missing_fields", "article_title"),
    (skipped("pair_skips", "NCT1/1", "duplicate_pair", "A is …"), "release_only_skipped", "build_pairs: duplicate_pair", "A is …"),
    (skipped("abstract_skips", "1", "pmid_not_cached_offline"), "release_only_missing_abstract", "fetch_abstracts: pmid_not_cached_offline", ""),
    (skipped("pair_skips", "NCT1#0/1", "abstract_under_min_words", "7 words"), "release_only_missing_abstract",
     "build_pairs: abstract_under_min_words", "7 words"),
    (D.Trace({"NCT1": facts(outcomes={"Pain at rest": [0]})}), "release_only_other", "outcome_not_found",
     "no primary outcome with this title in the study"),
    (D.Trace({"NCT1": facts(refs={"2": "RESULT"})}), "release_only_other", "pmid_not_referenced", "the PMID is not a reference of the study"),
    (D.Trace({"NCT1": facts(refs={"1": "DERIVED"})}), "release_only_other", "pmid_reference_type", "the study cites the PMID as DERIVED"),
    (D.Trace({"NCT1": facts()}), "release_only_other", "no_reason_recorded", "the rebuild kept no pair for this outcome and PMID"),
]


@pytest.mark.parametrize("trace,category,reason,detail", RELEASE_ONLY)
def test_release_only_rows_get_the_reason_the_pipeline_gives(trace, category, reason, detail):
    got = only(run([], [row("NCT1", 1, "Pain", 1)], trace))
    assert (got["category"], got["reason"], got["detail"]) == (category, reason, detail)
    assert (got["release_label"], got["rebuilt_label"], got["in_rebuilt_splits"]) == ("evidence", "", "")


def test_multiple_result_references_do_not_explain_a_background_row():
    trace = D.Trace({"NCT1": facts(refs={"1": "BACKGROUND", "2": "RESULT", "3": "RESULT"})},
                    claim_skips={"NCT1": [{"reason": "multiple_result_references", "detail": "2 RESULT references"}]},
                    abstract_skips={"1": [{"reason": "no_abstract", "detail": ""}]})
    got = only(run([], [row("NCT1", 1, "Pain", 2)], trace))
    assert (got["category"], got["reason"]) == ("release_only_missing_abstract", "fetch_abstracts: no_abstract")


# --------------------------------------------------------------------------- rebuilt rows the release lacks


@pytest.mark.parametrize(
    "completion,published,label,category,detail",
    [
        ("2024-06-30", "2019-Jan-N/A", 1, "rebuilt_only_completed_after_release", "completed 2024-06-30"),
        ("2024-02", "2024-Mar-05", 2, "rebuilt_only_completed_after_release", "completed 2024-02"),
        ("2024-01", "2024-Mar-N/A", 1, "rebuilt_only_abstract_after_release", "published 2024-Mar-N/A"),  # January 2024 holds the date
        ("2023-11-30", "2024-Jan-16", 0, "rebuilt_only_abstract_after_release", "published 2024-Jan-16"),
        ("2023-11-30", "2024-N/A-N/A", 2, "rebuilt_only_nei_downsampled", "NOT ENOUGH INFO pairs are downsampled at random"),
        ("2023-11-30", "2024-Jan-15", 1, "rebuilt_only_other", ""),
    ],
)
def test_rebuilt_only_rows_by_reason(completion, published, label, category, detail):
    ours = row("NCT1", 1, "Pain", label, index=7, **{"Publication Date": published})
    got = only(run([ours], [], D.Trace({"NCT1": facts(completion=completion)}), kept={7}))
    assert (got["category"], got["detail"], got["in_rebuilt_splits"], got["release_label"]) == (category, detail, True, "")


def test_in_rebuilt_splits_says_whether_our_downsampling_kept_the_row():
    rows = run([row("NCT1", 1, "Pain", 2, index=4), row("NCT1", 2, "Pain", 2, index=5)], [], D.Trace({"NCT1": facts()}), kept={5})
    assert list(zip(rows["PMID"], rows["in_rebuilt_splits"])) == [("1", False), ("2", True)]


# --------------------------------------------------------------------------- the records it reads


def test_study_facts_keeps_only_the_wanted_studies_and_their_primary_outcomes():
    study = {"protocolSection": {"identificationModule": {"nctId": "NCT1"},
                                 "statusModule": {"completionDateStruct": {"date": "2024-06"}},
                                 "referencesModule": {"references": [{"pmid": "11", "type": "RESULT"}, {"pmid": "12", "type": "DERIVED"},
                                                                     {"type": "BACKGROUND"}]}},
             "resultsSection": {"outcomeMeasuresModule": {"outcomeMeasures": [
                 {"type": "PRIMARY", "title": "Pain  score"}, {"type": "SECONDARY", "title": "Sleep"}, {"type": "PRIMARY", "title": "Pain score"}]}}}
    other = {"protocolSection": {"identificationModule": {"nctId": "NCT2"}}}
    got = D.study_facts([study, other], {"NCT1"})
    assert got == {"NCT1": D.StudyFacts("2024-06", {"Pain score": [0, 2]}, {"11": "RESULT", "12": "DERIVED"})}


def test_the_step_threads_the_pipeline_records_and_writes_every_file(tmp_path):
    abstract = "RESULTS: 10\u00a0mg/L (P\u2009<\u20090.01).\nCONCLUSIONS: It works."  # kept exactly through both CSVs
    rebuilt = [row("NCT1", 1, "Pain", 1, index=0, article_abstract=abstract), row("NCT1", 1, "Sleep", 2, index=1), row("NCT2", 5, "Pain", 1, index=2)]
    released = [row("NCT1", 1, "Pain", 1, article_abstract=abstract), row("NCT3", 9, "Pain", 0), row("NCT4", 8, "Pain", 1)]
    rel_dir = tmp_path / "release"
    rel_dir.mkdir()
    PR.write_release_csv(pd.DataFrame(released[:1]), rel_dir / "train_set.csv")
    PR.write_release_csv(pd.DataFrame(released[1:2]), rel_dir / "validation_set.csv")
    PR.write_release_csv(pd.DataFrame(released[2:]), rel_dir / "test_set.csv")
    ours = {name: tmp_path / f"{name}.csv" for name in ("pairs", "train", "validation", "test")}
    PR.write_release_csv(pd.DataFrame(rebuilt), ours["pairs"])
    PR.write_release_csv(pd.DataFrame(rebuilt[:1]), ours["train"])
    PR.write_release_csv(pd.DataFrame(rebuilt[2:]), ours["validation"])
    PR.write_release_csv(pd.DataFrame(rebuilt[:0], columns=PR.RELEASE_COLUMNS), ours["test"])
    study = {"protocolSection": {"identificationModule": {"nctId": "NCT1"}, "statusModule": {"completionDateStruct": {"date": "2018-01"}},
                                 "referencesModule": {"references": [{"pmid": "1", "type": "RESULT"}]}},
             "resultsSection": {"outcomeMeasuresModule": {"outcomeMeasures": [{"type": "PRIMARY", "title": "Pain"}]}}}
    write_jsonl(tmp_path / "studies.jsonl.gz", [study, {"protocolSection": {"identificationModule": {"nctId": "NCT2"},
                                                                             "statusModule": {"completionDateStruct": {"date": "2025-03-01"}}}}])
    write_jsonl(tmp_path / "excluded.jsonl.gz", [{"nctId": "NCT3", "reason": "no_results"}])
    for name, skipped in (("studies_report", []), ("claims_report", []), ("abstracts_report", []), ("pairs_report", [])):
        (tmp_path / f"{name}.json").write_text(json.dumps({"skipped": skipped, "excluded_by_reason": {"no_results": 1}}))
    inputs = {**{k: str(v) for k, v in ours.items()}, "studies": str(tmp_path / "studies.jsonl.gz"),
              "excluded": str(tmp_path / "excluded.jsonl.gz"), **{n: str(tmp_path / f"{n}.json") for n in
                                                                  ("studies_report", "claims_report", "abstracts_report", "pairs_report")}}
    out = tmp_path / "diff"
    outputs = {"markdown": str(out / "diff.md"), "rows": str(out / "diff_rows.csv"), "counts": str(out / "diff_counts.csv"),
               "report": str(out / "report.json")}
    options = {**section("clinifact.diff", release=str(rel_dir)), "cache_dir": str(tmp_path / "cache")}
    got = call_step(steps.diff, inputs, outputs, options)
    assert got == {"identical": 1, "rebuilt_only_nei_downsampled": 1, "rebuilt_only_completed_after_release": 1,
                   "release_only_filtered": 1, "release_only_not_in_studies": 1}
    rows = pd.read_csv(out / "diff_rows.csv", dtype=str, keep_default_na=False)
    assert list(rows.columns) == D.COLUMNS
    assert dict(zip(rows["nctId"] + "/" + rows["outcome_title"], rows["category"])) == {
        "NCT1/Pain": "identical", "NCT1/Sleep": "rebuilt_only_nei_downsampled", "NCT2/Pain": "rebuilt_only_completed_after_release",
        "NCT3/Pain": "release_only_filtered", "NCT4/Pain": "release_only_not_in_studies"}
    assert list(rows["release_split"]) == ["train", "", "", "validation", "test"]
    assert rows.loc[rows["outcome_title"] == "Sleep", "in_rebuilt_splits"].tolist() == ["False"]
    counts = pd.read_csv(out / "diff_counts.csv")
    assert list(counts["category"]) == list(D.CATEGORIES) and counts["rows"].sum() == 5
    md = (out / "diff.md").read_text()
    assert "Rebuilt pairs (`all_pairs.csv`, before NEI downsampling): 3, of which 2 are in our splits." in md
    assert "Studies the filter left out: no_results 1." in md
    assert "## release_only_filtered (1)" in md and "fetch_studies: no_results" in md
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["identical"] == 1 and report["counts"]["label_differs"] == 0


def test_trace_keeps_only_the_exclusions_of_the_wanted_studies():
    excluded = [{"nctId": "NCT00000001", "reason": "no_results"}, {"nctId": "NCT00000002", "reason": "not_interventional"}]
    empty = {"skipped": []}
    trace = D.Trace.from_reports({}, iter(excluded), empty, empty, empty, wanted={"NCT00000002", "NCT00000003"})
    assert trace.excluded == {"NCT00000002": "not_interventional"}
    assert D.Trace.from_reports({}, excluded, empty, empty, empty).excluded == {"NCT00000001": "no_results", "NCT00000002": "not_interventional"}
