"""The version of the library code a workflow step runs, for Snakemake's params trigger: a hash of the syntax trees
(without docstrings) of the step function, the definitions it reaches by name, and every ``medfc`` module those
import, transitively. With :func:`use_disk_cache` each module's hash and each step's version are kept on disk."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

from medfc.common.collector import gc_paused
from medfc.common.io import atomic_write

PACKAGE = "medfc"
CACHE_ENV = "MEDFC_CODEVERSION_CACHE"
CACHE_FORMAT = 1  # bump when what an entry holds or how it is computed changes
_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"  # in every cache key: each Python dumps a tree its own way


class StepNotFound(ValueError):
    pass


def versioned(spec: str, *runs: str) -> str:
    """``"healthfc.steps:crawl"`` → ``"healthfc.steps:crawl@1a2b3c4d5e6f"``. ``runs``: functions the step finds
    by name and calls (``"package.module:function"``), versioned after the step's: ``"...@<step>+<run>"``; one
    outside ``medfc`` is versioned by its module's whole source (its imports not followed)."""
    return f"{spec}@{'+'.join([step_version(spec), *map(_run_version, runs)])}"


def _run_version(spec: str) -> str:
    module = spec.split(":", 1)[0]
    if _is_ours(module):
        return step_version(spec)
    found = importlib.util.find_spec(module)
    origin = found.origin if found is not None else None
    if origin is None or not origin.endswith(".py"):
        raise StepNotFound(f"{spec}: module {module} has no Python source to version")
    return hashlib.sha256(Path(origin).read_bytes()).hexdigest()[:12]


def split_spec(spec: str) -> tuple[str, str]:
    """``"healthfc.steps:crawl[@version]"`` → (``"medfc.healthfc.steps"``, ``"crawl"``)."""
    spec = spec.split("@", 1)[0]
    if ":" not in spec:
        raise StepNotFound(f"step {spec!r} must look like 'module:function', e.g. 'healthfc.steps:crawl'")
    module, func = spec.split(":", 1)
    return (module if _is_ours(module) else f"{PACKAGE}.{module}"), func


# --------------------------------------------------------------------------- caches

_disk: Path | None = None
_trees: dict[str, ast.Module] = {}  # the steps modules' syntax trees (as parsed, docstrings in), by module


def user_cache_dir() -> Path:
    """``$MEDFC_CODEVERSION_CACHE``, else the user's cache folder."""
    if own := os.environ.get(CACHE_ENV, "").strip():
        return Path(own)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, PACKAGE, "codeversion")


def use_disk_cache(directory: str | os.PathLike[str] | None) -> None:
    """Keep cache entries in ``directory`` (created when first written); ``None``: in memory only."""
    global _disk
    _disk = Path(directory) if directory is not None else None


@cache
def step_version(spec: str) -> str:
    """One step's version: from the disk cache when the package's sources are unchanged, else computed."""
    with gc_paused():
        key = hashlib.sha256(f"{_package_fingerprint()}\0{spec}".encode()).hexdigest() if _disk is not None else None
        if key is not None:
            entry = _read_json(f"s-{key}", key)
            version = entry.get("version") if entry else None
            if isinstance(version, str) and len(version) == 12 and all(c in "0123456789abcdef" for c in version):
                return version
        version = _compute_step_version(spec)
        if key is not None:
            _write_json(f"s-{key}", {"key": key, "version": version})
        return version


def _compute_step_version(spec: str) -> str:
    module, func = split_spec(spec)
    defs = _defs(module)
    if func not in defs:
        raise StepNotFound(f"step {spec!r}: module {module} has no top-level function {func!r}")
    imports = _import_map(module)
    local: set[str] = set()
    modules: set[str] = set()
    todo = [func]
    while todo:
        name = todo.pop()
        if name in local:
            continue
        local.add(name)
        names, nested = _def_uses(module, name)
        for used in names:
            if used in defs and used not in local:
                todo.append(used)
            elif used in imports:
                modules.add(imports[used])
        modules.update(nested)
    closure = _module_closure(frozenset(m for m in modules if _is_ours(m)))
    digest = hashlib.sha256(module.encode())
    for name in sorted(local):
        digest.update(name.encode() + b"\0" + _def_dump(module, name).encode())
    for mod in sorted(closure - {module}):
        digest.update(mod.encode() + b"\0" + _module_info(mod)[0].encode())
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
    """The source file of one of our modules, found without importing it."""
    if not _is_ours(module):
        return None
    parts = module.split(".")[1:]
    if not parts:
        return _package_root() / "__init__.py"
    root = _package_root()
    candidates = (root.joinpath(*parts[:-1], parts[-1] + ".py"), root.joinpath(*parts, "__init__.py"))
    return next((path for path in candidates if path.is_file()), None)


@cache
def _source(module: str) -> bytes:
    path = _source_path(module)
    if path is None:
        raise StepNotFound(f"module {module} has no Python source")
    return path.read_bytes()


def _parse(module: str) -> ast.Module:
    """The module's syntax tree, docstrings in."""
    return ast.parse(_source(module), filename=str(_source_path(module)))


def _tree(module: str) -> ast.Module:
    """A steps module's syntax tree, parsed once and kept."""
    if module not in _trees:
        _trees[module] = _parse(module)
    return _trees[module]


@cache
def _defs(module: str) -> dict[str, ast.AST]:
    """A steps module's top-level definitions by name (functions, classes, assigned names)."""
    defs: dict[str, ast.AST] = {}
    for node in _tree(module).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defs.update({n.id: node for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)})
    return defs


@cache
def _def_dump(module: str, name: str) -> str:
    """The text of one top-level definition, without docstrings and line numbers."""
    return _dump(_defs(module)[name])


