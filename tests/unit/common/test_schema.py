"""medfc.common.schema: the library reads the config schema's defaults as the workflow's validation fills them."""

from __future__ import annotations

import pytest

from medfc.common import schema
from tests.helpers.config import SCHEMA, defaults


def test_library_defaults_are_the_workflows_validation_defaults():
    assert schema.schema_path() == SCHEMA.resolve()
    assert schema.defaults() == defaults()  # Snakemake's validate(set_default=True) of an empty config
    assert schema.section("scoring.bootstrap") == defaults()["scoring"]["bootstrap"]


def test_defaults_are_a_fresh_copy_and_the_schema_can_be_named(tmp_path, monkeypatch):
    schema.defaults()["scoring"]["bootstrap"]["n_resamples"] = -1
    assert schema.section("scoring.bootstrap")["n_resamples"] == defaults()["scoring"]["bootstrap"]["n_resamples"]
    other = tmp_path / "s.yaml"
    other.write_text("type: object\nproperties:\n  a: {type: object, default: {}, properties: {b: {type: integer, default: 3}}}\n")
    monkeypatch.setenv(schema.SCHEMA_ENV, str(other))
    assert schema.defaults() == {"a": {"b": 3}}
    monkeypatch.setenv(schema.SCHEMA_ENV, str(tmp_path / "missing.yaml"))
    with pytest.raises(FileNotFoundError, match="MEDFC_SCHEMA"):
        schema.defaults()
