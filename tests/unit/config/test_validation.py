"""The workflow's validation (medfc.config.validate.plan_for, the schema read once) completes every shipped
config exactly as snakemake.utils.validate(config, schema, set_default=True) did, and stops a bad one with the
one-line message naming the key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate as snakemake_validate

from medfc.config.validate import ConfigError, load_schema, plan_for

REPO = Path(__file__).resolve().parents[3]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
CONFIGS = [["config.yaml"], ["config.yaml", "paper.yaml"], ["live.yaml"], ["live.yaml", "paper.yaml"], ["cpu.yaml"], ["cpu.yaml", "cpu-finetuned.yaml"],
           ["cpu.yaml", "cpu-gbm-embeddings.yaml"], ["test.yaml"],
           ["test_experiments.yaml"], ["test_medsnip.yaml"], ["test_slurm_paper.yaml"]]


def _merged(names: list[str]) -> dict:
    """Snakemake's merge of --configfile files: mappings key by key, anything else replaced."""
    def merge(base, new):
        for k, v in new.items():
            base[k] = merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
        return base
    out: dict = {}
    for name in names:
        merge(out, yaml.safe_load((REPO / "config" / name).read_text(encoding="utf-8")) or {})
    return out


@pytest.mark.parametrize("names", CONFIGS, ids="+".join)
def test_every_default_is_filled_in_as_snakemake_does(names):
    config = _merged(names)
    theirs = copy.deepcopy(config)
    snakemake_validate(theirs, str(SCHEMA), set_default=True)
    plan_for(config, SCHEMA)
    assert config == theirs and config != _merged(names)  # the same completed mapping, and defaults were added


def test_the_schema_is_read_as_the_yaml_parser_reads_it():
    assert load_schema(SCHEMA) == yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))


def test_a_mistake_is_one_line_naming_the_key():
    config = _merged(["config.yaml"])
    config["stages"]["healthfcc"] = True
    with pytest.raises(ConfigError) as err:
        plan_for(config, SCHEMA)
    assert str(err.value).startswith("config: stages.healthfcc: unknown key; did you mean healthfc?")


@pytest.mark.parametrize("overlay", sorted(p.name for p in (REPO / "config").glob("cpu-*.yaml")))
def test_the_cpu_overlays_keep_every_row_of_cpu_yaml(overlay):
    """A later config file replaces a list, so an overlay restates cpu.yaml's model lists: each must hold every
    row of cpu.yaml's list, in its order (cpu-mpnet.yaml needs the optional install, so it is not planned above)."""
    base, extra = _merged(["cpu.yaml"])["models"], _merged([overlay])["models"]
    for dataset in ("healthfc", "clinifact"):
        for key, rows in extra.get(dataset, {}).items():
            kept = [r for r in rows if r in base[dataset][key]]
            assert kept == base[dataset][key], f"{overlay}: models.{dataset}.{key} drops or reorders cpu.yaml's rows"
