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
    SENSITIVITY,
    SENSITIVITY_BASE,
    VIEW_LABELS,
    Protocol,
    choose,
    env_id_of,
    plays,
    principled_agents,
    scored,
    subsample,
)
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec

#: one cell of a stage: (family, regime, budgets, kind, agent, config, extra params)
CellSpec = tuple[str, str, Sequence[int], str, str, Any, dict[str, Any]]


def rl_configs(protocol: Protocol, family: str, algo: str = "PPO") -> list[dict[str, Any]]:
    """Return the RL configurations of ``family`` tried on validation (the tuning rule).

    The grid gamma x learning_rate x n_steps x ent_coef, over the arguments the
    algorithm takes (:data:`agents.rl.ALGORITHM_INFO`: DQN and QR-DQN gamma x
    learning_rate, TRPO without ent_coef; PPO, TRPO and RecurrentPPO with
    ``batch_size``), an empty ``learning_rate`` keeping the algorithm's default,
    subsampled to ``protocol.tuning`` configurations (:func:`.protocol.subsample`);
    RecurrentPPO's configurations carry its LSTM width (``protocol.lstm_hidden_size``).
    """
    from osfb_gym.bench.rl import algorithm_info

    info = algorithm_info(algo)
    values: dict[str, Sequence[Any]] = {
        "gamma": GAMMAS.get(family, [0.0, 0.99]),
        "learning_rate": protocol.learning_rate,
        "n_steps": protocol.n_steps,
        "ent_coef": protocol.ent_coef,
        "batch_size": (protocol.batch_size,),
    }
    axes = {key: values[key] for key in info.tunes if values[key]}  # () rates: the default
    grid = [dict(zip(axes, point, strict=True)) for point in itertools.product(*axes.values())]
    if info.recurrent:
        policy = {"policy_kwargs": {"lstm_hidden_size": protocol.lstm_hidden_size}}
        grid = [config | policy for config in grid]
    return subsample(grid, protocol.tuning, f"{family}/{algo}")


def principled_configs(protocol: Protocol, family: str, regime: str) -> list[tuple[str, Any]]:
    """Return (agent, configuration) pairs of the principled side, each grid subsampled."""
    pairs: list[tuple[str, Any]] = []
    for name, grid in principled_agents(family, regime).items():
        configs = [dict(zip(grid, v, strict=True)) for v in itertools.product(*grid.values())]
        pairs += [(name, c) for c in subsample(configs, protocol.tuning, f"{family}/{name}")]
    env_id = env_id_of(family, regime)
    return pairs + [(spec, {}) for spec in protocol.extra_agents if plays(spec, env_id)]


def setting(family: str, regime: str) -> str:
    """Return the env setting of a cell: the family's, or ``<family>-dynamic``."""
    return f"{family}-dynamic" if regime == "dynamic" else family


def _spec(protocol: Protocol, split: str, cells: list[CellSpec], seeds: int) -> SweepSpec:
    """Return the sweep of ``cells`` on ``split``.

    ``kind`` is ``rl`` (``agent`` reads ALGO+<view label>), ``principled`` or ``constant``.
    """
    agents, views = [], {label: view for view, label in VIEW_LABELS.items()}
    for family, regime, budgets, kind, agent, config, extra in cells:
        params = dict(regime=regime, split=split, budgets=list(budgets), episodes=protocol.episodes)
        if kind == "rl":
            agent, label = agent.split("+")
            params |= dict(algo=agent, view=views[label], algo_kwargs=config)
            services = family == "services"  # normalised rewards and stochastic evaluation
            params |= dict(normalize_reward=services, deterministic=not services)
            params |= {"n_envs": protocol.n_envs} if protocol.n_envs > 1 else {}
        elif kind in ("principled", "extra"):
            params |= dict(agent=agent, agent_params=config)
        runner = f"osfb_gym.bench.suites.experience:{kind}_cell"
        if kind == "extra":  # a user's agent runs as the principled agents do
            runner = runner.replace("extra", "principled")
        agents.append(
            AgentSpec(agent, params | extra, envs=(setting(family, regime),), runner=runner)
        )
    horizon = {"horizon": protocol.horizon}
    envs = []
    for family, regime in protocol.cells():
        env_id = env_id_of(family, regime)
        kwargs = dict(ENV_KWARGS.get(family, horizon))
        if regime == "dynamic" and family == "lending":
            kwargs = dict(horizon)
        envs.append(EnvSpec(env_id, setting(family, regime), kwargs))
    unique = tuple({env.label: env for env in envs}.values())
    return SweepSpec(NAME, unique, tuple(agents), tuple(range(seeds)))


