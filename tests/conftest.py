"""Test-session set-up shared by every test folder: how pytest-xdist shares the work out.

The README's command runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup`` in
pyproject.toml). Session and module fixtures run once per worker, so every test is put in a group
(``xdist_group``) that one worker runs whole: the workflow modules that use the shared full demo run
(``full_demo_run``) in one group, every other module in its own. The groups start heaviest first (the
SLURM run, the paper miniature, the MedSNIP run, the shared demo run and its users, the other workflow
runs, then the unit tests), so that the long runs overlap instead of queueing at the end. With ``-n 0``
(one process, no workers) the marks do nothing and the order is the same.
"""

from __future__ import annotations

import pytest

SHARED = "full_demo_run"
HEAVY_FIRST = ["tests/workflow/test_slurm.py", "tests/workflow/test_paper_miniature.py", "tests/workflow/test_medsnip.py", SHARED]


def _group(item: pytest.Item, shared_modules: set[str]) -> str:
    module = item.nodeid.split("::", 1)[0]
    return SHARED if module in shared_modules else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    shared_modules = {item.nodeid.split("::", 1)[0] for item in items if SHARED in getattr(item, "fixturenames", ())}
    groups = {id(item): _group(item, shared_modules) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))

    def rank(item: pytest.Item) -> tuple[int, int]:
        group = groups[id(item)]
        if group in HEAVY_FIRST:
            return (HEAVY_FIRST.index(group), 0)
        return (len(HEAVY_FIRST), 0 if group.startswith("tests/workflow/") else 1)

    items.sort(key=rank)  # stable: the order inside each group is the collection's
