"""Equal-experience cells: what an agent scores after N env steps, and the regret it paid.

Custom cells of the engine (:attr:`osfb_gym.bench.sweep.AgentSpec.runner`) for
``rl-vs-principled``, each one training or warm-up run scored at checkpoints of
experience ``N`` (``params["budgets"]``, and 0): :func:`rl_cell` trains an SB3
algorithm, :func:`principled_cell` lets a principled agent play N steps (keeping
its state across episodes in a fixed world), :func:`constant_cell` scores every
constant action. Regimes (``"fixed"``: run ``s`` plays one world, ``"resampled"``),
splits (``"validation"``, ``"test"``) and scores: docs/reproductions/rl-vs-principled.md.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.base import Agent
from osfb_gym.bench.sweep import Cell, make_agent
from osfb_gym.core.family import Family, family_of
from osfb_gym.runner import evaluate, run_episode

#: "dynamic": a world with consequences (its own env id), played as a fixed world
REGIMES = ("fixed", "resampled", "dynamic")
SPLITS = ("test", "validation")
#: fixed worlds: run s of a split plays world_seed = WORLD_BASE[split] + s
WORLD_BASE = {"test": 0, "validation": 1_000}
#: reset seeds of the scored episodes of each split (the same for every agent; run s
#: scores episodes base + s * episodes ..)
EPISODE_BASE = {"test": 10_000, "validation": 20_000}
#: reset seeds of training / warm-up episodes of run s start at TRAIN_BASE + s * TRAIN_STRIDE
TRAIN_BASE, TRAIN_STRIDE = 100_000, 10_000
#: most constant actions a space may have for the constant baseline
MAX_CONSTANTS = 64


def regret(family: Family, metrics: dict[str, float]) -> float:
    """Return an episode's regret against the best policy the oracle exposes.

    ``objective - oracle`` (:func:`oracle_value`), times the steps where the
    objective is a per-step average (reject), signed so that lower is better.
    """
    value = float(metrics[family.objective]) - oracle_value(family, metrics)
    value *= metrics["steps"] if family.objective_per_step else 1.0
    return value if family.lower_is_better else -value


def oracle_value(family: Family, metrics: dict[str, float]) -> float:
    """Return the objective of the best policy the oracle exposes, in the objective's units.

    The family's ``oracle_objective_metric`` (reject: Chow's rule's risk; apple:
    the Bayes decision's loss); 0 where it names none (lending: the Bayes
    decision has no one-sided loss) or the world does not define it (apple on
    a dataset: a lower bound).
    """
    metric = family.oracle_objective_metric
    value = float(metrics.get(metric, np.nan)) if metric is not None else 0.0
    return 0.0 if np.isnan(value) else value


def world(cell: Cell) -> dict[str, Any]:
    """Return the env arguments of ``cell``'s run: its fixed world, or resampled worlds."""
    regime, split = cell.params["regime"], cell.params["split"]
    if regime not in REGIMES or split not in SPLITS:
        raise ValueError(
            f"regime must be one of {REGIMES} and split one of {SPLITS}; got {regime!r}, {split!r}"
        )
    if regime == "dynamic" and not _takes_world_seed(cell.env_id):
        return dict(cell.env_kwargs)  # its world is drawn at each reset, from the reset seed
    seed = WORLD_BASE[split] + cell.seed if regime != "resampled" else None
    return {**cell.env_kwargs, "world_seed": seed}


def _takes_world_seed(env_id: str) -> bool:
    """Return whether ``env_id``'s constructor takes ``world_seed`` (a fixed world)."""
    import inspect

    entry = gym.spec(env_id).entry_point
    cls = gym.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry
    return callable(cls) and "world_seed" in inspect.signature(cls).parameters


def episode_seeds(cell: Cell) -> list[int]:
    """Return the reset seeds of run ``cell.seed``'s scored episodes (the same for every agent)."""
    episodes = int(cell.params["episodes"])
    base = EPISODE_BASE[cell.params["split"]] + cell.seed * episodes
    return list(range(base, base + episodes))


def _checkpoints(cell: Cell) -> list[int]:
    budgets = sorted(int(b) for b in cell.params["budgets"])
    if not budgets or budgets[0] < 1:
        raise ValueError(f"budgets must be positive env step counts, got {budgets}")
    return [0, *budgets]


def _point(
    family: Family, budget: int, frames: list[dict[str, float]], paid: float, episodes: int
) -> dict[str, Any]:
    return {
        "budget": budget,
        "objective": [float(m[family.objective]) for m in frames],
        # the objective of the oracle's policy: Chow's rule for reject, Bayes for apple, else 0
        "oracle": [oracle_value(family, m) for m in frames],
        "regret": [regret(family, m) for m in frames],
        "steps": float(np.mean([m["steps"] for m in frames])),
        "train_regret": paid,
        "train_episodes": episodes,
        **{
            f"mean_{c}": float(np.mean([m[c] for m in frames]))
            for c in family.columns
            if c in frames[0]
        },
    }


