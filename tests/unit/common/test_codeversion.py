"""The code version in each rule's params follows exactly the library code its step can run."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

import medfc
from medfc.common import codeversion as cv
from medfc.plan import TABLES

REPO = Path(__file__).resolve().parents[3]

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
    """Forget everything computed in this process (the disk entries stay)."""
    cv._trees.clear()
    for fn in (cv.step_version, cv._package_root, cv._package_fingerprint, cv._source_path, cv._source, cv._defs,
               cv._def_dump, cv._def_uses, cv._import_map, cv._module_info, cv._module_edges, cv._module_closure):
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


@pytest.fixture(params=["memory", "disk"])
def pkg(request, tmp_path, monkeypatch) -> Path:
    """A private copy of the medfc sources that the versions are computed from; the versions are kept in
    memory only, or on disk too (then every computation after the first reads what the first wrote)."""
    root = tmp_path / "medfc"
    shutil.copytree(Path(medfc.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cv, "_package_root", lambda: root)
    cv.use_disk_cache(tmp_path / "versions" if request.param == "disk" else None)
    _clear()
    yield root
    cv.use_disk_cache(None)
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


def test_a_parser_fix_reruns_the_crawl_parse_only_never_a_release_mode_run(pkg):
    """The release reader shares only the title suffix with the page parser (medfc.healthfc.portal): a fix
    for a variant of the real pages must not retrain every release-mode run (release, dataset, folds)."""
    steps = rule_steps()
    _clear()
    before = {s: cv.step_version(s) for s in steps}
    parse = pkg / "healthfc" / "parse.py"
    parse.write_text(parse.read_text() + "\n\nPARSER_FIX = 1\n")
    _clear()
    assert {s for s in steps if cv.step_version(s) != before[s]} == {"healthfc.steps:parse"}


# ---------------------------------------------------------------------------- the same versions as an uncached reference

def rule_steps() -> list[str]:
    """Every step a rule of the workflow names (``versioned("...")`` in workflow/rules; the table rule's for
    every table)."""
    specs: set[str] = set()
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for spec in re.findall(r'versioned\(f?"([^"]+)"[,)]', smk.read_text(encoding="utf-8")):
            specs.update(spec.replace("{w.table}", t) for t in TABLES) if "{w.table}" in spec else specs.add(spec)
    return sorted(specs)


class Reference:
    """The versions computed without a cache by content: every module read from its file, each closure walking every
    module's syntax tree again. What depends on one module alone (its tree, its hash, the modules its statements
    import) is memoized, which changes no result, only the time."""

    def __init__(self, root: Path):
        self.root, self.trees, self.digests, self.edges = root, {}, {}, {}

    def source_path(self, module):
        if not cv._is_ours(module):
            return None
        parts = module.split(".")[1:]
        if not parts:
            return self.root / "__init__.py"
        for path in (self.root.joinpath(*parts[:-1], parts[-1] + ".py"), self.root.joinpath(*parts, "__init__.py")):
            if path.is_file():
                return path
        return None

    def tree(self, module):
        if module not in self.trees:
            path = self.source_path(module)
            self.trees[module] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        return self.trees[module]

    @staticmethod
    def strip(tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
        return tree

    def dump(self, node):
        import copy

        return ast.dump(self.strip(copy.deepcopy(node)), include_attributes=False)

    def module_digest(self, module):
        if module not in self.digests:
            tree = self.strip(ast.parse(self.source_path(module).read_text(encoding="utf-8")))
            self.digests[module] = hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()
        return self.digests[module]

    @staticmethod
    def top_level(tree):
        defs = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defs[node.name] = node
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            defs[n.id] = node
        return defs

    def resolve(self, level, name, current):
        if not level:
            return name or ""
        path = self.source_path(current)
        package = current if path is not None and path.name == "__init__.py" else current.rpartition(".")[0]
        return importlib.util.resolve_name("." * level + (name or ""), package)

    def imported_modules(self, node, current):
        out = set()
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = self.resolve(node.level, node.module, current)
            out.add(base)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if cv._is_ours(sub) and self.source_path(sub):
                    out.add(sub)
        return out

    def import_map(self, tree, current):
        out = {}
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    out[alias.asname or alias.name.split(".")[0]] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = self.resolve(node.level, node.module, current)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    out[alias.asname or alias.name] = sub if cv._is_ours(sub) and self.source_path(sub) else base
        return out

    def closure(self, start):
        seen, todo = set(), list(start)
        while todo:
            mod = todo.pop()
            if mod in seen or not cv._is_ours(mod) or self.source_path(mod) is None:
                continue
            seen.add(mod)
            parts = mod.split(".")
            todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
            if mod not in self.edges:
                self.edges[mod] = [m for node in ast.walk(self.tree(mod)) for m in self.imported_modules(node, mod) if cv._is_ours(m)]
            todo.extend(self.edges[mod])
        return seen

    def version(self, spec):
        module, func = cv.split_spec(spec)
        tree = self.tree(module)
        defs = self.top_level(tree)
        imports = self.import_map(tree, module)
        local, modules, todo = set(), set(), [func]
        while todo:
            name = todo.pop()
            if name in local:
                continue
            local.add(name)
            for used in {n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)}:
                if used in defs and used not in local:
                    todo.append(used)
                elif used in imports:
                    modules.add(imports[used])
            for node in ast.walk(defs[name]):
                modules.update(self.imported_modules(node, module))
        closure = self.closure(frozenset(m for m in modules if cv._is_ours(m)))
        digest = hashlib.sha256()
        digest.update(module.encode())
        for name in sorted(local):
            digest.update(name.encode() + b"\0" + self.dump(defs[name]).encode())
        for mod in sorted(closure - {module}):
            digest.update(mod.encode() + b"\0" + self.module_digest(mod).encode())
        return digest.hexdigest()[:12]


def test_every_rules_step_has_the_version_the_uncached_reference_gives(tmp_path, monkeypatch):
    """For every step of the workflow's rules: the cached computation (in memory; on disk, computed and then
    read back) gives exactly the version of :class:`Reference`, on the sources as they are and after an edit of
    a module deep in the imports."""
    root = tmp_path / "medfc"
    shutil.copytree(Path(medfc.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cv, "_package_root", lambda: root)
    specs = rule_steps()
    assert len(specs) >= 30 and "tables.steps:healthfc_table3" in specs and "experiments.steps:healthfc_experiment" in specs
    try:
        reference = Reference(root)
        expected = {s: reference.version(s) for s in specs}
        for store in (None, tmp_path / "versions", tmp_path / "versions"):  # memory; disk written; disk read
            cv.use_disk_cache(store)
            _clear()
            assert {s: cv.step_version(s) for s in specs} == expected, store
        # after an edit deep in the imports: the disk cache's mix of stored and new entries, as computed afresh
        labels = root / "common" / "labels.py"
        labels.write_text(labels.read_text() + "\n\nEDITED = 1\n")
        _clear()
        edited = {s: cv.step_version(s) for s in specs}
        assert edited["scoring.steps:healthfc"] != expected["scoring.steps:healthfc"]  # it scores labels
        cv.use_disk_cache(None)
        _clear()
        assert {s: cv.step_version(s) for s in specs} == edited
    finally:
        cv.use_disk_cache(None)
        _clear()


EDGE_CASES = '''
"""A module docstring."""
import os, medfc.common as common
from . import sibling
from ..pkg.mod import a as b, c


def only_a_docstring():
    """Nothing else."""


class C:
    """A class docstring."""
    x: int = 1

    async def m(self, *args, k=None, **kw):
        """Method."""
        "a second string stays"
        from medfc import labels
        return {**kw, "k": k}, [i async for i in args if i], f"{k!r:>{x}}", ..., b"x", 1j, -1.5, None, True


match os.name:
    case {"a": 1, **rest} | [1, *_] | C(x=None) if rest:
        pass
    case None:
        pass
'''


def test_the_hashed_text_is_ast_dump_of_the_tree_without_docstrings():
    """The text of a syntax tree (:func:`medfc.common.codeversion._dump`) is exactly ``ast.dump`` of
    the tree with its docstrings removed, for every module of the package and a module of edge cases; it
    reports every import statement and leaves the tree as it was."""
    sources = [(str(p), p.read_text(encoding="utf-8")) for p in sorted(Path(medfc.__file__).parent.rglob("*.py"))]
    for name, text in [*sources, ("<edge cases>", EDGE_CASES)]:
        tree = ast.parse(text)
        holders = [(n, len(n.body)) for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
        imports: list[ast.AST] = []
        assert cv._dump(tree, imports.append) == ast.dump(Reference.strip(ast.parse(text)), include_attributes=False), name
        assert sorted(map(id, imports)) == sorted(id(n) for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)), name
        assert [len(n.body) for n, _ in holders] == [k for _, k in holders], name  # no docstring taken out
    if sys.version_info < (3, 13):
        assert cv._dump(ast.parse('"""Only a docstring."""')) == "Module(body=[Pass()], type_ignores=[])"


def test_garbage_collection_is_back_as_it_was_after_a_version(pkg):
    import gc

    assert gc.isenabled()
    cv.step_version("clinifact.steps:build_pairs")
    assert gc.isenabled()
    gc.disable()
    try:
        _clear()
        cv.step_version("clinifact.steps:build_pairs")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_disk_cache_is_read_by_content_and_a_damaged_entry_is_a_miss(tmp_path, monkeypatch):
    root = tmp_path / "medfc"
    shutil.copytree(Path(medfc.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cv, "_package_root", lambda: root)
    store = tmp_path / "versions"
    cv.use_disk_cache(store)
    try:
        _clear()
        before = {s: cv.step_version(s) for s in STEPS}
        entries = sorted(store.glob("*.json"))
        assert {p.name[:2] for p in entries} == {"m-", "s-"} and not list(store.glob("*.tmp"))

        parsed = []
        real_parse = ast.parse
        monkeypatch.setattr(cv.ast, "parse", lambda *a, **k: parsed.append(a) or real_parse(*a, **k))
        _clear()
        assert {s: cv.step_version(s) for s in STEPS} == before and parsed == []  # unchanged sources: nothing parsed

        # an edited module: it and the steps modules are parsed again, the other modules come from the cache
        pairs = root / "clinifact" / "pairs.py"
        pairs.write_text(pairs.read_text() + "\n\nSPLIT_NAMES = ('train',)\n")
        _clear()
        after = {s: cv.step_version(s) for s in STEPS}
        assert {s for s in STEPS if after[s] != before[s]} == {"clinifact.steps:build_pairs", "clinifact.steps:import_release",
                                                               "clinifact.steps:clinifact_stats"}
        assert 2 <= len(parsed) <= 4, len(parsed)  # pairs.py, clinifact/steps.py (and healthfc/steps.py), never the rest

        # damaged entries (cut short, not JSON, another key, wrong types): misses, computed again and rewritten
        for i, path in enumerate(sorted(store.glob("*.json"))):
            text = path.read_text()
            path.write_text([text[: len(text) // 2], "", json.dumps({"key": "x"}), text.replace('"digest":"', '"digest":"zz')][i % 4])
        (store / ".m-leftover.tmp").write_text("{")  # a writer killed before its rename
        _clear()
        assert {s: cv.step_version(s) for s in STEPS} == after
        _clear()
        parsed.clear()
        assert {s: cv.step_version(s) for s in STEPS} == after and parsed == []  # every damaged entry was written again
    finally:
        cv.use_disk_cache(None)
        _clear()


_WORKER = """
import json, sys
from pathlib import Path
from medfc.common import codeversion as cv
cv._package_root = lambda: Path(sys.argv[1])
cv.use_disk_cache(sys.argv[2])
print(json.dumps({s: cv.step_version(s) for s in json.loads(sys.argv[3])}))
"""


def test_processes_writing_the_disk_cache_at_once_agree(tmp_path):
    """Four processes compute the versions into one empty cache at the same time: every one gets the versions
    computed without a cache, and every entry left behind is whole (a reader finds each)."""
    import os
    import subprocess
    import sys

    root = tmp_path / "medfc"
    shutil.copytree(Path(medfc.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    store = tmp_path / "versions"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(root), str(store), json.dumps(STEPS)], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(4)]
    outs = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
    expected = json.loads(subprocess.run([sys.executable, "-c", _WORKER, str(root), str(tmp_path / "other"), json.dumps(STEPS)],
                                         capture_output=True, text=True, env=env, check=True).stdout)
    assert outs == [expected] * 4
    assert not list(store.glob("*.tmp")) and all(json.loads(p.read_text())["key"] for p in store.glob("*.json"))


def test_the_workflow_keeps_versions_in_the_users_cache_folder_unless_told(tmp_path, monkeypatch):
    monkeypatch.delenv(cv.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cv.user_cache_dir() == tmp_path / "xdg" / "medfc" / "codeversion"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cv.user_cache_dir() == tmp_path / "home" / ".cache" / "medfc" / "codeversion"
    monkeypatch.setenv(cv.CACHE_ENV, str(tmp_path / "own"))
    assert cv.user_cache_dir() == tmp_path / "own"


def test_a_second_checkout_of_the_same_sources_reads_the_first_ones_versions(tmp_path, monkeypatch):
    """The entries name no path outside the package: another clone at another path parses nothing."""
    store = tmp_path / "versions"
    first, second = tmp_path / "clone1" / "medfc", tmp_path / "clone2" / "src" / "medfc"
    for root in (first, second):
        shutil.copytree(Path(medfc.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    try:
        cv.use_disk_cache(store)
        monkeypatch.setattr(cv, "_package_root", lambda: first)
        _clear()
        versions = {s: cv.step_version(s) for s in STEPS}
        monkeypatch.setattr(cv, "_package_root", lambda: second)
        monkeypatch.setattr(cv, "_parse", lambda module: pytest.fail(f"{module} parsed again"))
        _clear()
        assert {s: cv.step_version(s) for s in STEPS} == versions
    finally:
        cv.use_disk_cache(None)
        _clear()
