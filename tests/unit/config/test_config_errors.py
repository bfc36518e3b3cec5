"""A config mistake is one line naming the dotted key, what is wrong, the allowed keys and the closest."""

from __future__ import annotations

import pytest

from medfc.config.validate import config_error, load_schema
from tests.helpers.config import SCHEMA as SCHEMA_FILE, defaults

SCHEMA = load_schema(SCHEMA_FILE)


@pytest.mark.parametrize(("config", "expected"), [
    ({"bogus": 1}, "config: bogus: unknown key (allowed: cache_dir, results_dir, stages, cluster, healthfc, clinifact, datasets, models, experiments, scoring, medsnip)"),
    ({"experiments": {"healthfc": {"train": {"lrr": 1}}}}, "config: experiments.healthfc.train.lrr: unknown key; did you mean lr? (allowed: lr, "),
    ({"experiments": {"smoke": {"max_step": 2}}}, "config: experiments.smoke.max_step: unknown key; did you mean max_steps?"),
    ({"experiments": {"healthfc": {"model_train": {"minilm": {"epoch": 1}}}}}, "config: experiments.healthfc.model_train.minilm.epoch: unknown key; did you mean epochs?"),
    ({"experiments": {"healthfc": {"systems": ["pipline"]}}}, "config: experiments.healthfc.systems[0]: 'pipline' is not allowed; did you mean pipeline?"),
    ({"experiments": {"clinifact": {"train": {"lr": "fast"}}}}, "config: experiments.clinifact.train.lr: 'fast' is not of type 'number'"),
])
def test_the_first_mistake_in_one_line(config, expected):
    message = config_error(config, SCHEMA)
    assert message.startswith(expected) and "\n" not in message


def test_the_defaults_and_an_empty_config_are_valid():
    assert config_error({}, SCHEMA) is None
    assert config_error(defaults(), SCHEMA) is None
