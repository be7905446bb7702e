"""The benchmark: sweeps of envs x agents x grids x seeds, a result store, executors, tables.

Every built-in suite (:mod:`osfb_gym.bench.suites`) is settings + stages + a report,
run by one driver (:mod:`osfb_gym.bench.driver`).

The names below are imported on first use, so ``import osfb_gym.bench`` (and
``osfb-bench --help``) loads neither pandas nor the agents.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "driver": ("RunOptions", "Stage", "Suite"),
    "report": ("Report",),
    "store": ("ResultStore",),
    "suites": ("SUITES",),
    "suites.family_page": ("run_sweep",),
    "suites.quick": ("QUICK",),
    "sweep": ("AgentSpec", "Cell", "EnvSpec", "SweepSpec", "load_spec"),
}
_HOMES = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'osfb_gym.bench' has no attribute {name!r}")
    return getattr(importlib.import_module(f"osfb_gym.bench.{_HOMES[name]}"), name)
