"""Built-in benchmark suites: which envs, which agents, how many seeds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.base import Agent
from agents.lending import Adaptive, Greedy


@dataclass(frozen=True)
class Cell:
    """One environment setting of a suite, with the agents that run on it.

    Attributes
    ----------
    label
        Name of the setting in tables and plots.
    env_id
        The Gymnasium id.
    env_kwargs
        Keyword arguments for ``gym.make``.
    agents
        Factories of the agents to compare (a fresh agent per seed).
    """

    label: str
    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    agents: tuple[Callable[[], Agent], ...] = ()


@dataclass(frozen=True)
class Suite:
    """A named list of cells and the seeds each agent runs on."""

    name: str
    description: str
    cells: tuple[Cell, ...]
    seeds: tuple[int, ...] = tuple(range(10))


LENDING_AGENTS = (Greedy, Adaptive)

SUITES: dict[str, Suite] = {
    "quick": Suite(
        name="quick",
        description=(
            "Greedy and Adaptive on OneSidedLending-v0: the default logistic world and "
            "the greedy trap of Theorem 1; 10 seeds."
        ),
        cells=(
            Cell("lending default (logistic)", "OneSidedLending-v0", {}, LENDING_AGENTS),
            Cell(
                "lending greedy trap (logistic)",
                "OneSidedLending-v0",
                {"scenario": "greedy_trap"},
                LENDING_AGENTS,
            ),
        ),
    ),
}


def get_suite(name: str) -> Suite:
    """Return the built-in suite called ``name``, or raise naming the choices."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; choose one of {', '.join(sorted(SUITES))}")
    return SUITES[name]