def validation_spec(protocol: Protocol) -> SweepSpec:
    """Stage 1: every configuration of both sides at every budget, and the constants.

    RecurrentPPO's cells stop at ``protocol.recurrent_budget`` (:meth:`Protocol.budgets_of`).

    The split's runs choose each agent's configuration per budget (:func:`.protocol.choose`)
    and the best constant action; with ``sensitivity``, PPO's one-at-a-time runs too.
    """
    budgets = tuple(sorted(protocol.budgets))
    cells: list[CellSpec] = []
    for family, regime in protocol.cells():
        for algo in protocol.algos:
            capped = protocol.budgets_of(algo)
            for view in protocol.views_of(algo, regime) if capped else ():
                agent = f"{algo}+{VIEW_LABELS[view]}"
                configs = rl_configs(protocol, family, algo)
                cells += [(family, regime, capped, "rl", agent, c, {}) for c in configs]
        for name, config in principled_configs(protocol, family, regime):
            cells.append((family, regime, budgets, "principled", name, config, {}))
        cells.append((family, regime, budgets[:1], "constant", "constant", None, {}))
        if protocol.sensitivity:
            cells += sensitivity_cells(protocol, family, regime)
    return _spec(protocol, "validation", cells, protocol.validation_seeds)


def sensitivity_cells(protocol: Protocol, family: str, regime: str) -> list[CellSpec]:
    """PPO one-at-a-time around gamma's first value, lr 3e-4, n_steps 512, ent_coef 0."""
    base = {
        "gamma": GAMMAS.get(family, [0.0, 0.99])[0],
        **SENSITIVITY_BASE,
        "batch_size": protocol.batch_size,
    }
    configs = [base] + [
        base | {key: value}
        for key, values in SENSITIVITY.items()
        for value in values
        if value != base[key]
    ]
    budgets, purpose = tuple(sorted(protocol.budgets)), {"purpose": "sensitivity"}
    views = protocol.views_of("PPO", regime)
    return [
        (family, regime, budgets, "rl", f"PPO+{VIEW_LABELS[view]}", config, purpose)
        for view in views
        for config in configs
    ]


def sensitivity_spec(protocol: Protocol) -> SweepSpec:
    """``sensitivity=only``: PPO's sensitivity runs and the constant actions on validation.

    The same cells as :func:`validation_spec`'s (a store holds them for either); the
    constants normalise the table's regret.
    """
    budgets = tuple(sorted(protocol.budgets))
    cells: list[CellSpec] = []
    for family, regime in protocol.cells():
        cells += sensitivity_cells(protocol, family, regime)
        cells.append((family, regime, budgets[:1], "constant", "constant", None, {}))
    return _spec(protocol, "validation", cells, protocol.validation_seeds)


def test_spec(protocol: Protocol, chosen: pd.DataFrame) -> SweepSpec:
    """Stage 2: the chosen configurations on the test split, and the constant policies.

    Each is trained as on validation and scored at every budget up to the largest it
    was chosen at. An algorithm whose schedule spans the whole run (DQN's
    exploration: :attr:`agents.rl.AlgorithmInfo.planned`) trains to its largest
    budget, as its validation runs did, whatever budgets it was chosen at: trained
    to a smaller one, it would explore on another schedule than the one validated.
    """
    from osfb_gym.bench.rl import algorithm_info

    cells: list[CellSpec] = []
    keys = ["family", "regime", "kind", "agent", "config"]
    for (family, regime, kind, agent, config), picks in chosen.groupby(keys, sort=False):
        at = sorted(int(b) for b in picks["budget"])
        budgets = [b for b in sorted(protocol.budgets) if b <= at[-1]]
        algo = agent.split("+")[0]
        if kind == "rl" and algorithm_info(algo).planned:
            budgets = list(protocol.budgets_of(algo))
        extra = {} if at == budgets else {"chosen_at": at}
        cells.append((family, regime, budgets, kind, agent, json.loads(config), extra))
    for family, regime in protocol.cells():
        budgets = sorted(protocol.budgets)[:1]
        cells.append((family, regime, budgets, "constant", "constant", None, {}))
    return _spec(protocol, "test", cells, protocol.seeds)


def stages(protocol: Protocol) -> list[Stage]:
    """Return the validation stage, then the test stage of its chosen configurations.

    Each cell is a training run: one a task, so workers share them out. With
    ``sensitivity=only``, one stage: :func:`sensitivity_spec`.
    """
    if protocol.sensitivity == "only":
        return [Stage(sensitivity_spec(protocol), "sensitivity", chunk_size=1, work=env_steps)]
    chosen = lambda rows: choose(scored(rows[0]))  # noqa: E731
    return [
        Stage(validation_spec(protocol), "validation", chunk_size=1, work=env_steps),
        Stage(lambda rows: test_spec(protocol, chosen(rows)), "test", 1, env_steps),
    ]


def env_steps(params: dict[str, Any]) -> float:
    """Return the env steps a cell plays before its last checkpoint: its work for --dry-run."""
    return float(max(params.get("budgets") or [1]))


def report(rows: Sequence[pd.DataFrame], protocol: Protocol, run: RunInfo) -> Report:
    """Write the points, the page and the figures (:mod:`.analysis`) from both stages' rows.

    With ``sensitivity=only``, the sensitivity table's page from its one stage.
    """
    from osfb_gym.bench.suites.rl_vs_principled import analysis

    if protocol.sensitivity == "only":
        return analysis.sensitivity_report(rows[0], protocol, run.out)
    validation, test = rows
    return analysis.report(test, validation, protocol, run.out)
