"""A config mistake as one short message: the dotted key, what is wrong, the allowed keys or values and
the closest match, e.g. ``experiments.healthfc.train.lrr: unknown key; did you mean lr? (allowed: ...)``.

:func:`plan_for` is what the workflow runs (``workflow/rules/common.smk``) and what the tests call in-process:
the schema, its defaults, the :class:`~medfc.plan.Plan`, its checks and every planned job's options, a mistake in
any of them raised as one :class:`ConfigError` line naming the key. ``python -m medfc.config.validate`` checks
config files the same way."""

from __future__ import annotations

import contextlib
import copy
import functools
import operator
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from medfc.common.registry import did_you_mean

if TYPE_CHECKING:
    from medfc.plan import Plan
    from medfc.plan.jobs import Config

MAX_SHOWN = 30  # allowed keys or values listed at most


class ConfigError(ValueError):
    """A config mistake, as one line that names the key (or the file and line of a YAML syntax error)."""


def dotted(path: Iterable[Any]) -> str:
    """A path in the config as written in the docs: ``medsnip.verifiers[0].llm``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the config)"


def _listed(choices: Iterable[Any]) -> str:
    names = [str(c) for c in choices]
    return ", ".join(names[:MAX_SHOWN]) + (", ..." if len(names) > MAX_SHOWN else "")


def describe(error: ValidationError, where: tuple[str, ...] = ()) -> str:
    """One line for a schema error, naming the key (``where``: the keys above the validated value)."""
    path = [*where, *error.absolute_path]
    if error.validator == "additionalProperties":  # false: a mapping, an error of its own per value otherwise
        allowed = list(error.schema.get("properties", {}))
        key = next(k for k in error.instance if k not in allowed)
        return f"{dotted([*path, key])}: unknown key{did_you_mean(key, allowed)} (allowed: {_listed(allowed)})"
    if error.validator == "enum":
        allowed = list(error.validator_value)
        hint = did_you_mean(error.instance, allowed) if isinstance(error.instance, str) else ""
        return f"{dotted(path)}: {error.instance!r} is not allowed{hint} (allowed: {_listed(allowed)})"
    if error.validator == "minItems":
        n = len(error.instance)
        return f"{dotted(path)}: {error.instance!r} has {n} item{'' if n == 1 else 's'}; at least {error.validator_value} needed"
    return f"{dotted(path)}: {error.message[:300]}" + ("..." if len(error.message) > 300 else "")


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: the 84 kB schema in ~0.05 s, not ~0.3 s


def load_schema(path: str | Path) -> dict[str, object]:
    """The schema, read once per start with a safe loader (libyaml's when available)."""
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)  # noqa: S506 (a safe loader)


def config_error(config: Config, schema: dict[str, Any]) -> str | None:
    """The config's first mistake as ``config: <dotted key>: <what is wrong>`` (one line), or None if the
    config is valid. Only the schema's local references (``#/$defs/...``) are followed."""
    error = best_match(Draft202012Validator(schema).iter_errors(config))
    return None if error is None else f"config: {describe(error)}"


def models_options_error(plan: Plan, schema: dict[str, Any]) -> str | None:
    """The first mistake in ``models.options`` values, each entry checked against the schema of its alias's
    config section (``experiments.tfidf`` for an alias of sklearn:tfidf); other mistakes there are the checks'."""
    for alias, values in plan.config["models"]["options"].items():
        if alias not in plan.models.aliases or plan.models.is_ensemble(alias):
            continue
        section = plan.models.model_class(alias).section
        if section is None:
            continue
        node = schema["properties"]["experiments"]["properties"][section]
        error = best_match(Draft202012Validator({**node, "$defs": schema.get("$defs", {})}).iter_errors(values))
        if error is not None:
            return f"config: {describe(error, ('models', 'options', alias))}"
    return None


