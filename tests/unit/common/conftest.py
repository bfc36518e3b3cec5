"""Fixtures of this folder."""

import logging

import pytest


@pytest.fixture
def root_logging():
    """The root logger's handlers and level as they were before the test (setup_logging replaces them)."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    yield
    for h in root.handlers:
        if h not in saved[0]:
            h.close()
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