def rl_cell(cell: Cell) -> dict[str, Any]:
    """Train ``params["algo"]`` with regret accounting; score it at every checkpoint."""
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.rl import SB3Agent
    from osfb_gym.bench.rl import train
    from osfb_gym.wrappers import apply_view

    params, family = cell.params, family_of(cell.env_id)
    kwargs, seeds = world(cell), episode_seeds(cell)
    view, budgets = params.get("view", "plain"), _checkpoints(cell)
    paid: list[float] = []
    points: list[dict[str, Any]] = []

    def score(model: Any, budget: int) -> None:
        env = gym.make(cell.env_id, **kwargs)
        agent = SB3Agent(model, deterministic=bool(params.get("deterministic", True)))
        frame = evaluate(env if view == "plain" else apply_view(env, view), agent, seeds)
        points.append(_point(family, budget, frame.to_dict("records"), float(sum(paid)), len(paid)))

    class Checkpoints(BaseCallback):
        def _on_training_start(self) -> None:
            score(self.model, 0)  # the initial policy: no experience yet

        def _on_step(self) -> bool:
            while len(points) < len(budgets) and self.num_timesteps >= budgets[len(points)]:
                score(self.model, budgets[len(points)])
            return True

    train(
        cell.env_id,
        params["algo"],
        total_timesteps=budgets[-1],
        env_kwargs=kwargs,
        seed=TRAIN_BASE + TRAIN_STRIDE * cell.seed,
        algo_kwargs=dict(params["algo_kwargs"]),
        n_envs=int(params.get("n_envs", 1)),
        torch_threads=1,
        view=view,
        normalize_reward=bool(params.get("normalize_reward")),
        callback=Checkpoints(),
        on_episode=lambda metrics: paid.append(regret(family, metrics)),
    )
    return {"points": points, "family": family.name}


def principled_cell(cell: Cell) -> dict[str, Any]:
    """Run a principled agent for N env steps of training episodes; score it at each checkpoint."""
    params, family = cell.params, family_of(cell.env_id)
    kwargs, seeds = world(cell), episode_seeds(cell)
    agent = _agent(params["agent"], dict(params.get("agent_params", {})))
    env = gym.make(cell.env_id, **kwargs)
    fixed = params["regime"] != "resampled"
    train_seeds = itertools.count(TRAIN_BASE + TRAIN_STRIDE * cell.seed)
    player, steps, paid, episodes = agent.clone(), 0, 0.0, 0
    points = []
    for budget in _checkpoints(cell):
        while steps < budget:
            if not fixed:
                player = agent.clone()
            trajectory = run_episode(
                env, player, next(train_seeds), reset_agent=not fixed or episodes == 0
            )
            steps += trajectory.rewards.size
            paid += regret(family, trajectory.metrics)
            episodes += 1
        frames = []
        for seed in seeds:
            if fixed and episodes:  # every test episode starts from the state after N steps
                frames.append(
                    run_episode(env, copy.deepcopy(player), seed, reset_agent=False).metrics
                )
            else:
                frames.append(run_episode(env, agent.clone(), seed).metrics)
        points.append(_point(family, budget, frames, paid, episodes))
    env.close()
    return {"points": points, "family": family.name}


def _agent(name: str, params: dict[str, Any]) -> Agent:
    """Build agent ``name``: a class name under ``agents``, or a user's ``module:Class``."""
    if ":" not in name:
        return make_agent(name, params)
    import importlib

    module, _, attribute = name.partition(":")
    cls = getattr(importlib.import_module(module), attribute, None)
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise TypeError(f"agent {name!r} is not an agents.base.Agent subclass")
    return cls(**params)


class ConstantAgent(Agent):
    """Take the same action at every step (the constant policies of the baseline)."""

    def __init__(self, action: Any = 0) -> None:
        self.action = action

    def act(self, observation: Any) -> Any:
        """Return the constant action, shaped for the env's action space."""
        space = self.action_space_
        if isinstance(space, spaces.Discrete):
            return int(self.action)
        return np.asarray(self.action, dtype=space.dtype).reshape(space.shape)


def constant_actions(space: gym.Space) -> list[Any]:
    """Return every constant action of a finite action space (JSON-friendly values)."""
    if isinstance(space, spaces.Discrete):
        actions: list[Any] = list(range(int(space.start), int(space.start) + int(space.n)))
    elif isinstance(space, spaces.MultiBinary):
        size = int(np.prod(space.shape))
        # a constant per applicant position is no better than the same decision for all
        actions = [[0] * size, [1] * size]
    elif isinstance(space, spaces.MultiDiscrete):
        actions = [list(a) for a in itertools.product(*(range(int(n)) for n in space.nvec))]
    else:
        raise ValueError(f"no constant baseline for action space {space}")
    if len(actions) > MAX_CONSTANTS:
        raise ValueError(
            f"the action space {space} has {len(actions)} constant actions (more than "
            f"{MAX_CONSTANTS}); use a smaller env (e.g. fewer users) for the constant baseline"
        )
    return actions


def constant_cell(cell: Cell) -> dict[str, Any]:
    """Score every constant action on the cell's test episodes."""
    family = family_of(cell.env_id)
    env = gym.make(cell.env_id, **world(cell))
    seeds = episode_seeds(cell)
    rows = []
    for action in constant_actions(env.action_space):
        frame = evaluate(env, ConstantAgent(action), seeds).to_dict("records")
        rows.append({"action": action, **_point(family, 0, frame, 0.0, 0)})
    env.close()
    return {"constants": rows, "family": family.name}