# how a value of each JSON type is written on the command line, for the message that refuses one
WRITTEN = {"boolean": "true or false", "integer": "a whole number", "number": "a number", "null": "null"}
# each type a --config string is tried as, in order: the pattern it matches (any case), its value
_TYPERS: dict[str, tuple[str, Any]] = {
    "null": (r"null|~|none", lambda v: None),
    "boolean": (r"true|false", lambda v: v.lower() == "true"),
    "integer": (r"[+-]?\d+", int),
    "number": (r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", float),
}


def _node(node: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """A schema node with its local ``$ref`` followed; {} for none (the schema has no anyOf, oneOf nor
    patternProperties: a key's node is its property's, else its object's additionalProperties)."""
    if not isinstance(node, dict):
        return {}
    if "$ref" not in node:
        return node
    target = functools.reduce(operator.getitem, node["$ref"].removeprefix("#/").split("/"), schema)
    return _node({**target, **{k: v for k, v in node.items() if k != "$ref"}}, schema)


def typed_command_line(config: Config, given: Any, schema: dict[str, Any]) -> None:
    """Type the ``--config`` values in ``config``, in place, by the schema: Snakemake reads the scalars inside a
    ``--config`` value as strings; each whose key the schema types as a boolean, integer, number or null (and not
    as a string) is converted.

    :raises ConfigError: a value that is none of the types its key allows, naming the key and how to write it."""
    def walk(value: Any, path: list[str | int], node: dict[str, Any]) -> None:
        if isinstance(value, dict | list):
            props, other = node.get("properties", {}), node.get("additionalProperties")
            for k, v in value.items() if isinstance(value, dict) else enumerate(value):
                walk(v, [*path, k], _node(node.get("items") if isinstance(k, int) else props.get(k, other), schema))
            return
        declared = node.get("type")  # none: any type
        types = {declared} if isinstance(declared, str) else set(declared or ())
        if not isinstance(value, str) or not types or "string" in types or not types <= set(_TYPERS):
            return
        for kind, (pattern, convert) in _TYPERS.items():
            if kind in types and re.fullmatch(pattern, value.strip(), re.I):
                functools.reduce(operator.getitem, path[:-1], config)[path[-1]] = convert(value.strip())
                return
        wanted = " or ".join(WRITTEN[t] for t in ("boolean", "integer", "number", "null") if t in types)
        raise ConfigError(f"config: {dotted(path)}: {value!r} (from --config) is not {wanted}; "
                          f"write it unquoted, e.g. --config '{_example(path, types)}'")

    walk(given, [], _node(schema, schema))


def _example(path: list[str | int], types: set[str]) -> str:
    sample = "true" if "boolean" in types else "3" if "integer" in types else "0.5" if "number" in types else "null"
    keys = [p for p in path if isinstance(p, str)]
    return f"{keys[0]}=" + functools.reduce(lambda inner, key: f'{{"{key}": {inner}}}', reversed(keys[1:]), sample)


FOLDER_KEYS = ("results_dir", "cache_dir")  # the folders a run writes below; each made when missing


def folder_error(key: str, path: str) -> str | None:
    """Why ``path`` (the value of ``key``) cannot be a folder the run writes below: it, or a folder above it, is
    a file. None when it is a folder or can be made."""
    target = Path(path)
    for candidate in (target, *target.parents):
        if candidate.is_dir():
            return None
        if candidate.exists():
            where = "is a file" if candidate == target else f"is below {str(candidate)!r}, which is a file"
            return f"config: {key}: {path!r} {where}, not a folder; name a folder (it is made when missing)"
    return None


def _one_line(message: str) -> str:
    line = " ".join(str(message).split())
    return line if line.startswith("config") else f"config: {line}"


def plan_for(config: Config, schema: dict[str, Any] | str | Path, *, prerequisites: bool = False,
             base_dir: str | os.PathLike[str] | None = None, command_line: Mapping[str, object] | None = None) -> Plan:
    """The :class:`~medfc.plan.Plan` of ``config``, checked through every layer; ``config`` gets the schema's
    defaults filled in, in place. ``base_dir``: the workflow's checkout, where the shipped files the config names
    are read when the working directory lacks them. ``command_line``: the ``--config`` values, typed first.

    :raises ConfigError: the first mistake, one line naming the key (a schema error, a check across keys, an error
        while the plan builds a planned job); with ``prerequisites``, every missing prerequisite, one line each."""
    from medfc.common.schema import fill_defaults
    from medfc.config.checks import check_plan, misplaced_model_train
    from medfc.config.prerequisites import missing_prerequisites
    from medfc.plan import Plan
    from medfc.plan.layout import rebase_shipped_paths

    if not isinstance(schema, dict):
        schema = load_schema(schema)
    if command_line:
        typed_command_line(config, command_line, schema)
    # a TF-IDF key in model_train: where it goes
    if mistake := misplaced_model_train(config) or config_error(config, schema):
        raise ConfigError(mistake)
    fill_defaults(config, schema)
    for key in FOLDER_KEYS:
        if mistake := folder_error(key, config[key]):
            raise ConfigError(mistake)
    rebase_shipped_paths(config, base_dir)
    try:
        plan = Plan(config, base_dir)
        if mistake := models_options_error(plan, schema):  # before the checks that build the jobs' options from them
            raise ConfigError(mistake)
        check_plan(plan)
        if prerequisites and (missing := missing_prerequisites(plan)):
            raise ConfigError("\n".join(missing))
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(_one_line(str(exc))) from None
    except OSError as exc:  # a file the config names that cannot be read (a prompt, a release)
        raise ConfigError(_one_line(f"{exc.filename or ''}: {exc.strerror or exc}")) from None
    return plan


def config_file_error(path: str | os.PathLike) -> str | None:
    """``<file>, line L, column C: <what YAML says>`` for a config file that is not valid YAML (or JSON), else
    None (a missing file, or a valid one)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        return f"{os.fspath(path)}: not UTF-8 text (byte {exc.start}): {exc.reason}"
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark, start = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(str(getattr(exc, "problem", None) or exc).split())
        context = getattr(exc, "context", None)
        if context and start is not None and (mark is None or start.line != mark.line):
            context += f" that starts at line {start.line + 1}, column {start.column + 1}"
        return f"{os.fspath(path)}{where}: not valid YAML: {what}" + (f" ({context})" if context else "")
    return None


def merged_config(paths: Iterable[str | os.PathLike], overrides: Mapping[str, object] | None = None) -> dict[str, object]:
    """The config Snakemake builds from config files given in order and ``--config`` values: later values update
    earlier ones, nested dictionaries key by key.

    :raises ConfigError: a file that is not valid YAML (:func:`config_file_error`) or not a mapping."""
    config: Config = {}
    for path in paths:
        if problem := config_file_error(path):
            raise ConfigError(problem)
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict | None):
            raise ConfigError(f"{os.fspath(path)}: a config file must be a mapping of keys at its top level")
        _update(config, data or {})
    _update(config, copy.deepcopy(overrides or {}))
    return config


def _update(config: Config, overrides: dict[str, Any]) -> None:
    """Snakemake's ``update_config``: nested dictionaries merged key by key, anything else replaced."""
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            _update(config[key], value)
        else:
            config[key] = value


def main(argv: list[str] | None = None) -> int:
    """``python -m medfc.config.validate [--workflow DIR] [FILE ...]``: the workflow's ``config/config.yaml``
    and then the ``FILE``s (as given to ``--configfile``) checked as the workflow checks them
    (:func:`plan_for`), in the workflow's directory. A mistake — a YAML syntax error with its file and line
    included, which Snakemake's own message for a ``--configfile`` does not name — is printed as one line,
    with exit status 1."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m medfc.config.validate", description=main.__doc__)
    parser.add_argument("configfiles", nargs="*", metavar="FILE",
                        help="the files of --configfile, in order (after config/config.yaml)")
    parser.add_argument("--workflow", default=".", help="the workflow's directory (default: here)")
    args = parser.parse_args(argv)
    root = Path(args.workflow).resolve()
    files = [root / "config" / "config.yaml", *(Path(f).resolve() for f in args.configfiles)]
    try:
        with contextlib.chdir(root):  # the config's paths are relative to the workflow, as for snakemake
            plan = plan_for(merged_config(files), root / "workflow" / "schemas" / "config.schema.yaml")
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    jobs = sum(map(len, plan.planned_wildcards().values()))
    print(f"config ok: {jobs} jobs ({', '.join(os.path.relpath(f, root) for f in files)})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
