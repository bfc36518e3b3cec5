"""The version of the library code a workflow step runs, for Snakemake's params trigger.

Every rule runs the one script ``workflow/scripts/step.py``, so Snakemake's own code trigger never
sees the library. Each rule therefore names its step as ``"module:function@<version>"``
(:func:`versioned`), where the version is a hash of the code that step can execute:

* the step function itself and the module-level functions, classes and constants of its own module
  that it reaches (followed transitively by name);
* every ``medfc`` module those reach through imports, as whole modules, with *their* ``medfc``
  imports followed transitively (imports inside functions included), plus the ``__init__`` modules of
  the packages on the way.

Editing ``medfc/clinifact/pairs.py`` then changes the version of exactly the steps that import it,
directly or through other modules, and Snakemake reruns those rules and what depends on them.

What counts as a change: the hash is taken over the modules' abstract syntax trees without
docstrings and without line numbers. Comments, docstrings, blank lines and formatting do not rerun
anything (a typo fixed in a docstring must not throw away hours of training); every change to what
the code does does. The AST's textual form is Python-version specific, so moving the workflow to
another Python minor version reruns it once.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from functools import cache
from pathlib import Path

PACKAGE = "medfc"


class StepNotFound(ValueError):
    pass


def versioned(spec: str) -> str:
    """``"healthfc.steps:crawl"`` → ``"healthfc.steps:crawl@1a2b3c4d5e6f"``."""
    return f"{spec}@{step_version(spec)}"


def split_spec(spec: str) -> tuple[str, str]:
    """``"healthfc.steps:crawl[@version]"`` → (``"medfc.healthfc.steps"``, ``"crawl"``)."""
    spec = spec.split("@", 1)[0]
    if ":" not in spec:
        raise StepNotFound(f"step {spec!r} must look like 'module:function', e.g. 'healthfc.steps:crawl'")
    module, func = spec.split(":", 1)
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        module = f"{PACKAGE}.{module}"
    return module, func


@cache
def step_version(spec: str) -> str:
    module, func = split_spec(spec)
    tree = _tree(module)
    defs = _top_level(tree)
    if func not in defs:
        raise StepNotFound(f"step {spec!r}: module {module} has no top-level function {func!r}")
    imports = _import_map(tree, module)
    local: set[str] = set()
    modules: set[str] = set()
    todo = [func]
    while todo:
        name = todo.pop()
        if name in local:
            continue
        local.add(name)
        for used in _names(defs[name]):
            if used in defs and used not in local:
                todo.append(used)
            elif used in imports:
                modules.add(imports[used])
        for node in ast.walk(defs[name]):  # imports inside the function body
            modules.update(_imported_modules(node, module))
    closure = _module_closure(frozenset(m for m in modules if _is_ours(m)))
    digest = hashlib.sha256()
    digest.update(module.encode())
    for name in sorted(local):
        digest.update(name.encode() + b"\0" + _dump(defs[name]).encode())
    for mod in sorted(closure - {module}):
        digest.update(mod.encode() + b"\0" + _module_digest(mod).encode())
    return digest.hexdigest()[:12]


def _is_ours(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


@cache
def _package_root() -> Path:
    spec = importlib.util.find_spec(PACKAGE)  # imports only medfc/__init__.py
    if spec is None or not spec.origin:
        raise StepNotFound(f"package {PACKAGE} is not importable")
    return Path(spec.origin).parent


@cache
def _source_path(module: str) -> Path | None:
    """The source file of one of our modules, found on disk without importing it."""
    if not _is_ours(module):
        return None
    parts = module.split(".")[1:]
    if not parts:
        return _package_root() / "__init__.py"
    for path in (_package_root().joinpath(*parts[:-1], parts[-1] + ".py"), _package_root().joinpath(*parts, "__init__.py")):
        if path.is_file():
            return path
    return None


@cache
def _tree(module: str) -> ast.Module:
    path = _source_path(module)
    if path is None:
        raise StepNotFound(f"module {module} has no Python source")
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _dump(node: ast.AST) -> str:
    import copy

    return ast.dump(_strip_docstrings(copy.deepcopy(node)), include_attributes=False)


@cache
def _module_digest(module: str) -> str:
    path = _source_path(module)
    tree = _strip_docstrings(ast.parse(path.read_text(encoding="utf-8")))  # a fresh tree: stripping edits it
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def _top_level(tree: ast.Module) -> dict[str, ast.AST]:
    defs: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        defs[n.id] = node
    return defs


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _resolve(level: int, name: str | None, current: str) -> str:
    """The absolute module of ``from <level dots><name> import …`` inside module ``current``."""
    if not level:
        return name or ""
    path = _source_path(current)
    package = current if path is not None and path.name == "__init__.py" else current.rpartition(".")[0]
    return importlib.util.resolve_name("." * level + (name or ""), package)


def _imported_modules(node: ast.AST, current: str) -> set[str]:
    """The modules an import statement loads (``from a import b`` loads ``a.b`` when that is a module)."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        out.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(node.level, node.module, current)
        out.add(base)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if _is_ours(sub) and _source_path(sub):
                out.add(sub)
    return out


def _import_map(tree: ast.Module, current: str) -> dict[str, str]:
    """Module-level names bound by imports → the module they come from."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.level, node.module, current)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out[alias.asname or alias.name] = sub if _is_ours(sub) and _source_path(sub) else base
    return out


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


@cache
def _module_closure(start: frozenset[str]) -> frozenset[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        mod = todo.pop()
        if mod in seen or not _is_ours(mod) or _source_path(mod) is None:
            continue
        seen.add(mod)
        todo.extend(_parents(mod))
        for node in ast.walk(_tree(mod)):
            todo.extend(m for m in _imported_modules(node, mod) if _is_ours(m))
    return frozenset(seen)
