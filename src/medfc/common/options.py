"""Typed, frozen step options built from the validated config (every default lives in the config schema).

:meth:`Options.from_mapping` names every missing or unknown key, so a typo stops the run instead of taking a
fallback. Field types drive a light conversion (nested options from mappings, sequences to tuples, ints for
floats); a field holding one of several options classes is a tagged union, ``Annotated[A | B, Tagged(key)]``."""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T", bound="Options")


class OptionsError(ValueError):
    """A step's options are missing keys, have unknown keys, or a value of the wrong type."""


@dataclasses.dataclass(frozen=True)
class Tagged:
    """The tag of a union of :class:`Options` classes: ``Annotated[A | B, Tagged("kind")]``. Without ``choose``
    the tag is ``value[key]``, matched against each member's class variable ``key``; with ``choose`` it is the
    enclosing options' field ``key`` and ``choose(tag)`` gives the class. ``members()``: read from a registry."""

    key: str
    choose: Any = None  # Callable[[tag], type[Options]] for a tag held by the enclosing options
    members: Any = None  # Callable[[], tuple[type[Options], ...]], else the annotation's members


@dataclasses.dataclass(frozen=True)
class OneOf:
    """The allowed values of an ``Annotated[Literal[...], OneOf(names)]`` field, read from ``names()`` each time
    (the ``Literal`` is for type checkers). A value outside them: ``'x' is not one of [...]``."""

    names: Any  # Callable[[], Iterable[str]]


def tag_of(cls: type, key: str) -> Any:
    """The tag ``cls`` declares as its class variable ``key`` (None if none)."""
    return _class_tags(cls).get(key)


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of every step's options (subclasses are ``@dataclass(frozen=True)`` without defaults)."""

    @classmethod
    def from_mapping(cls: type[T], data: Mapping[str, Any] | T, where: str = "") -> T:
        """Build from a mapping with exactly the fields as keys, then run :meth:`_check`."""
        if isinstance(data, cls):
            return data
        where = where or cls.__name__
        if not isinstance(data, Mapping):
            raise OptionsError(f"{where}: expected a mapping of options, got {type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        data = _without_own_tags(cls, data, where)
        missing = sorted(k for k in fields if k not in data)
        unknown = sorted(str(k) for k in data if k not in fields)
        problems = [f"{kind} " + ", ".join(f"{where}.{k}" for k in keys)
                    for kind, keys in (("missing", missing), ("unknown", unknown)) if keys]
        if problems:
            raise OptionsError(f"{cls.__name__}: " + "; ".join(problems))
        hints = _hints(cls)
        chosen = {n: t for n in fields if (t := _tagged(hints[n])) is not None and t.choose is not None}
        values = {name: _convert(data[name], hints[name], f"{where}.{name}") for name in fields if name not in chosen}
        for name, tagged in chosen.items():  # after the fields that choose their class (``tagged.key``)
            if data[name] is None:
                raise OptionsError(f"{where}.{name}: null is not allowed")
            values[name] = tagged.choose(values[tagged.key]).from_mapping(data[name], f"{where}.{name}")
        built = cls(**values)
        built._check(where)
        return built

    def _check(self, where: str) -> None:
        """Cross-field checks (run by :meth:`from_mapping`, nested objects first): raise :class:`OptionsError`
        naming the dotted key under ``where``. None by default."""

    def as_dict(self) -> dict[str, Any]:
        """The fields as plain JSON-able values (tuples as lists), without union tags (:meth:`to_mapping` has them)."""
        return _plain(self)

    def to_mapping(self, *, sort_keys: bool = False) -> dict[str, Any]:
        """What :meth:`from_mapping` builds this object from again (:meth:`as_dict` with the tags of tagged-union
        values first). ``sort_keys``: every options object's keys sorted (a job's params: Snakemake compares their
        text between runs); a mapping-valued field keeps its own order."""
        return _plain(self, sort_keys, tags=True)

    def replace(self: T, **changes: Any) -> T:
        return dataclasses.replace(self, **changes)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


@cache
def _class_tags(cls: type) -> dict[str, Any]:
    """The class variables an options class declares: its tags."""
    return {name: getattr(cls, name) for name, hint in _hints(cls).items() if typing.get_origin(hint) is typing.ClassVar}


def _tagged(hint: Any) -> Tagged | None:
    """The :class:`Tagged` of an ``Annotated[..., Tagged(...)]`` hint (also inside ``X | None``)."""
    if typing.get_origin(hint) is typing.Annotated:
        return next((m for m in hint.__metadata__ if isinstance(m, Tagged)), None)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return next((t for t in map(_tagged, typing.get_args(hint)) if t is not None), None)
    return None


def _members(hint: Any) -> tuple[type, ...]:
    """The classes of a (possibly ``Annotated``, possibly optional) union, ``None`` left out."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    nested = (typing.Annotated, typing.Union, types.UnionType)
    return tuple(m for a in args if a is not type(None)
                 for m in (_members(a) if typing.get_origin(a) in nested else (a,)))


def _without_own_tags(cls: type, data: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``data`` without keys naming ``cls``'s own tag; a key naming another class is an error."""
    tags = _class_tags(cls)
    own = {k: v for k, v in data.items() if k in tags}
    for key, value in own.items():
        if value != tag_of(cls, key):
            raise OptionsError(f"{where}.{key}: {value!r}, but {cls.__name__} is {key} {tag_of(cls, key)!r}")
    return {k: v for k, v in data.items() if k not in own} if own else data


def _by_tag(value: Any, hint: Any, tagged: Tagged, where: str) -> Any:
    """A value of a union tagged inside its mapping: the member whose class tag is ``value[key]``."""
    classes = tuple(tagged.members()) if tagged.members is not None else _members(hint)
    if isinstance(value, classes):
        return value
    if not isinstance(value, Mapping):
        raise OptionsError(f"{where}: expected a mapping of options, got {type(value).__name__}")
    members = {tag_of(m, tagged.key): m for m in classes}
    if tagged.key not in value:
        raise OptionsError(f"missing {where}.{tagged.key} (one of {list(members)})")
    if value[tagged.key] not in members:
        raise OptionsError(f"{where}.{tagged.key}: {value[tagged.key]!r} is not one of {list(members)}")
    return members[value[tagged.key]].from_mapping(value, where)


def _convert(value: Any, hint: Any, where: str) -> Any:
    if hint is Any:
        return _freeze(value)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        one_of = next((m for m in hint.__metadata__ if isinstance(m, OneOf)), None)
        if one_of is not None:
            names = list(one_of.names())
            if value not in names:
                raise OptionsError(f"{where}: {value!r} is not one of {names}")
            return value
        tagged = _tagged(hint)
        if tagged is None:
            return _convert(value, args[0], where)
        if tagged.choose is not None:
            raise TypeError(f"{where}: a union chosen by the field {tagged.key!r} is converted by from_mapping")
        return _by_tag(value, hint, tagged, where)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            if type(None) in args:
                return None
            raise OptionsError(f"{where}: null is not allowed")
        rest = [a for a in args if a is not type(None)]
        if len(rest) > 1:  # a programming error, not a config one: the union must say how to choose
            raise TypeError(f"{where}: the union {hint} has no tag; declare it Annotated[..., Tagged(key)]")
        return _convert(value, rest[0], where)
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
    if hint in (str, bool) and not isinstance(value, hint):
        raise OptionsError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _freeze(v) for k, v in value.items()}
    return value


