"""Typed, frozen step options built from the validated config.

Every default lives in the config schema (workflow/schemas/config.schema.yaml). A step's options are a
frozen dataclass derived from :class:`Options` whose fields have **no defaults**: the rule hands the
validated config section over, and :meth:`Options.from_mapping` builds the object, raising
:class:`OptionsError` that names every missing or unknown key. So a parameter has one default, in the
schema, and a typo or a forgotten key stops the run at once instead of silently taking a fallback.

Field types drive a light conversion of the JSON-like values: nested ``Options`` are built from
mappings, sequences become tuples (mappings stay dicts), ints are accepted for floats,
and ``X | None`` accepts ``None``. Anything else must already have the right type (the schema has
checked it); a mismatch is an error naming the key.
"""

from __future__ import annotations

import collections.abc
import contextlib
import dataclasses
import importlib.abc
import sys
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T", bound="Options")


class OptionsError(ValueError):
    """A step's options are missing keys, have unknown keys, or a value of the wrong type."""


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of every step's options (subclasses are ``@dataclass(frozen=True)`` without defaults)."""

    @classmethod
    def from_mapping(cls: type[T], data: Mapping[str, Any] | T, where: str = "") -> T:
        """Build from a mapping; every field must be present and no other key may be, and the class's
        cross-field checks (:meth:`_check`) must pass."""
        if isinstance(data, cls):
            return data
        where = where or cls.__name__
        if not isinstance(data, Mapping):
            raise OptionsError(f"{where}: expected a mapping of options, got {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        missing = sorted(k for k in fields if k not in data)
        unknown = sorted(str(k) for k in data if k not in fields)
        problems = []
        if missing:
            problems.append("missing " + ", ".join(f"{where}.{k}" for k in missing))
        if unknown:
            problems.append("unknown " + ", ".join(f"{where}.{k}" for k in unknown))
        if problems:
            raise OptionsError(f"{cls.__name__}: " + "; ".join(problems))
        hints = _hints(cls)
        values = {name: _convert(data[name], hints[name], f"{where}.{name}") for name in fields}
        built = cls(**values)
        built._check(where)
        return built

    def _check(self, where: str) -> None:
        """Checks no single field can make (one field required by another's value, a range): raise
        :class:`OptionsError` naming the dotted key under ``where``. :meth:`from_mapping` runs them on
        every options object it builds, nested ones first; none by default."""

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (tuples as lists), e.g. for an info file."""
        return _plain(self)

    def replace(self: T, **changes: Any) -> T:
        return dataclasses.replace(self, **changes)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(value: Any, hint: Any, where: str) -> Any:
    if hint is Any:
        return _freeze(value)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            if type(None) in args:
                return None
            raise OptionsError(f"{where}: null is not allowed")
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(value, arg, where)
            except OptionsError as exc:
                errors.append(str(exc))
        if len(errors) == 1:
            raise OptionsError(errors[0])
        raise OptionsError(f"{where} matches none of its types: " + " | ".join(errors))
    if origin is typing.Literal:
        if value not in args:
            raise OptionsError(f"{where}: {value!r} is not one of {list(args)}")
        return value
    if isinstance(hint, type) and issubclass(hint, Options):
        return hint.from_mapping(value, where)
    if origin in (tuple, list, typing.Sequence, collections.abc.Sequence) or hint in (tuple, list):
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
            raise OptionsError(f"{where}: expected a list, got {value!r}")
        item = args[0] if args else Any
        return tuple(_convert(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (dict, typing.Mapping, collections.abc.Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise OptionsError(f"{where}: expected a mapping, got {value!r}")
        vt = args[1] if len(args) == 2 else Any
        return {k: _convert(v, vt, f"{where}.{k}") for k, v in value.items()}
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise OptionsError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionsError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint in (str, bool):
        if not isinstance(value, hint):
            raise OptionsError(f"{where}: expected {hint.__name__}, got {value!r}")
        return value
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _freeze(v) for k, v in value.items()}
    return value


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclasses.dataclass(frozen=True)
class NoOptions(Options):
    """The options of a step that has none (its rule passes ``options={}``)."""


@dataclasses.dataclass(frozen=True)
class Runtime:
    """What the executor decides for one job, not the config: the cores granted and the log file.
    ``medfc run`` passes it to a step that takes a ``runtime`` argument."""

    threads: int
    log_file: str | None


def set_torch_threads(threads: int) -> None:
    """Let torch compute on the ``threads`` cores a job was granted (at least one). Loads nothing: with torch
    already imported the count is set now, else the moment the job imports torch (a job that never uses
    torch never pays for importing it)."""
    n = max(1, threads)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(n)
        return
    _TorchThreadsOnImport.arm(n)


class _TorchThreadsOnImport(importlib.abc.MetaPathFinder):
    """An import hook that sets torch's thread count right after ``import torch`` has run, then leaves."""

    threads = 1
    _busy = False

    @classmethod
    def arm(cls, threads: int) -> None:
        cls.threads = threads
        if not any(isinstance(f, cls) for f in sys.meta_path):
            sys.meta_path.insert(0, cls())

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 (the finder protocol)
        if name != "torch" or type(self)._busy:
            return None
        type(self)._busy = True
        try:
            spec = next((s for f in sys.meta_path if f is not self and hasattr(f, "find_spec")
                         for s in [f.find_spec(name, path, target)] if s is not None), None)
        finally:
            type(self)._busy = False
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _ThenSetThreads(spec.loader, self)
        return spec


class _ThenSetThreads(importlib.abc.Loader):
    def __init__(self, loader: Any, finder: _TorchThreadsOnImport):
        self._loader, self._finder = loader, finder

    def __getattr__(self, name: str) -> Any:  # resources, get_filename, ...: the real loader's
        return getattr(self._loader, name)

    def create_module(self, spec):  # noqa: ANN001
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:  # noqa: ANN001
        self._loader.exec_module(module)
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self._finder)
        module.set_num_threads(type(self._finder).threads)
