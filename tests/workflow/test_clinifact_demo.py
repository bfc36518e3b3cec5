"""The demo's CliniFact stage (the default config): labels as the release made them and the diff of the rebuild
against the demo release, in which every category appears."""

import zipfile

import pandas as pd
import pytest

from medfc.clinifact.diff import CATEGORIES
from medfc.common.io import read_jsonl

pytestmark = pytest.mark.workflow

EXPECTED = {
    "identical": 29, "whitespace_only": 0, "label_differs": 1, "fields_differ": 1,
    "release_only_not_in_studies": 1, "release_only_filtered": 1, "release_only_skipped": 1, "release_only_missing_abstract": 1,
    "release_only_other": 1,
    "rebuilt_only_completed_after_release": 3, "rebuilt_only_abstract_after_release": 1, "rebuilt_only_nei_downsampled": 1,
    "rebuilt_only_other": 1,
}

# category, nctId, PMID and reason of every row that is not identical ("-": none)
NOT_IDENTICAL = """
fields_differ NCT99000044 99000052 -
label_differs NCT99000003 99000003 -
rebuilt_only_abstract_after_release NCT99000035 99000041 published_after_release
rebuilt_only_completed_after_release NCT99000022 99000026 completed_after_release
rebuilt_only_completed_after_release NCT99000022 99000027 completed_after_release
rebuilt_only_completed_after_release NCT99000022 99000028 completed_after_release
rebuilt_only_nei_downsampled NCT99000040 99000048 nei_downsampled
rebuilt_only_other NCT99000008 99000009 not_in_release
release_only_filtered NCT99000027 99000032 fetch_studies: not_interventional
release_only_missing_abstract NCT99000032 99000037 fetch_abstracts: no_abstract
release_only_other NCT99000001 99000001 outcome_not_found
release_only_not_in_studies NCT99009901 99009901 not_in_studies
release_only_skipped NCT99000014 99000015 build_claims: outcome_pvalue_unparseable
"""


@pytest.fixture(scope="module")
def clinifact_run(full_demo_run, tmp_path_factory):
    """The demo's CliniFact stage alone (config/config.yaml, only the CliniFact stage): a copy of the shared
    full demo run (conftest.py), whose CliniFact section is the same (tests/workflow/test_shared_runs.py checks
    it), so a run with this config is up to date."""
    wf = full_demo_run.clone(tmp_path_factory.mktemp("clinifact") / "wf")
    wf.path("config/only_clinifact.yaml").write_text("stages: {healthfc: false, clinifact: true, experiments: false}\n")
    return wf


def test_an_exact_p_of_005_is_evidence_as_in_the_release(clinifact_run):
    pairs = pd.read_csv(clinifact_run.path("results/clinifact/pairs/all_pairs.csv"))
    assert pairs["label"].value_counts().to_dict() == {1: 19, 2: 11, 0: 7}
    p05 = pairs[(pairs["nctId"] == "NCT99000039") & (pairs["PMID"] == 99000045)]
    assert p05[["pValues", "label"]].values.tolist() == [["['0.05']", 1]]


def test_demo_diff_against_the_demo_release_shows_every_category(clinifact_run):
    counts = pd.read_csv(clinifact_run.path("results/clinifact/diff/diff_counts.csv"))
    assert list(counts["category"]) == list(CATEGORIES)
    assert dict(zip(counts["category"], counts["rows"])) == EXPECTED
    rows = pd.read_csv(clinifact_run.path("results/clinifact/diff/diff_rows.csv"), dtype=str, keep_default_na=False)
    found = sorted(" ".join(r[k] or "-" for k in ("category", "nctId", "PMID", "reason")).split(" ", 3)
                   for r in rows.to_dict("records") if r["category"] != "identical")
    assert found == sorted(line.split(" ", 3) for line in NOT_IDENTICAL.strip().splitlines())
    label = rows[rows["category"] == "label_differs"].iloc[0]
    assert (label["rebuilt_label"], label["release_label"], label["rebuilt_pValues"]) == ("inconclusive", "evidence", "['.08']")
    excluded = list(read_jsonl(clinifact_run.path("results/clinifact/studies/excluded.jsonl.gz")))
    assert {e["nctId"] for e in excluded} == {"NCT99000025", "NCT99000026", "NCT99000027"}
    md = clinifact_run.path("results/clinifact/diff/diff.md").read_text()
    assert "Release rows: 36 (`resources/demo/clinifact_release`), release date 2024-01-15." in md
    assert all(f"| {c} " in md for c in CATEGORIES)


def test_the_report_has_both_diff_files(clinifact_run):
    clinifact_run.run("--configfile", "config/config.yaml", "config/only_clinifact.yaml", "--report", "report.zip")
    names = [n.rsplit("/", 1)[-1] for n in zipfile.ZipFile(clinifact_run.path("report.zip")).namelist()]
    assert names.count("diff.md") == 1 and names.count("diff_rows.csv") == 1
