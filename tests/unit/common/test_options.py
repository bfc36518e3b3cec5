"""Typed step options: every key required, unknown keys refused, values typed and frozen."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import pytest

from medfc.common.options import Options, OptionsError


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


def test_a_field_with_a_default_is_a_bug_the_step_options_never_have():
    """Defaults live in the schema only: every Options subclass in the library has none."""
    import importlib
    import pkgutil

    import medfc

    offenders = []
    for mod in pkgutil.walk_packages(medfc.__path__, "medfc."):
        if mod.name.endswith("__main__"):
            continue
        module = importlib.import_module(mod.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Options) and obj is not Options and obj.__module__ == module.__name__:
                for f in dataclasses.fields(obj):
                    if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                        offenders.append(f"{obj.__module__}.{obj.__name__}.{f.name}")
    assert offenders == []


@dataclass(frozen=True)
class Either(Options):
    model: Inner | Outer


def test_a_union_of_options_takes_the_one_that_fits_and_names_every_problem_otherwise():
    assert Either.from_mapping({"model": {"lr": 2, "max_steps": 3}}).model == Inner(2.0, 3)
    with pytest.raises(OptionsError, match=r"options\.model matches none of its types: Inner: missing options\.model\.lr; unknown options\.model\.lrr \| Outer: missing"):
        Either.from_mapping({"model": {"lrr": 2, "max_steps": 3}}, where="options")
