"""Imports point down: the layer order of docs/ARCHITECTURE.md ("Layers", the numbered list between
``<!-- layers -->`` and ``<!-- /layers -->``, top to bottom) holds for every import under src/medfc,
those inside functions and those made only for type checkers included, and no modules import each other
in a cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers.workflow import REPO

ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"
SRC = REPO / "src"


def layers_from(markdown: str) -> list[list[str]]:
    """The packages of each layer, top first: one numbered line per layer, packages in backticks."""
    block = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", markdown, re.S)
    assert block, "docs/ARCHITECTURE.md has no <!-- layers --> ... <!-- /layers --> list"
    rows = [re.findall(r"`(medfc(?:\.[\w]+)?)`", line) for line in block.group(1).splitlines() if re.match(r"\s*\d+\.", line)]
    return [r for r in rows if r]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(root: Path) -> dict[str, list[tuple[str, int]]]:
    """module → [(imported medfc module, line)] for every ``.py`` under ``root / "medfc"``; ``from a
    import b`` is the module ``a.b`` when that is a module of the tree, else ``a``. Imports for type checkers only
    (under ``if TYPE_CHECKING:``) count: a reader follows them as any other."""
    modules = {module_name(p, root): p for p in (root / "medfc").rglob("*.py")}
    out: dict[str, list[tuple[str, int]]] = {}
    for mod, path in sorted(modules.items()):
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        edges = []
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges += [(a.name, node.lineno) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for a in node.names:
                    edges.append((f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target, node.lineno))
        out[mod] = [(t, line) for t, line in edges if t == "medfc" or t.startswith("medfc.")]
    return out


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def violations(root: Path, layers: list[list[str]]) -> list[str]:
    """Every import that goes up or sideways between packages (or into a package of no layer), and
    every cycle of modules; empty when the tree keeps to ``layers``."""
    rank = {pkg: i for i, row in enumerate(layers) for pkg in row}  # 0 = top
    graph = imports(root)
    problems = []
    for mod, edges in graph.items():
        src = package_of(mod)
        if src not in rank:
            problems.append(f"{mod}: package {src} is in no layer of docs/ARCHITECTURE.md")
            continue
        for target, line in edges:
            dst = package_of(target)
            if dst == src:
                continue
            if dst not in rank:
                problems.append(f"{mod}:{line} imports {target}: package {dst} is in no layer")
            elif rank[dst] <= rank[src]:
                where = "its own layer" if rank[dst] == rank[src] else "a higher layer"
                problems.append(f"{mod}:{line} imports {target}: {src} -> {dst} goes to {where}")
    problems += [f"import cycle: {' -> '.join(c + [c[0]])}" for c in cycles({m: {t for t, _ in e if t in graph} for m, e in graph.items()})]
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_import_of_the_library_points_down_the_documented_layers():
    layers = layers_from(ARCHITECTURE.read_text(encoding="utf-8"))
    packages = {package_of(module_name(p, SRC)) for p in (SRC / "medfc").rglob("*.py")}
    listed = [pkg for row in layers for pkg in row]
    assert len(listed) == len(set(listed)), f"a package is listed twice: {listed}"
    assert sorted(packages - set(listed)) == [], "packages of src/medfc in no layer of docs/ARCHITECTURE.md"
    assert violations(SRC, layers) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "medfc" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_an_upward_or_sideways_import_and_a_cycle_are_named(tmp_path):
    """The check fails, naming module, line and edge, on what the real tree must not do."""
    layers = [["medfc.experiments", "medfc.medsnip"], ["medfc.llm", "medfc.scoring"], ["medfc.common"], ["medfc"]]
    root = _tree(tmp_path, {
        "__init__.py": "",
        "common/__init__.py": "", "common/io.py": "import medfc\n",
        "llm/__init__.py": "", "llm/local.py": "def f():\n    from medfc.experiments.models.training import x\n",
        "scoring/__init__.py": "", "scoring/a.py": "from medfc.llm import local\nfrom . import b\n",
        "scoring/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n",
        "experiments/__init__.py": "", "experiments/models/__init__.py": "",
        "experiments/models/training.py": "from medfc.common import io\nfrom medfc.medsnip import steps\n",
        "medsnip/__init__.py": "", "medsnip/steps.py": "import medfc.common.io\n",
        "tables/__init__.py": "", "tables/t.py": "",
    })
    assert violations(root, layers) == [
        "medfc.experiments.models.training:2 imports medfc.medsnip.steps: medfc.experiments -> medfc.medsnip goes to its own layer",
        "medfc.llm.local:2 imports medfc.experiments.models.training: medfc.llm -> medfc.experiments goes to a higher layer",
        "medfc.scoring.a:1 imports medfc.llm.local: medfc.scoring -> medfc.llm goes to its own layer",
        "medfc.tables: package medfc.tables is in no layer of docs/ARCHITECTURE.md",
        "medfc.tables.t: package medfc.tables is in no layer of docs/ARCHITECTURE.md",
        "import cycle: medfc.scoring.a -> medfc.scoring.b -> medfc.scoring.a",
    ]


def test_the_layer_list_is_read_from_the_markdown():
    text = "x\n<!-- layers -->\n1. `medfc.cli`, `medfc.plan`\n2. `medfc.common`, `medfc` (the root)\n<!-- /layers -->\n"
    assert layers_from(text) == [["medfc.cli", "medfc.plan"], ["medfc.common", "medfc"]]


MAX_METHODS = 40  # a class a reader can hold in mind; the plan is in parts (medfc.plan.jobs.Part) to stay below it


def test_no_class_of_the_library_has_more_than_forty_methods():
    sizes = {f"{path.relative_to(SRC)}:{node.name}": sum(isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) for b in node.body)
             for path in (SRC / "medfc").rglob("*.py") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ClassDef)}
    assert {name: n for name, n in sizes.items() if n > MAX_METHODS} == {}
    assert max(sizes.values()) > 20  # the plan's parts are counted
