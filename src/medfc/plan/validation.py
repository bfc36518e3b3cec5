"""The config checked against the schema and completed with its defaults, once per Snakemake start.

What ``snakemake.utils.validate(config, schema, set_default=True)`` does, with the schema read once:
the workflow used to read its 84 kB schema twice per start with the pure-Python YAML parser (once for
:func:`medfc.plan.config_errors.config_error`, once inside Snakemake's ``validate``), about 0.6 s of
CPU for every dry run, rerun and cluster job step. Here it is parsed by libyaml when PyYAML has it,
the first mistake is reported as one line (:func:`config_error`), and the defaults are filled in by the
same validator Snakemake builds (JSON Schema 2020-12, ``properties`` extended to set each missing
property's ``default`` before validating it), so the completed config is the same mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from medfc.plan.config_errors import config_error, describe

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_schema(path: str | Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_Loader)  # noqa: S506 (a safe loader)


def _with_defaults(validator_class: Any) -> Any:
    from jsonschema import validators

    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        for name, subschema in properties.items():
            if "default" in subschema:
                instance.setdefault(name, subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": set_defaults})


def validate_config(config: dict[str, Any], schema: dict[str, Any] | str | Path) -> str | None:
    """Check ``config`` and fill in every default the schema declares (in place), as Snakemake's
    ``validate(..., set_default=True)`` does; the first mistake as one line (``config: <key>: ...``), or
    None when the config is valid."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    if not isinstance(schema, dict):
        schema = load_schema(schema)
    mistake = config_error(config, schema)
    if mistake:
        return mistake
    error = best_match(_with_defaults(Draft202012Validator)(schema).iter_errors(config))
    return None if error is None else f"config: {describe(error)}"
