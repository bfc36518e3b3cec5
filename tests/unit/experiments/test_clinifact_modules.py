"""The CliniFact generative runners share what they share through lower modules: the pairs, records and scores
of the one discriminative path (``pairs``), the prompt and the scoring of its options (``clinifact.prompts``). No runner module
imports another (imports inside functions too), and none of them or the shared modules imports a private name of
another module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[3] / "src" / "medfc" / "experiments"
PACKAGE = "medfc.experiments"
RUNNERS = ("clinifact.zero_shot", "clinifact.fine_tune")
SHARED = ("pairs", "clinifact.prompts")


def module_path(name: str) -> Path:
    """The file of the module ``name`` (dotted, relative to ``medfc.experiments``)."""
    return EXPERIMENTS.joinpath(*name.split(".")).with_suffix(".py")


def runner_modules() -> dict[str, Path]:
    """The runner modules by dotted name: one per system."""
    return {f"{PACKAGE}.{name}": module_path(name) for name in RUNNERS}


def imported(path: Path) -> list[tuple[str, str | None]]:
    """Every import of the module at ``path``, at its top or inside a function: ``(module, name)`` per imported
    name (``name`` ``None`` for ``import module``)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: a relative import"
            found.extend((node.module or "", alias.name) for alias in node.names)
    return found


def names_module(module: str, name: str | None, target: str) -> bool:
    """Whether ``from module import name`` (or ``import module``) reaches the module ``target``."""
    return module == target or module.startswith(target + ".") or (name is not None and f"{module}.{name}" == target)


def test_the_runner_list_holds_the_modules_it_names():
    assert all(path.is_file() for path in runner_modules().values())
    assert all(module_path(name).is_file() for name in SHARED)


@pytest.mark.parametrize("runner", sorted(runner_modules()))
def test_no_clinifact_runner_imports_another(runner):
    others = [m for m in runner_modules() if m != runner]
    crossing = [f"{module}:{name}" for module, name in imported(runner_modules()[runner])
                for other in others if names_module(module, name, other)]
    assert crossing == [], f"{runner} imports another runner; move what they share to {', '.join(SHARED)}"


@pytest.mark.parametrize("module", sorted([*runner_modules(), *(f"{PACKAGE}.{name}" for name in SHARED)]))
def test_no_private_name_crosses_a_module(module):
    path = {**runner_modules(), **{f"{PACKAGE}.{name}": module_path(name) for name in SHARED}}[module]
    private = [f"{source}:{name}" for source, name in imported(path)
               if source.startswith("medfc") and name is not None and name.startswith("_")]
    assert private == []


def test_the_shared_modules_import_no_runner():
    for name in SHARED:
        crossing = [f"{module}:{imp}" for module, imp in imported(module_path(name))
                    for runner in runner_modules() if names_module(module, imp, runner)]
        assert crossing == [], name


def test_an_import_of_a_runner_is_found_in_each_form():
    target = f"{PACKAGE}.clinifact.zero_shot"
    assert names_module(f"{PACKAGE}.clinifact", "zero_shot", target) and names_module(target, "run_zero_shot", target)
    assert names_module(target, None, target)
    assert not names_module(f"{PACKAGE}.pairs", "load_pairs", target) and not names_module(PACKAGE, "pairs", target)