@cache
def _def_uses(module: str, name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the names one top-level definition uses, the modules its own import statements load)."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(_defs(module)[name]):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules.update(_loaded(_statements(node, module)))
    return frozenset(names), frozenset(modules)


# --------------------------------------------------------------------------- the text of a syntax tree

_DOCSTRING_HOLDERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(node: object) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _dump(tree: ast.AST, on_import: Callable[[ast.Import | ast.ImportFrom], None] | None = None) -> str:
    """``ast.dump(tree, include_attributes=False)`` with every docstring removed (a body of only one:
    ``[Pass()]``), calling ``on_import`` with every import statement; the tree is left as it was."""
    taken: list[tuple[ast.AST, list[ast.stmt]]] = []
    try:
        for n in ast.walk(tree):
            if isinstance(n, ast.Import | ast.ImportFrom) and on_import is not None:
                on_import(n)
            elif isinstance(n, _DOCSTRING_HOLDERS) and n.body and _is_docstring(n.body[0]):
                taken.append((n, n.body))
                n.body = n.body[1:] or [ast.Pass()]
        return ast.dump(tree, include_attributes=False)
    finally:
        for n, body in taken:
            n.body = body  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- one module, once per content

# A module's import statements as the closure needs them, independent of which files exist:
# ["import", name] for ``import name``; ["from", base, [alias, ...]] for ``from base import alias, ...``
# (base resolved against the module's package). Which ``base.alias`` are modules is decided at use.
ImportStatements = list[list]


@cache
def _module_info(module: str) -> tuple[str, ImportStatements]:
    """(hash of the module's tree without docstrings, its import statements), cached on disk by content."""
    path = _source_path(module)
    if path is None:
        raise StepNotFound(f"module {module} has no Python source")
    h = hashlib.sha256(f"{CACHE_FORMAT}\0{_PYTHON}\0{module}\0{int(path.name == '__init__.py')}\0".encode())
    h.update(_source(module))
    key = h.hexdigest()
    entry = _read_json(f"m-{key}", key) or {}  # else absent or damaged: computed again
    if isinstance(entry.get("digest"), str) and len(entry["digest"]) == 64 and isinstance(entry.get("imports"), list):
        return entry["digest"], entry["imports"]
    statements: ImportStatements = []
    tree = _trees.get(module) or _parse(module)  # a steps module is parsed once for both
    digest = hashlib.sha256(_dump(tree, lambda node: statements.extend(_statements(node, module))).encode()).hexdigest()
    _write_json(f"m-{key}", {"key": key, "digest": digest, "imports": statements})
    return digest, statements


@cache
def _package_fingerprint() -> str:
    """A hash of every ``.py`` file under the package (path and bytes)."""
    root = _package_root()
    h = hashlib.sha256(f"{CACHE_FORMAT}\0{_PYTHON}\0".encode())
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(f for f in filenames if f.endswith(".py")):
            path = Path(dirpath, name)
            try:
                data = path.read_bytes()
            except OSError:
                continue  # not a readable file: not a module either
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def _read_json(name: str, key: str) -> dict | None:
    """A cache entry, or None when absent or damaged."""
    if _disk is None:
        return None
    try:
        entry = json.loads((_disk / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and entry.get("key") == key else None


def _write_json(name: str, entry: dict) -> None:
    """Written whole or not at all; a cache that cannot be written is only slower."""
    if _disk is not None:
        with contextlib.suppress(OSError):
            atomic_write(_disk / f"{name}.json", json.dumps(entry, separators=(",", ":")))


@cache
def _module_edges(module: str) -> frozenset[str]:
    """Our modules that ``module``'s import statements (anywhere in it) load."""
    return frozenset(m for m in _loaded(_module_info(module)[1]) if _is_ours(m))


# --------------------------------------------------------------------------- names and imports

def _resolve(level: int, name: str | None, current: str) -> str:
    """The absolute module of ``from <level dots><name> import …`` inside ``current``."""
    if not level:
        return name or ""
    path = _source_path(current)
    package = current if path is not None and path.name == "__init__.py" else current.rpartition(".")[0]
    return importlib.util.resolve_name("." * level + (name or ""), package)


def _statements(node: ast.Import | ast.ImportFrom, current: str) -> ImportStatements:
    """One import statement as :data:`ImportStatements`."""
    if isinstance(node, ast.Import):
        return [["import", alias.name] for alias in node.names]
    return [["from", _resolve(node.level, node.module, current), [alias.name for alias in node.names]]]


def _loaded(statements: ImportStatements) -> set[str]:
    """The modules import statements load (``from a import b`` loads ``a.b`` when that is one of our modules)."""
    out: set[str] = set()
    for s in statements:
        out.add(s[1])
        if s[0] == "from":
            out.update(sub for alias in s[2] if _is_ours(sub := f"{s[1]}.{alias}") and _source_path(sub))
    return out


@cache
def _import_map(current: str) -> dict[str, str]:
    """Module-level names bound by imports in a steps module → the module they come from."""
    out: dict[str, str] = {}
    for node in _tree(current).body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.level, node.module, current)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out[alias.asname or alias.name] = sub if _is_ours(sub) and _source_path(sub) else base
    return out


@cache
def _module_closure(start: frozenset[str]) -> frozenset[str]:
    """Our modules reachable from ``start`` through imports, with the packages on the way."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        mod = todo.pop()
        if mod in seen or not _is_ours(mod) or _source_path(mod) is None:
            continue
        seen.add(mod)
        parts = mod.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # the packages on the way
        todo.extend(_module_edges(mod))
    return frozenset(seen)
