"""Each dataset's labels are spelled in one module, medfc.common.labels: no other module of the library
writes a veracity or CliniFact label as a string literal (docstrings aside), so renaming one is one edit."""

from __future__ import annotations

import ast
from pathlib import Path

from medfc.common import labels

SRC = Path(labels.__file__).resolve().parents[1]
SPELLED_ONCE = {*labels.VERACITY_LABELS, *labels.CLINIFACT_LABELS, *labels.CLINIFACT_RECORD_NAMES.values(),
                *labels.CLINIFACT_RELEASE_NAMES.values()} - {"evidence"}  # "evidence" is also a field name everywhere


def _literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


# the same words that are not labels there: a figure legend's abbreviation, and a spelling that LLM verdict
# text may use for an abstention (matched lower-cased)
NOT_LABELS = {("scoring/medsnip.py", "not enough information")}


def test_labels_are_spelled_only_in_common_labels():
    found = [f"{p.relative_to(SRC)}:{line} {value!r}" for p in sorted(SRC.rglob("*.py")) if p.name != "labels.py"
             for line, value in _literals(p) if value in SPELLED_ONCE and (str(p.relative_to(SRC)), value) not in NOT_LABELS]
    assert not found, "label literals outside medfc.common.labels: " + ", ".join(found)


def test_the_check_sees_a_label_literal(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Docs may say SUPPORTED."""\nX = "SUPPORTED"\n', encoding="utf-8")
    assert _literals(module) == [(2, "SUPPORTED")]