def _plain(value: Any, sort_keys: bool = False, tags: bool = False) -> Any:
    """``value`` as plain values: dataclasses as dicts, tuples as lists; with ``tags`` (kept down through options
    objects only), a tagged-union field's options object with its tag first."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        tags = tags and isinstance(value, Options)
        hints = _hints(type(value)) if tags else {}
        out = {}
        fields = dataclasses.fields(value)
        for f in sorted(fields, key=lambda f: f.name) if sort_keys else fields:
            item = getattr(value, f.name)
            out[f.name] = _plain(item, sort_keys, tags)
            tagged = _tagged(hints.get(f.name))
            if isinstance(item, Options) and tagged is not None and tagged.choose is None:
                out[f.name] = {tagged.key: tag_of(type(item), tagged.key), **out[f.name]}
        return out
    if isinstance(value, list | tuple):
        return [_plain(v, sort_keys, tags) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v, sort_keys, tags) for k, v in value.items()}
    return value


@dataclasses.dataclass(frozen=True)
class NoOptions(Options):
    """The options of a step that has none (its rule passes ``options={}``)."""


@dataclasses.dataclass(frozen=True)
class Runtime:
    """What the executor decides for one job: the cores granted and the log file (for a step taking ``runtime``)."""

    threads: int
    log_file: str | None


def set_torch_threads(threads: int) -> None:
    """Let torch use the ``threads`` cores a job was granted (at least one); imports torch (every caller computes
    with it next)."""
    import torch

    torch.set_num_threads(max(1, threads))
