"""Test configuration: reproducible property tests on CI."""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from osfb_gym.data import sources
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


_open_url = sources._open_url


def _local_only(url: str) -> bytes:
    """Open ``url`` if it is on this machine (a test's own server), else fail as offline."""
    if urllib.parse.urlsplit(url).hostname in ("127.0.0.1", "localhost"):
        return _open_url(url)
    raise urllib.error.URLError(socket.gaierror(-2, f"no internet in tests: {url}"))


def _no_openml(data_id: int, data_home: Path) -> tuple[object, object]:
    raise urllib.error.URLError(socket.gaierror(-2, f"no internet in tests: OpenML {data_id}"))


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tests never download from the internet; a loader finding no local copy fails as offline.

    Downloads from a test's own HTTP server on 127.0.0.1 still go through.
    """
    monkeypatch.setattr(sources, "_open_url", _local_only)
    monkeypatch.setattr(sources, "fetch_openml_frame", _no_openml)
    yield
