"""Reruns follow the library code: each rule names its step with the version of the code that step can
run (medfc.common.codeversion), so editing a module in src/medfc reruns exactly the rules whose steps use
it, and what depends on them; comments and docstrings rerun nothing.

Works on a copy of the shared full demo run (every stage, tiny models; conftest.py), with the copy's own
src/ on PYTHONPATH, and checks dry-run sets only."""

from __future__ import annotations

import pytest

from tests.helpers.workflow import WorkflowCopy, planned_jobs

pytestmark = pytest.mark.workflow


@pytest.fixture
def copy(full_demo_run, tmp_path) -> WorkflowCopy:
    """The finished full run, copied with its results and Snakemake's records (mtimes kept)."""
    return full_demo_run.clone(tmp_path / "wf")


def _plan(wf: WorkflowCopy) -> list[str]:
    proc = wf.run("-n", *wf.args)
    return planned_jobs(proc.stdout + proc.stderr)


def _edit(wf: WorkflowCopy, module: str, old: str, new: str) -> None:
    path = wf.path(f"src/medfc/{module}")
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {module}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_editing_one_module_reruns_exactly_the_rules_that_use_it(copy):
    assert _plan(copy) == []  # up to date

    # a docstring and a comment: nothing reruns
    _edit(copy, "healthfc/figures.py", '"""', '"""A reworded docstring. ', )
    _edit(copy, "tables/healthfc.py", "\ndef table3(", "\n# a new comment\ndef table3(")
    assert _plan(copy) == []

    # HealthFC's figure code: only the statistics job that draws the figures
    _edit(copy, "healthfc/figures.py", "\nLEVEL_COLOURS = {", "\nEDITED = True\nLEVEL_COLOURS = {")
    assert _plan(copy) == ["all", "healthfc_stats", "index", "main_tex"]  # the run's index and main.tex follow whatever reruns

    # the HealthFC tables: the HealthFC table jobs (the papers' tables and their companions), not the CliniFact ones, no training, no scoring
    _edit(copy, "tables/healthfc.py", "\ndef table3(", "\nEDITED = True\n\n\ndef table3(")
    assert _plan(copy) == ["all", "healthfc_stats", "index", "main_tex", "table[table=healthfc_significance]", "table[table=healthfc_table3]",
                           "table[table=healthfc_table3_extra]", "table[table=healthfc_table5]", "table[table=healthfc_table5_extra]"]


def test_editing_a_module_early_in_the_chain_reruns_it_and_everything_downstream(copy):
    # CliniFact's pair building (also read by its statistics, its diff against the release and Fig. 3): the pairs
    # and all that uses them
    _edit(copy, "clinifact/pairs.py", "\nRELEASE_COLUMNS", "\nEDITED = True\nRELEASE_COLUMNS")
    jobs = _plan(copy)
    assert jobs == ["all", "clinifact_build_pairs", "clinifact_diff", "clinifact_export", "clinifact_fig3",
                    "clinifact_stats", "clinifact_table5", "clinifact_table7",
                    "clinifact_zero_shot[model=tinylm]", "clinifact_zero_shot_score[model=tinylm]", "error_browser", "index", "main_tex",
                    "pairs_experiment[dataset=clinifact,model=tiny]", "pairs_score[dataset=clinifact,model=tiny]",
                    "table[table=clinifact_significance]", "table[table=clinifact_table8]", "table[table=clinifact_table8_extra]"]
    assert not [j for j in jobs if j.startswith("healthfc")]

    # the HealthFC diff against the release: that job alone (nothing reads its tables)
    _edit(copy, "healthfc/diff.py", "\nCATEGORIES", "\nEDITED = True\nCATEGORIES")
    assert sorted(set(_plan(copy)) - set(jobs)) == ["healthfc_diff"]
