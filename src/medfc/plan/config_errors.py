"""A config mistake as one short message: the dotted key, what is wrong, the allowed keys or values and
the closest match, e.g. ``experiments.healthfc.train.lrr: unknown key; did you mean lr? (allowed: ...)``.

The workflow calls :func:`config_error` before Snakemake's own validation (which prints the whole
schema), prints the message and stops with exit status 1.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

MAX_SHOWN = 30  # allowed keys or values listed at most


def dotted(path: Iterable[Any]) -> str:
    """A path in the config as written in the docs: ``medsnip.verifiers[0].llm``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the config)"


def _closest(word: str, choices: Iterable[str]) -> str | None:
    match = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return match[0] if match else None


def _listed(choices: Iterable[Any]) -> str:
    names = [str(c) for c in choices]
    return ", ".join(names[:MAX_SHOWN]) + (", ..." if len(names) > MAX_SHOWN else "")


def describe(error: ValidationError) -> str:
    """One line for a schema error, naming the key."""
    path = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties" and schema.get("additionalProperties") is False and isinstance(error.instance, dict):
        allowed = list(schema.get("properties", {}))
        unknown = [k for k in error.instance if k not in allowed]
        key = unknown[0] if unknown else "?"
        close = _closest(key, allowed)
        hint = f"; did you mean {close}?" if close else ""
        return f"{dotted([*path, key])}: unknown key{hint} (allowed: {_listed(allowed)})"
    if error.validator == "enum":
        allowed = list(error.validator_value)
        close = _closest(error.instance, allowed) if isinstance(error.instance, str) else None
        hint = f"; did you mean {close}?" if close else ""
        return f"{dotted(path)}: {error.instance!r} is not allowed{hint} (allowed: {_listed(allowed)})"
    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    return f"{dotted(path)}: {message}"


def load_schema(path: str | Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def config_error(config: dict[str, Any], schema: dict[str, Any] | str | Path) -> str | None:
    """The config's first mistake as ``config: <dotted key>: <what is wrong>`` (one line), or None if the
    config is valid. Only the schema's local references (``#/$defs/...``) are followed."""
    if not isinstance(schema, dict):
        schema = load_schema(schema)
    error = best_match(Draft202012Validator(schema).iter_errors(config))
    return None if error is None else f"config: {describe(error)}"
