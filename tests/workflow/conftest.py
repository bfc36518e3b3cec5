"""One full demo run shared by the workflow tests that need every stage (experiments, the report)."""

from __future__ import annotations

import pytest

from tests.helpers.experiment_data import build_bert, build_gpt2
from tests.helpers.services import chromium_path, unavailable
from tests.helpers.workflow import WorkflowCopy

FULL_CONFIG = "config/test_experiments.yaml"


@pytest.fixture(scope="session")
def full_demo_run(tmp_path_factory) -> WorkflowCopy:
    """Every stage on the demo (HealthFC, CliniFact, experiments) with tiny random models built here:
    a tiny BERT for every discriminative system and a tiny causal LM for zero-shot CliniFact."""
    root = tmp_path_factory.mktemp("full")
    enc = build_bert(root / "models" / "tiny-encoder")  # a name no paper row matches: the reference rows are used
    lm = build_gpt2(root / "models" / "tiny-lm")
    wf = WorkflowCopy(root / "wf")
    wf.path("config/models.yaml").write_text(
        "stages: {healthfc: true, clinifact: true, experiments: true}\n"
        "models:\n"
        f"  aliases: {{tiny: '{enc}', tinylm: '{lm}'}}\n"
        "  clinifact: {discriminative: [tiny], zero_shot: [tinylm]}\n"
        "experiments:\n"
        "  clinifact:\n"
        "    zero_shot: {device: cpu, max_prompt_tokens: 1000, batch_size: 8}\n"
    )
    wf.args = ["--cores", "2", "--configfile", FULL_CONFIG, "config/models.yaml"]
    proc = wf.run(*wf.args, terminal=True)
    wf.terminal = proc.stdout + proc.stderr  # what a user's terminal showed (tests/workflow/test_results_folder.py)
    return wf


@pytest.fixture(scope="module")
def chromium() -> str:
    """Debian's Chromium for the browser tests (skips, or fails under MEDFC_REQUIRE_SERVICES=1, without it)."""
    path = chromium_path()
    if not path:
        unavailable("chromium is not installed")
    return path
