"""Typed step options: every key required, unknown keys refused, values typed and frozen."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import pytest

from medfc.common.options import Options, OptionsError, Tagged


@dataclass(frozen=True)
class Inner(Options):
    lr: float
    max_steps: int | None


@dataclass(frozen=True)
class Outer(Options):
    name: str
    mode: Literal["a", "b"]
    paths: tuple[str, ...]
    inner: Inner
    extra: dict[str, int]


GOOD = {"name": "x", "mode": "a", "paths": ["p", "q"], "inner": {"lr": 1, "max_steps": None}, "extra": {"k": 1}}


def test_builds_typed_frozen_options():
    o = Outer.from_mapping(GOOD)
    assert o == Outer("x", "a", ("p", "q"), Inner(1.0, None), {"k": 1})
    assert isinstance(o.inner.lr, float) and o.paths == ("p", "q")
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.name = "y"
    assert o.as_dict() == {"name": "x", "mode": "a", "paths": ["p", "q"], "inner": {"lr": 1.0, "max_steps": None}, "extra": {"k": 1}}
    assert Outer.from_mapping(o) is o


def test_missing_and_unknown_keys_are_named():
    bad = {k: v for k, v in GOOD.items() if k != "paths"} | {"pathz": []}
    with pytest.raises(OptionsError, match=r"missing healthfc\.crawl\.paths; unknown healthfc\.crawl\.pathz"):
        Outer.from_mapping(bad, where="healthfc.crawl")
    with pytest.raises(OptionsError, match=r"missing options\.inner\.max_steps"):
        Outer.from_mapping(GOOD | {"inner": {"lr": 1.0}}, where="options")


@pytest.mark.parametrize("key, value, message", [
    ("mode", "c", r"options\.mode: 'c' is not one of \['a', 'b'\]"),
    ("paths", "p", r"options\.paths: expected a list"),
    ("name", 3, r"options\.name: expected str"),
    ("inner", {"lr": "fast", "max_steps": None}, r"options\.inner\.lr: expected a number"),
    ("inner", {"lr": 1.0, "max_steps": 2.5}, r"options\.inner\.max_steps: expected an integer"),
    ("inner", {"lr": True, "max_steps": None}, r"options\.inner\.lr: expected a number"),
])
def test_wrong_types_are_named(key, value, message):
    with pytest.raises(OptionsError, match=message):
        Outer.from_mapping(GOOD | {key: value}, where="options")


def library_options_classes() -> list[type[Options]]:
    """Every Options subclass the library defines (each in the module that defines it)."""
    import importlib
    import pkgutil

    import medfc

    found = []
    for mod in pkgutil.walk_packages(medfc.__path__, "medfc."):
        if mod.name.endswith("__main__"):
            continue
        module = importlib.import_module(mod.name)
        found += [obj for obj in vars(module).values()
                  if isinstance(obj, type) and issubclass(obj, Options) and obj is not Options and obj.__module__ == module.__name__]
    return found


def test_a_field_with_a_default_is_a_bug_the_step_options_never_have():
    """Defaults live in the schema only: every Options subclass in the library has none."""
    offenders = [f"{obj.__module__}.{obj.__name__}.{f.name}" for obj in library_options_classes() for f in dataclasses.fields(obj)
                 if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING]
    assert offenders == []


@dataclass(frozen=True)
class Fast(Options):
    kind: ClassVar[str] = "fast"
    lr: float


@dataclass(frozen=True)
class Slow(Options):
    kind: ClassVar[str] = "slow"
    lr: float
    epochs: int


ByName = Annotated[Fast | Slow, Tagged("name", choose=lambda name: {"a": Fast, "b": Slow}[name])]


@dataclass(frozen=True)
class Tagged_(Options):
    model: Annotated[Fast | Slow, Tagged("kind")]
    name: Literal["a", "b"]
    extra: ByName


def test_a_tagged_union_builds_the_class_its_tag_names_and_never_tries_the_others():
    o = Tagged_.from_mapping({"model": {"kind": "slow", "lr": 1, "epochs": 2}, "name": "a", "extra": {"lr": 3}})
    assert o.model == Slow(1.0, 2) and o.extra == Fast(3.0)
    # the tag is the class's, not a field: as_dict (info files) leaves it out, to_mapping puts it back
    assert o.as_dict() == {"model": {"lr": 1.0, "epochs": 2}, "name": "a", "extra": {"lr": 3.0}}
    assert Tagged_.from_mapping(o.to_mapping()) == o
    assert Slow.from_mapping({"kind": "slow", "lr": 1, "epochs": 2}) == Slow(1.0, 2)  # a class accepts its own tag
    # a wrong key is named for the tagged class alone (no "matches none of its types" over every member)
    with pytest.raises(OptionsError, match=r"^Fast: unknown options\.model\.epochs$"):
        Tagged_.from_mapping({"model": {"kind": "fast", "lr": 1, "epochs": 2}, "name": "a", "extra": {"lr": 3}}, where="options")
    with pytest.raises(OptionsError, match=r"^missing options\.model\.kind \(one of \['fast', 'slow'\]\)$"):
        Tagged_.from_mapping({"model": {"lr": 1}, "name": "a", "extra": {"lr": 3}}, where="options")
    with pytest.raises(OptionsError, match=r"options\.model\.kind: 'quick' is not one of \['fast', 'slow'\]"):
        Tagged_.from_mapping({"model": {"kind": "quick", "lr": 1}, "name": "a", "extra": {"lr": 3}}, where="options")
    with pytest.raises(OptionsError, match=r"options\.kind: 'fast', but Slow is kind 'slow'"):
        Slow.from_mapping({"kind": "fast", "lr": 1, "epochs": 2}, where="options")
    # the sibling ``name`` chooses ``extra``'s class: b is Slow, which needs epochs
    with pytest.raises(OptionsError, match=r"^Slow: missing options\.extra\.epochs$"):
        Tagged_.from_mapping({"model": {"kind": "fast", "lr": 1}, "name": "b", "extra": {"lr": 3}}, where="options")


@dataclass(frozen=True)
class Either(Options):
    model: Inner | Outer


def test_an_untagged_union_of_options_is_refused():
    with pytest.raises(TypeError, match=r"options\.model: the union .* has no tag; declare it Annotated\[\.\.\., Tagged\(key\)\]"):
        Either.from_mapping({"model": {"lr": 2, "max_steps": 3}}, where="options")


def test_no_options_class_of_the_library_has_an_untagged_union():
    """Every union of two or more types in a step's options says how its member is chosen."""
    import types
    import typing

    from medfc.common.options import _tagged

    offenders = []
    for obj in library_options_classes():
        for name, hint in typing.get_type_hints(obj, include_extras=True).items():
            if typing.get_origin(hint) is typing.ClassVar:
                continue
            bare = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
            args = typing.get_args(bare) if typing.get_origin(bare) in (typing.Union, types.UnionType) else ()
            if len([a for a in args if a is not type(None)]) > 1 and _tagged(hint) is None:
                offenders.append(f"{obj.__module__}.{obj.__name__}.{name}")
    assert offenders == []
