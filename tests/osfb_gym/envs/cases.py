"""Environment cases every generic test runs on: each registered id, plus variants.

A new id in ``envs_registry.ENVS`` is covered automatically; list here the
keyword variants whose code paths differ (links, scenarios, feedback modes).
"""

from __future__ import annotations

from typing import Any

from envs_registry import env_ids

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("OneSidedLending-v0", {"batch_size": 4, "horizon": 30}),
    ("OneSidedLending-v0", {"link": "linear", "batch_size": 3, "horizon": 30}),
    ("OneSidedLending-v0", {"scenario": "greedy_trap", "batch_size": 5, "horizon": 30}),
    ("OneSidedLending-v0", {"link": "linear", "scenario": "greedy_trap", "horizon": 30}),
    ("OneSidedLending-v0", {"feedback": "full", "batch_size": 3, "horizon": 30}),
    ("OneSidedLending-v0", {"world_seed": 5, "dim": 2, "warm_start": 0, "horizon": 30}),
]

CASES: list[tuple[str, dict[str, Any]]] = [(env_id, {}) for env_id in env_ids()] + VARIANTS


def case_id(case: tuple[str, dict[str, Any]]) -> str:
    env_id, kwargs = case
    return env_id + "".join(f"-{key}={value}" for key, value in kwargs.items())
