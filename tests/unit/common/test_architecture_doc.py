"""docs/ARCHITECTURE.md and docs/CONTRIBUTING.md say what the code holds: the table of the experiments' modules
names every module of src/medfc/experiments/ once (and nothing else), the list of model kinds is the registry's,
and the files a new value of an axis touches are real files."""

from __future__ import annotations

import re

from medfc.experiments.models.options import MODEL_CONFIGS
from tests.helpers.workflow import REPO

DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def test_the_table_of_the_experiments_modules_is_whole():
    """Each module of src/medfc/experiments/ has its line, and each package one line (``name/``) for all its modules."""
    table = DOC.split("<!-- experiments modules -->", 1)[1].split("<!-- /experiments modules -->", 1)[0]
    named = [re.match(r"\| `(\w+\.py|\w+/)` \|", row)[1] for row in table.splitlines() if re.match(r"\| `", row)]
    here = REPO / "src" / "medfc" / "experiments"
    modules = sorted([*(p.name for p in here.glob("*.py") if p.name != "__init__.py"),
                      *(f"{p.parent.name}/" for p in here.glob("*/__init__.py"))])
    assert len(named) == len(set(named)) and sorted(named) == modules, \
        f"docs/ARCHITECTURE.md: missing {sorted(set(modules) - set(named))}, extra {sorted(set(named) - set(modules))}"


def test_the_model_kinds_named_are_the_registrys():
    kinds = re.search(r"`medfc\.experiments\.models\.options\.MODEL_CONFIGS` \(([^)]*)\)", DOC)[1]
    assert re.findall(r"`(\w+)`", kinds) == [cls.kind for cls in MODEL_CONFIGS]


def test_the_files_an_axis_touches_are_there():
    """docs/CONTRIBUTING.md's lists of the files a new value of an axis touches, and its tests, name real files."""
    text = (REPO / "docs" / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Adding a value to an axis", 1)[1].split("\n## ", 1)[0]
    paths = {p for p in re.findall(r"`((?:src|workflow|docs|tests)/[\w/.-]+\.(?:py|smk|yaml|md))`", section)}
    assert len(paths) >= 15 and "tests/unit/plan/test_model_kinds.py" in paths
    assert [p for p in sorted(paths) if not (REPO / p).is_file()] == []
    rows = re.findall(r"^\| ([a-zA-Z ]+) \| (\d+)", section, re.M)
    assert [(axis, int(n)) for axis, n in rows] == [("search source", 4), ("CliniFact system", 5), ("model kind", 5),
                                                     ("HealthFC system", 3), ("LLM backend", 3), ("translation backend", 3),
                                                     ("studies source", 3), ("MedSNIP answer source", 3),
                                                     ("MedSNIP verifier kind", 3)]
