"""The snippets of docs/rl-training.md run as doctests, so the page cannot drift."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[3] / "docs" / "rl-training.md"


@pytest.mark.slow  # one snippet trains PPO: torch's first use alone takes seconds
def test_rl_training_page_runs():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0
