"""Does generic RL beat the principled agents? Equal experience, fair views, tuned, many seeds.

Two stages on the engine (custom cells of :mod:`osfb_gym.bench.experience`): every RL
configuration and principled grid value on validation worlds and seeds, then the
best of each on the test split with every constant action; the report is
:mod:`osfb_gym.bench.suites.rl_vs_principled_report` (protocol: docs/reproductions/
rl-vs-principled.md).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.report import Report, subset
from osfb_gym.bench.run import run_cells
from osfb_gym.bench.sweep import AgentSpec, EnvSpec, SweepSpec
from osfb_gym.core.family import FAMILIES

NAME = "rl-vs-principled"
VIEW_LABELS = {"plain": "O0", "features": "O1", "feedback": "O2"}
#: principled agents and their validation grids, per family
PRINCIPLED: dict[str, dict[str, dict[str, list[Any]]]] = {
    "lending": {"Greedy": {}, "Adaptive": {"rho": [0.0625, 0.25, 1.0]}},
    "apple": {
        "MarginPerceptron": {"m": [0.5, 2.0, 8.0]},
        "LabelEfficient": {"beta": [0.25, 1.0, 4.0]},
    },
    "reject": {"DSOL": {}, "DRAL": {}, "DSAL": {"gamma": [1.0, 2.0, 4.0]}},
    "services": {"AcQUIre": {}, "Uniform": {}, "MaxLossGreedy": {}},
}
#: RL's gammas: 0 where a decision's reward does not depend on later ones; reject's hidden
#: losses arrive at the episode's end, so its grid is with and without discount
GAMMAS = {"reject": [0.99, 1.0], "services": [0.99, 1.0]}
ENV_KWARGS = {"services": {"n_users": 40, "n_services": 5, "reference_restarts": 1}}


@dataclass(frozen=True)
class Protocol:
    """What a run covers; every field is a ``--set`` setting (lists comma-separated).

    RL gets the views ``fixed_views`` in the fixed world, ``resampled_views`` in the other.
    """

    #: the env families (lending, apple, reject, services); each adds about as much time
    families: tuple[str, ...] = ("lending", "reject")
    #: "fixed" (run s plays world s across its episodes) and/or "resampled" (a new world each)
    regimes: tuple[str, ...] = ("fixed", "resampled")
    #: what RL sees in the fixed regime (plain, features, feedback)
    fixed_views: tuple[str, ...] = ("plain",)
    #: what RL sees in the resampled regime (plain, features, feedback)
    resampled_views: tuple[str, ...] = ("plain", "features")
    #: the RL algorithms (PPO, A2C, DQN, RecurrentPPO)
    algos: tuple[str, ...] = ("PPO",)
    #: the checkpoints N: env steps of experience before every agent is scored
    budgets: tuple[int, ...] = (10_000, 30_000)
    #: test runs per cell (the --seeds flag)
    seeds: int = 5
    #: held-out episodes scored at each checkpoint of a run
    episodes: int = 20
    #: validation runs per configuration (the grids are chosen on them)
    validation_seeds: int = 1
    #: steps per episode (the --horizon flag)
    horizon: int = 200
    #: PPO's and A2C's rollout lengths on the RL grid
    n_steps: tuple[int, ...] = (512,)
    #: entropy coefficients on the RL grid
    ent_coef: tuple[float, ...] = (0.0,)
    #: PPO's minibatch size
    batch_size: int = 128


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
        runner = f"osfb_gym.bench.experience:{kind}_cell"
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


def scored(rows: pd.DataFrame) -> pd.DataFrame:
    """Return one row per (cell, checkpoint): the means over the scored episodes."""
    out = []
    for row in rows[rows["agent"] != "constant"].itertuples():  # the constants have no points
        params = json.loads(row.params)
        rl = "algo" in params
        agent = f"{params['algo']}+{VIEW_LABELS[params['view']]}" if rl else params["agent"]
        config = params.get("algo_kwargs", params.get("agent_params", {}))
        for point in row.points:
            out.append(
                {
                    "family": row.setting,
                    "regime": params["regime"],
                    "split": params["split"],
                    "agent": agent,
                    "kind": "rl" if rl else "principled",
                    "view": params.get("view", ""),
                    "config": json.dumps(config, sort_keys=True),
                    "seed": row.seed,
                    "budget": point["budget"],
                    **{k: float(np.mean(point[k])) for k in ("objective", "oracle", "regret")},
                    "train_regret": point["train_regret"],
                    "steps_per_episode": point["steps"],
                    **{k: v for k, v in point.items() if k.startswith("mean_")},
                }
            )
    return pd.DataFrame(out)


def choose(validation: pd.DataFrame) -> pd.DataFrame:
    """Return the best configuration per (family, regime, agent) on the validation regret."""
    keys = ["family", "regime", "agent"]
    last = validation[validation["budget"] == validation.groupby(keys)["budget"].transform("max")]
    means = last.groupby([*keys, "kind", "config"], as_index=False)["regret"].mean()
    return means.loc[means.groupby(keys)["regret"].idxmin()]


def test_spec(protocol: Protocol, chosen: pd.DataFrame) -> SweepSpec:
    """Stage 2: the chosen configurations on the test split, and the constant policies."""
    cells = [
        (pick.family, pick.regime, protocol.budgets, pick.kind, pick.agent, json.loads(pick.config))
        for pick in chosen.itertuples()
    ]
    for family, regime in itertools.product(protocol.families, protocol.regimes):
        cells.append((family, regime, protocol.budgets[:1], "constant", "constant", None))
    return _spec(protocol, "test", cells, protocol.seeds)


def run(
    suite: str | Protocol,
    out_dir: str | Path,
    *,
    seeds: int | Sequence[int] | None = None,
    horizon: int | None = None,
    data_home: str | None = None,
    **given: Any,
) -> Report:
    """Run both stages of ``suite`` (its name: the default protocol) into ``out_dir``; report.

    ``seeds``: runs per cell; ``data_home`` is unused.

    ``given``: fields of the :class:`Protocol` (the ``--set`` settings, checked by
    :func:`protocol`), the rest goes to :func:`run_cells`; cells run one per task
    (each is a training run).
    """
    from osfb_gym.bench.suites.rl_vs_principled_report import report

    fields = {key: given.pop(key) for key in list(given) if key in Protocol.__dataclass_fields__}
    runs = seeds if seeds is None or isinstance(seeds, int) else len(seeds)
    chosen = protocol(runs, horizon, None if isinstance(suite, str) else suite, **fields)
    out, engine = Path(out_dir), {"chunk_size": 1, **given}
    validation = run_cells(validation_spec(chosen), out, **engine)[0]
    test = run_cells(test_spec(chosen, choose(scored(validation))), out, **engine)[0]
    return report(test, validation, chosen, out)


def protocol(
    seeds: int | None = None,
    horizon: int | None = None,
    base: Protocol | None = None,
    **fields: Any,
) -> Protocol:
    """Return ``base`` (default: :class:`Protocol`) with ``fields``, ``seeds`` runs and ``horizon``.

    A name not among its choices (a family, regime, view or algorithm) raises naming them.
    """
    from osfb_gym.bench.experience import REGIMES
    from osfb_gym.bench.rl import ALGORITHMS

    views = dict.fromkeys(("fixed_views", "resampled_views"), tuple(VIEW_LABELS))
    choices = {"families": tuple(FAMILIES), "regimes": REGIMES, **views, "algos": ALGORITHMS}
    for key, valid in choices.items():
        subset(fields.get(key) or None, valid, f"--set {key}")
    fields |= {k: v for k, v in (("seeds", seeds), ("horizon", horizon)) if v is not None}
    changes: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    return replace(base or Protocol(), **changes)
