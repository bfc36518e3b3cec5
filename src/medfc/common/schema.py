"""The config schema's defaults (``workflow/schemas/config.schema.yaml``, or ``$MEDFC_SCHEMA``), filled in as the
workflow's validation fills an empty config, for entry points outside Snakemake (``python -m medfc.scoring``)."""

from __future__ import annotations

import copy
import os
from functools import cache
from pathlib import Path

from medfc.common.jsontypes import JSONObject, JSONValue

SCHEMA_ENV = "MEDFC_SCHEMA"
_REPO_SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"


def schema_path() -> Path:
    """The config schema: ``$MEDFC_SCHEMA`` when set, else the repository's."""
    path = Path(os.environ[SCHEMA_ENV]) if os.environ.get(SCHEMA_ENV) else _REPO_SCHEMA
    if not path.is_file():
        raise FileNotFoundError(f"config schema not found at {path} (set {SCHEMA_ENV} to the path of "
                                "workflow/schemas/config.schema.yaml)")
    return path


def fill_defaults(config: JSONObject, schema: JSONObject) -> JSONObject:
    """Validate ``config`` and fill in every ``properties`` default in place, nested ones too, as Snakemake's
    ``validate(config, schema, set_default=True)`` does (local ``#/$defs`` references only). Returns ``config``."""
    from jsonschema import Draft202012Validator, validators

    properties = Draft202012Validator.VALIDATORS["properties"]

    def fill(validator, props, instance, subschema):  # jsonschema's FAQ recipe, as Snakemake's validate
        if isinstance(instance, dict):
            for name, sub in props.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from properties(validator, props, instance, subschema)

    validators.extend(Draft202012Validator, {"properties": fill})(schema).validate(config)
    return config


@cache
def _defaults(path: Path) -> JSONObject:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return fill_defaults({}, yaml.load(path.read_text(encoding="utf-8"), Loader=loader))  # noqa: S506 (a safe loader)


def defaults() -> JSONObject:
    """The whole config as the schema fills it in for an empty config file (a fresh copy)."""
    return copy.deepcopy(_defaults(schema_path()))


def section(path: str) -> JSONValue:
    """One section of :func:`defaults` by its dotted key (``"scoring.bootstrap"``)."""
    node: JSONValue = defaults()
    for key in path.split("."):
        node = node[key]
    return node
