"""The crawl's mirror in the workflow: a configured mirror_dir that is missing stops the run naming the key."""

import pytest

from tests.helpers.workflow import WorkflowCopy

pytestmark = pytest.mark.workflow


@pytest.mark.parametrize("mirror", ["nowhere", "empty"])
def test_a_missing_mirror_dir_stops_the_run_even_with_an_old_crawl(mirror, tmp_path):
    wf = WorkflowCopy(tmp_path / "wf")
    wf.path("empty").mkdir()
    for name in ("pages.jsonl.gz", "stats.json"):  # the outputs of an earlier crawl
        out = wf.path(f"results/healthfc/crawl/{name}")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(b"")
    proc = wf.run("-n", "--configfile", "config/test.yaml", "--config", f"healthfc={{'crawl': {{'mirror_dir': '{mirror}'}}}}", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"healthfc.crawl.mirror_dir {mirror!r}" in out
