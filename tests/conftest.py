"""Test configuration: reproducible property tests on CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import osfb_data as _osfb_data
from tests.helpers import skip_reason

# Locally hypothesis explores new examples each run; on CI the examples are
# derived from the test itself, so a green run stays green on a re-run.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def osfb_data() -> Path:
    """The directory of real dataset copies named by ``$OSFB_DATA``; skips when it is unset."""
    root = _osfb_data()
    if root is None:
        pytest.skip(skip_reason())
    return root
