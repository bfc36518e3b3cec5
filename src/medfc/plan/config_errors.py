"""A config mistake as one short message: the dotted key, what is wrong, the allowed keys or values and
the closest match, e.g. ``experiments.healthfc.train.lrr: unknown key; did you mean lr? (allowed: ...)``.

:func:`plan_for` is what the workflow runs (``workflow/rules/common.smk``) and what the tests call
in-process: the schema (:func:`config_error`, instead of Snakemake's validation, which prints the whole
schema), its defaults filled in, the :class:`~medfc.plan.Plan` and its checks across keys, every planned
job's options built once. Whichever layer finds a mistake — the schema, ``Plan.check()``, a model alias
that names no model, fold 12 of 5, an error while the plan builds a job's options — it is raised as one
:class:`ConfigError` line naming the key; the workflow prints it and stops with exit status 1.
:func:`config_file_error` names the file, line and column of a YAML syntax error.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

if TYPE_CHECKING:
    from medfc.plan import Plan

MAX_SHOWN = 30  # allowed keys or values listed at most


class ConfigError(ValueError):
    """A config mistake, as one line that names the key (or the file and line of a YAML syntax error)."""


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
    if error.validator == "minItems" and isinstance(error.instance, list):
        n = len(error.instance)
        return f"{dotted(path)}: {error.instance!r} has {n} item{'' if n == 1 else 's'}; at least {error.validator_value} needed"
    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    return f"{dotted(path)}: {message}"


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: the 84 kB schema in ~0.05 s, not ~0.3 s


def load_schema(path: str | Path) -> dict[str, Any]:
    """The schema, read once per start with a safe loader (libyaml's when available)."""
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)  # noqa: S506 (a safe loader)


def config_error(config: dict[str, Any], schema: dict[str, Any] | str | Path) -> str | None:
    """The config's first mistake as ``config: <dotted key>: <what is wrong>`` (one line), or None if the
    config is valid. Only the schema's local references (``#/$defs/...``) are followed."""
    if not isinstance(schema, dict):
        schema = load_schema(schema)
    error = best_match(Draft202012Validator(schema).iter_errors(config))
    return None if error is None else f"config: {describe(error)}"


def models_options_error(plan: Plan, schema: dict[str, Any]) -> str | None:
    """The first mistake in ``models.options`` values, each entry checked against the schema of its alias's
    config section (``experiments.tfidf`` for an alias of sklearn:tfidf): ``config:
    models.options.<alias>.<key>: <what is wrong>``. An entry for an unknown alias, an ensemble or a
    fine-tuned encoder is left to ``Plan.check`` (``check_model_options``), which names it."""
    for alias, values in plan.config["models"]["options"].items():
        if alias not in plan.aliases or plan.is_ensemble(alias):
            continue
        section = plan.model_class(alias).section
        if section is None:
            continue
        node = schema["properties"]["experiments"]["properties"][section]
        error = best_match(Draft202012Validator({**node, "$defs": schema.get("$defs", {})}).iter_errors(values))
        if error is not None:
            root = error
            while root.parent is not None:
                root = root.parent
            root.path.extendleft(reversed(("models", "options", alias)))  # where the values are in the config
            return f"config: {describe(error)}"
    return None


def _one_line(message: str) -> str:
    line = " ".join(str(message).split())
    return line if line.startswith("config") else f"config: {line}"


