"""Test-session set-up shared by every test folder: how pytest-xdist shares the work out.

The README's command runs the suite on two pytest-xdist workers (``-n 2 --dist loadscope`` in
pyproject.toml) with the scheduler below: every test is in a group that one worker runs whole, so that a
module's fixtures are built once: the workflow modules that use the shared full demo run
(``full_demo_run``, session-scoped) are one group, every other module a group of its own. (xdist's own
``loadgroup`` reads the ``xdist_group`` marks into the node ids, which pytest 9 does not take: each
test would go to whichever worker was free, and a module fixture such as the SLURM run or the paper
miniature would be built on both workers.) The groups start heaviest first (the shared demo run with its
users, the SLURM run of its plan among them; the paper miniature; the MedSNIP run; the other workflow
runs, then the unit tests), so that the long runs overlap instead of queueing at the end. With ``-n 0``
(one process, no workers) the scheduler is not used and the order is the same.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers.model_cache import tests_cache

# the Snakemake runs of the tests keep the steps' code versions (medfc.common.codeversion.user_cache_dir) beside
# the tests' other caches, not in the user's cache folder
os.environ.setdefault("MEDFC_CODEVERSION_CACHE", str(tests_cache() / "codeversion"))

SHARED = "full_demo_run"
# the modules that use the shared run: listed here because xdist's scheduler sees node ids only; the
# collection hook below stops the session when a module uses the fixture without being listed
SHARED_MODULES = frozenset({
    "tests/workflow/test_clinifact_demo.py",
    "tests/workflow/test_code_versions.py",
    "tests/workflow/test_example_tables.py",
    "tests/workflow/test_error_browser.py",
    "tests/workflow/test_experiments.py",
    "tests/workflow/test_healthfc_demo.py",
    "tests/workflow/test_latex_outputs.py",
    "tests/workflow/test_outputs_for_tools.py",
    "tests/workflow/test_report_browser.py",
    "tests/workflow/test_results_folder.py",
    "tests/workflow/test_run_folders.py",
    "tests/workflow/test_shared_runs.py",
    "tests/workflow/test_slurm.py",
})
HEAVY_FIRST = [SHARED, "tests/workflow/test_paper_miniature.py", "tests/workflow/test_chaos.py", "tests/workflow/test_medsnip.py"]


def group_of(nodeid: str) -> str:
    """The group of a test: the shared run's, or its module's."""
    module = nodeid.split("::", 1)[0]
    return SHARED if module in SHARED_MODULES else module


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    using = {item.nodeid.split("::", 1)[0] for item in items if SHARED in getattr(item, "fixturenames", ())}
    if not using <= SHARED_MODULES:
        raise pytest.UsageError(f"tests/conftest.py: add {sorted(using - SHARED_MODULES)} to SHARED_MODULES "
                                f"(they use {SHARED}; otherwise both workers build it)")

    def rank(item: pytest.Item) -> tuple[int, int]:
        group = group_of(item.nodeid)
        if group in HEAVY_FIRST:
            return (HEAVY_FIRST.index(group), 0)
        return (len(HEAVY_FIRST), 0 if group.startswith("tests/workflow/") else 1)

    items.sort(key=rank)  # stable: the order inside each group is the collection's
