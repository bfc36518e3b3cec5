"""The code version in each rule's params follows exactly the library code its step can run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import medfc
from medfc.common import codeversion as cv

STEPS = [
    "clinifact.steps:fetch_studies",
    "clinifact.steps:build_claims",
    "clinifact.steps:fetch_abstracts",
    "clinifact.steps:build_pairs",
    "clinifact.steps:import_release",
    "clinifact.steps:clinifact_stats",
    "healthfc.steps:crawl",
    "healthfc.steps:parse",
]


def _clear() -> None:
    for fn in (cv.step_version, cv._source_path, cv._tree, cv._module_digest, cv._module_closure):
        fn.cache_clear()


@pytest.fixture
def pkg(tmp_path, monkeypatch) -> Path:
    """A private copy of the medfc sources that the versions are computed from."""
    root = tmp_path / "medfc"
    shutil.copytree(Path(medfc.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cv, "_package_root", lambda: root)
    _clear()
    yield root
    _clear()


def _versions() -> dict[str, str]:
    _clear()
    return {s: cv.step_version(s) for s in STEPS}


def _changed(before: dict[str, str]) -> set[str]:
    after = _versions()
    return {s for s in STEPS if after[s] != before[s]}


def test_versioned_spec_names_the_step_and_its_code(pkg):
    spec = cv.versioned("clinifact.steps:build_pairs")
    assert re.fullmatch(r"clinifact\.steps:build_pairs@[0-9a-f]{12}", spec)
    assert cv.split_spec(spec) == ("medfc.clinifact.steps", "build_pairs")
    assert len(set(_versions().values())) == len(STEPS)  # every step has its own version
    with pytest.raises(cv.StepNotFound, match="no top-level function 'nope'"):
        cv.step_version("clinifact.steps:nope")


def test_an_edited_module_changes_exactly_the_steps_that_import_it(pkg):
    before = _versions()
    pairs = pkg / "clinifact" / "pairs.py"
    pairs.write_text(pairs.read_text() + "\n\nSPLIT_NAMES = ('train',)\n")
    # pairs.py is imported by build_pairs and import_release (directly, and through release.py) and by
    # clinifact_stats (through stats.py); never by the studies, claims or abstracts steps, nor by HealthFC
    assert _changed(before) == {"clinifact.steps:build_pairs", "clinifact.steps:import_release", "clinifact.steps:clinifact_stats"}


def test_an_edit_inside_the_steps_module_changes_only_the_steps_that_reach_it(pkg):
    before = _versions()
    steps = pkg / "clinifact" / "steps.py"
    text = steps.read_text()
    assert "min_abstract_words=options.min_abstract_words" in text
    steps.write_text(text.replace("min_abstract_words=options.min_abstract_words", "min_abstract_words=options.min_abstract_words + 0"))
    assert _changed(before) == {"clinifact.steps:build_pairs"}


def test_comments_docstrings_and_formatting_change_nothing(pkg):
    before = _versions()
    pairs = pkg / "clinifact" / "pairs.py"
    text = pairs.read_text()
    text = text.replace('"""', '"""Edited docstring. ', 1)  # the module docstring
    text = "# a new comment\n\n\n" + text.replace("\n\n\ndef ", "\n\n\n# another comment\ndef ", 1)
    pairs.write_text(text)
    assert _changed(before) == set()


def test_a_shared_common_module_changes_every_step_that_uses_it(pkg):
    before = _versions()
    report = pkg / "common" / "report.py"
    report.write_text(report.read_text() + "\n\nREPORT_VERSION = 2\n")
    changed = _changed(before)
    assert "clinifact.steps:build_pairs" in changed and "healthfc.steps:parse" in changed
