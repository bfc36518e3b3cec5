"""docs/ARCHITECTURE.md says what the code holds: its table of the experiments' modules names every module of
src/medfc/experiments/ once (and nothing else), and its list of model kinds is the registry's."""

from __future__ import annotations

import re

from medfc.experiments.options import MODEL_CONFIGS
from tests.helpers.workflow import REPO

DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def test_the_table_of_the_experiments_modules_is_whole():
    table = DOC.split("<!-- experiments modules -->", 1)[1].split("<!-- /experiments modules -->", 1)[0]
    named = [re.match(r"\| `([\w.]+)` \|", row)[1] for row in table.splitlines() if re.match(r"\| `", row)]
    modules = sorted(p.name for p in (REPO / "src" / "medfc" / "experiments").glob("*.py") if p.name != "__init__.py")
    assert len(named) == len(set(named)) and sorted(named) == modules, \
        f"docs/ARCHITECTURE.md: missing {sorted(set(modules) - set(named))}, extra {sorted(set(named) - set(modules))}"


def test_the_model_kinds_named_are_the_registrys():
    kinds = re.search(r"`medfc\.experiments\.options\.MODEL_CONFIGS` \(([^)]*)\)", DOC)[1]
    assert re.findall(r"`(\w+)`", kinds) == [cls.kind for cls in MODEL_CONFIGS]
