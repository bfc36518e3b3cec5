"""The tiny random models of the tests, built once and then copied: a cache keyed by the builder's source.

Each builder of tests/helpers/tiny_models.py and experiment_data.py is wrapped by :func:`cached_builder`.
The first call with given arguments builds the model into ``.cache/medfc-tests/tiny-models/<key>/``
(git-ignored; ``$MEDFC_TEST_CACHE`` moves it), every later call, in this session or the next, copies that
directory to the requested place. The key is a hash of the builder module's whole source (so an edit of any
builder or helper there rebuilds), the builder's name, its arguments other than the destination, the
Python version and the versions of the libraries that write the files (torch, transformers, tokenizers,
sentencepiece, safetensors). A model is built in a temporary directory beside the cache entry and renamed
into place whole, so two test processes (pytest-xdist workers) building the same model at once, or a test
run killed mid-build, never leave a partial entry: an entry without its completion marker is built again.
CI's fresh clone builds each model once per run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import inspect
import os
import secrets
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
LIBRARIES = ("torch", "transformers", "tokenizers", "sentencepiece", "safetensors")
DONE = ".medfc-built"  # the completion marker inside an entry

F = TypeVar("F", bound=Callable[..., Path])


def tests_cache() -> Path:
    """The tests' caches: ``.cache/medfc-tests`` in the checkout, or ``$MEDFC_TEST_CACHE``."""
    return Path(os.environ.get("MEDFC_TEST_CACHE") or REPO / ".cache" / "medfc-tests")


def cache_root() -> Path:
    return tests_cache() / "tiny-models"


def _versions() -> str:
    out = [f"python {sys.version_info[0]}.{sys.version_info[1]}"]
    for name in LIBRARIES:
        try:
            out.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name} -")
    return "; ".join(out)


@functools.cache
def _module_source_hash(module: str) -> str:
    return hashlib.sha256(inspect.getsource(sys.modules[module]).encode()).hexdigest()


def cache_key(fn: Callable[..., Any], args: tuple, kwargs: dict) -> str:
    text = "\0".join([_module_source_hash(fn.__module__), fn.__qualname__, repr(args), repr(sorted(kwargs.items())), _versions()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached_builder(fn: F) -> F:
    """``fn(out_dir, *args, **kwargs) -> out_dir`` built once per key, then copied to ``out_dir``."""

    @functools.wraps(fn)
    def build(out_dir: str | os.PathLike, *args: Any, **kwargs: Any) -> Path:
        out = Path(out_dir)
        if (out / "config.json").exists():  # the builders are idempotent per directory
            return fn(out, *args, **kwargs)
        entry = cache_root() / cache_key(fn, args, kwargs)
        if not (entry / DONE).is_file():
            _build_entry(fn, entry, args, kwargs)
        shutil.copytree(entry / "model", out, dirs_exist_ok=True)
        return out

    build.uncached = fn  # type: ignore[attr-defined]
    return build  # type: ignore[return-value]


def _build_entry(fn: Callable[..., Any], entry: Path, args: tuple, kwargs: dict) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.parent / f".{entry.name}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        built = Path(fn(tmp / "model", *args, **kwargs))
        assert built == tmp / "model", f"{fn.__qualname__} returned {built}, not the directory it was given"
        (tmp / DONE).write_text(f"{fn.__module__}.{fn.__qualname__}\n")
        if entry.exists() and not (entry / DONE).is_file():
            shutil.rmtree(entry, ignore_errors=True)  # an entry without its marker: damaged, built again
        try:
            os.rename(tmp, entry)
        except OSError:
            if not (entry / DONE).is_file():  # not another process's complete entry: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
