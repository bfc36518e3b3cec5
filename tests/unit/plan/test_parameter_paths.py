"""docs/ARCHITECTURE.md's paths of a parameter are the real ones: each entry names a file and quotes (in
backticks) what that file holds; the learning rate's path is at most 8 files, runner included, none named
twice; and the parameter is named in no other file of src/ and workflow/, so the list is the whole path."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.helpers.workflow import REPO

DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"<!-- path: (?P<name>[^,>]+?)(?:, at most (?P<most>\d+))? -->\n(?P<body>.*?)<!-- /path -->", re.S)
PATHS = {m["name"]: (m["most"], m["body"]) for m in BLOCK.finditer(DOC)}


def entries(body: str) -> list[tuple[str, list[str]]]:
    """(file, the texts it quotes) per numbered entry; an entry runs on over its indented lines."""
    items = re.split(r"^\d+\. ", body, flags=re.M)[1:]
    out = []
    for item in items:
        spans = re.findall(r"`([^`]+)`", item)
        out.append((spans[0], spans[1:]))
    return out


def test_the_three_documented_paths_are_there():
    assert set(PATHS) == {"lr", "download_delay", "verifier model"}


@pytest.mark.parametrize("name", sorted(PATHS))
def test_every_file_of_a_path_holds_what_the_docs_quote(name):
    most, body = PATHS[name]
    files = entries(body)
    assert files, f"path {name}: no entries"
    names = [f for f, _ in files]
    assert len(names) == len(set(names)), f"path {name}: a file opened twice: {names}"
    if most is not None:
        assert len(names) <= int(most), f"path {name}: {len(names)} files, the target is at most {most}"
    for file, quotes in files:
        path = REPO / file
        assert path.is_file(), f"path {name}: {file} does not exist"
        text = path.read_text(encoding="utf-8")
        missing = [q for q in quotes if q not in text]
        assert not missing, f"path {name}: {file} no longer holds {missing}"


def _names_in_python(path: Path, key: str) -> bool:
    """Whether code (not a docstring or comment) names ``key``: a name, attribute, argument, field or string."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == key or isinstance(node, ast.Attribute) and node.attr == key:
            return True
        if isinstance(node, (ast.keyword, ast.arg)) and node.arg == key:
            return True
        if isinstance(node, ast.Constant) and node.value == key and id(node) not in docstrings:
            return True
    return False


def _names_in_text(path: Path, key: str) -> bool:
    return any(re.search(rf"\b{key}\b", line.split("#", 1)[0]) for line in path.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("name, key", [("lr", "lr"), ("download_delay", "download_delay")])
def test_no_other_file_names_the_parameter(name, key):
    documented = {f for f, _ in entries(PATHS[name][1])}
    naming = set()
    for path in sorted((REPO / "src").rglob("*.py")) + sorted((REPO / "workflow").rglob("*")):
        if not path.is_file() or path.suffix not in (".py", ".smk", ".yaml"):
            continue
        if (_names_in_python if path.suffix == ".py" else _names_in_text)(path, key):
            naming.add(str(path.relative_to(REPO)))
    assert naming <= documented, f"{key} is named in {sorted(naming - documented)}, which docs/ARCHITECTURE.md's path leaves out"
