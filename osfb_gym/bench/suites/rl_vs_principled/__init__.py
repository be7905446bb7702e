"""Does generic RL beat the principled agents? Equal experience, fair views, tuned, many seeds.

Two stages on the engine (custom cells of :mod:`osfb_gym.bench.suites.experience`): every RL
configuration and principled grid value on validation worlds and seeds, then the
best of each on the test split with every constant action; the report is
:mod:`osfb_gym.bench.suites.rl_vs_principled.analysis` (protocol: docs/reproductions/
rl-vs-principled.md).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pandas as pd

from osfb_gym.bench.driver import RunInfo, Stage
from osfb_gym.bench.report import Report
from osfb_gym.bench.suites.rl_vs_principled.protocol import (
    ENV_KWARGS,
    GAMMAS,
    NAME,
    PRINCIPLED,
    VIEW_LABELS,
    Protocol,
    choose,
    scored,
)
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.core.family import FAMILIES


def rl_configs(protocol: Protocol, family: str, algo: str = "PPO") -> list[dict[str, Any]]:
    """Return the RL grid of ``family``: gamma x n_steps x ent_coef (DQN: gamma only)."""
    gammas = [{"gamma": gamma} for gamma in GAMMAS.get(family, [0.0, 0.99])]
    if algo == "DQN":
        return gammas
    batch = {} if algo == "A2C" else {"batch_size": protocol.batch_size}
    grid = itertools.product(gammas, protocol.n_steps, protocol.ent_coef)
    return [{**gamma, "n_steps": n, "ent_coef": ent, **batch} for gamma, n, ent in grid]


def _spec(protocol: Protocol, split: str, cells: list[tuple[Any, ...]], seeds: int) -> SweepSpec:
    """Return the sweep of ``cells`` on ``split``: (family, regime, budgets, kind, agent, config).

    ``kind`` is ``rl`` (``agent`` reads ALGO+<view label>), ``principled`` or ``constant``.
    """
    agents, views = [], {label: view for view, label in VIEW_LABELS.items()}
    for family, regime, budgets, kind, agent, config in cells:
        params = dict(regime=regime, split=split, budgets=list(budgets), episodes=protocol.episodes)
        if kind == "rl":
            agent, label = agent.split("+")
            params |= dict(algo=agent, view=views[label], algo_kwargs=config)
            services = family == "services"  # normalised rewards and stochastic evaluation
            params |= dict(normalize_reward=services, deterministic=not services)
        elif kind == "principled":
            params |= dict(agent=agent, agent_params=config)
        runner = f"osfb_gym.bench.suites.experience:{kind}_cell"
        agents.append(AgentSpec(agent, params, envs=(family,), runner=runner))
    horizon = {"horizon": protocol.horizon}
    envs = [
        EnvSpec(FAMILIES[f].env_id, f, dict(ENV_KWARGS.get(f, horizon))) for f in protocol.families
    ]
    return SweepSpec(NAME, tuple(envs), tuple(agents), tuple(range(seeds)))


def validation_spec(protocol: Protocol) -> SweepSpec:
    """Stage 1: RL at the smallest budget, principled grids at the largest, validation split."""
    cells = []
    for family, regime in itertools.product(protocol.families, protocol.regimes):
        for view, algo in itertools.product(getattr(protocol, f"{regime}_views"), protocol.algos):
            configs = rl_configs(protocol, family, algo)
            agent = f"{algo}+{VIEW_LABELS[view]}"
            cells += [(family, regime, protocol.budgets[:1], "rl", agent, c) for c in configs]
        for name, grid in PRINCIPLED[family].items():
            for values in itertools.product(*grid.values()):
                config = dict(zip(grid, values, strict=True))
                cells.append((family, regime, protocol.budgets[-1:], "principled", name, config))
    return _spec(protocol, "validation", cells, protocol.validation_seeds)


def test_spec(protocol: Protocol, chosen: pd.DataFrame) -> SweepSpec:
    """Stage 2: the chosen configurations on the test split, and the constant policies."""
    cells = [
        (pick.family, pick.regime, protocol.budgets, pick.kind, pick.agent, json.loads(pick.config))
        for pick in chosen.itertuples()
    ]
    for family, regime in itertools.product(protocol.families, protocol.regimes):
        cells.append((family, regime, protocol.budgets[:1], "constant", "constant", None))
    return _spec(protocol, "test", cells, protocol.seeds)


def stages(protocol: Protocol) -> list[Stage]:
    """Return the validation stage, then the test stage of its chosen configurations.

    Each cell is a training run: one a task, so workers share them out.
    """
    chosen = lambda rows: choose(scored(rows[0]))  # noqa: E731
    return [
        Stage(validation_spec(protocol), chunk_size=1),
        Stage(lambda rows: test_spec(protocol, chosen(rows)), chunk_size=1),
    ]


def report(rows: Sequence[pd.DataFrame], protocol: Protocol, run: RunInfo) -> Report:
    """Write the points, the page and the figures (:mod:`.analysis`) from both stages' rows."""
    from osfb_gym.bench.suites.rl_vs_principled.analysis import report as write_report

    validation, test = rows
    return write_report(test, validation, protocol, run.out)
