"""A config mistake stops `snakemake -n` with one short message (the dotted key, what is wrong, the
allowed keys, the closest match) and exit status 1, not thousands of lines of schema."""

from __future__ import annotations

import pytest

from tests.helpers.workflow import WorkflowCopy

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def wf(tmp_path_factory) -> WorkflowCopy:
    return WorkflowCopy(tmp_path_factory.mktemp("config_errors") / "wf")


def _stops(wf: WorkflowCopy, *args: str) -> str:
    proc = wf.run("-n", "--cores", "1", *args, check=False)
    out = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1, out[-2000:]
    lines = [line for line in out.splitlines() if "workflow specific profile" not in line]
    assert 1 <= len(lines) <= 10, out[-2000:]
    return "\n".join(lines)


def test_an_unknown_top_level_key(wf):
    out = _stops(wf, "--config", "bogus=1")
    assert "config: bogus: unknown key (allowed: cache_dir, stages, cluster, healthfc, clinifact, models, experiments, scoring, medsnip)" in out


def test_a_misspelt_training_key_names_the_closest(wf):
    wf.path("config/typo.yaml").write_text("experiments:\n  healthfc:\n    train: {lrr: 1.0e-5}\n")
    out = _stops(wf, "--configfile", "config/typo.yaml")
    assert "config: experiments.healthfc.train.lrr: unknown key; did you mean lr? (allowed: lr, warmup_ratio," in out


def test_a_mistake_across_keys_is_one_message_too(wf):
    wf.path("config/ens.yaml").write_text("models:\n  ensembles:\n    pair: {members: [tfidf, nope]}\n")
    out = _stops(wf, "--configfile", "config/ens.yaml")
    assert "config: models.ensembles.pair.members ['nope'] are not in models.aliases" in out
