"""The benchmark: sweeps of envs x agents x grids x seeds, a result store, executors, tables.

The names below are imported on first use, so ``import osfb_gym.bench`` (and
``osfb-bench --help``) loads neither pandas nor the agents.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "SuiteResult": "run",
    "run_suite": "run",
    "run_sweep": "run",
    "ResultStore": "store",
    "SUITES": "suites.quick",
    "get_suite": "suites.quick",
    "AgentSpec": "sweep",
    "Cell": "sweep",
    "EnvSpec": "sweep",
    "SweepSpec": "sweep",
    "load_spec": "sweep",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'osfb_gym.bench' has no attribute {name!r}")
    return getattr(importlib.import_module(f"osfb_gym.bench.{_HOMES[name]}"), name)