def plan_for(config: dict[str, Any], schema: dict[str, Any] | str | Path, *, prerequisites: bool = False,
             base_dir: str | os.PathLike[str] | None = None) -> Plan:
    """The :class:`~medfc.plan.Plan` of ``config``, checked through every layer; ``config`` gets the schema's
    defaults filled in, in place, as Snakemake's ``validate(config, schema, set_default=True)`` would.

    :raises ConfigError: the first mistake, one line naming the key: a schema error (:func:`config_error`),
        a check across keys (``Plan.check``), or an error while the plan builds a planned job's inputs and
        options (``Plan.build_jobs``: a model alias naming no model, a fold outside the folds, a missing
        mirror or release file); with ``prerequisites``, every missing prerequisite of the planned rules
        (:meth:`~medfc.plan.Plan.missing_prerequisites`: an unset key, a placeholder contact, a missing file),
        one line each. ``base_dir`` (the workflow's checkout, above workflow/Snakefile): the shipped files the
        config names (``resources/...``) are read from there when the working directory lacks them
        (``snakemake --directory``, a deployment using the workflow as a module)."""
    from medfc.common.schema import fill_defaults
    from medfc.plan import Plan
    from medfc.plan.experiments import misplaced_model_train
    from medfc.plan.layout import rebase_shipped_paths
    from medfc.plan.resources import moved_key

    if not isinstance(schema, dict):
        schema = load_schema(schema)
    # a TF-IDF key in model_train, or a resource key that moved (medfc.plan.resources): where it goes
    mistake = misplaced_model_train(config) or moved_key(config) or config_error(config, schema)
    if mistake:
        raise ConfigError(mistake)
    fill_defaults(config, schema)
    rebase_shipped_paths(config, base_dir)
    try:
        plan = Plan(config, base_dir)
        mistake = models_options_error(plan, schema)  # before the checks that build the jobs' options from them
        if mistake:
            raise ConfigError(mistake)
        plan.check()
        missing = plan.missing_prerequisites() if prerequisites else []
        if missing:
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
    None (a missing file, or a valid one). Snakemake's own message names neither the file nor the line."""
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


def merged_config(paths: Iterable[str | os.PathLike], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The config Snakemake builds from config files given in order (the workflow's ``configfile:`` first,
    then ``--configfile``) and ``--config`` values: later values update earlier ones, nested dictionaries
    key by key. For checking a config in-process as the workflow does (with :func:`plan_for`).

    :raises ConfigError: a file that is not valid YAML (:func:`config_file_error`) or not a mapping."""
    config: dict[str, Any] = {}
    for path in paths:
        problem = config_file_error(path)
        if problem:
            raise ConfigError(problem)
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if data is None:
            continue
        if not isinstance(data, dict):
            raise ConfigError(f"{os.fspath(path)}: a config file must be a mapping of keys at its top level")
        _update(config, data)
    _update(config, copy.deepcopy(overrides or {}))
    return config


def _update(config: dict[str, Any], overrides: dict[str, Any]) -> None:
    """Snakemake's ``update_config``: nested dictionaries merged key by key, anything else replaced."""
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            _update(config[key], value)
        else:
            config[key] = value


def check_config(workflow: str | os.PathLike, configfiles: Iterable[str | os.PathLike]) -> int:
    """``python -m medfc.plan.config_errors [--workflow DIR] [FILE ...]``: the workflow's ``config/config.yaml``
    and then the ``FILE``s (as given to ``--configfile``) checked as the workflow checks them
    (:func:`plan_for`), in the workflow's directory. A mistake — a YAML syntax error with its file and line
    included, which Snakemake's own message for a ``--configfile`` does not name — is printed as one line,
    with exit status 1."""
    import sys

    root = Path(workflow).resolve()
    files = [root / "config" / "config.yaml", *(Path(f).resolve() for f in configfiles)]
    cwd = Path.cwd()
    os.chdir(root)  # the config's paths are relative to the workflow, as for snakemake
    try:
        plan = plan_for(merged_config(files), root / "workflow" / "schemas" / "config.schema.yaml")
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        os.chdir(cwd)
    print(f"config ok: {len(plan.targets())} targets ({', '.join(os.path.relpath(f, root) for f in files)})")
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m medfc.plan.config_errors", description=check_config.__doc__)
    parser.add_argument("configfiles", nargs="*", metavar="FILE", help="the files of --configfile, in order (after config/config.yaml)")
    parser.add_argument("--workflow", default=".", help="the workflow's directory (default: here)")
    args = parser.parse_args(argv)
    return check_config(args.workflow, args.configfiles)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
