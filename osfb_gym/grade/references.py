"""The grader's yardsticks: the references, the policies that learn nothing, full information.

The reference agents, the constant policies and the references shown every
outcome run in the grader's process on the very worlds and seeds the submission ran on.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd

from agents.base import Agent
from osfb_gym.core.family import Family
from osfb_gym.grade import cache as _cache
from osfb_gym.grade.integrity import implausible
from osfb_gym.runner import Trajectory, evaluate


def evaluate_worlds(
    env_id: str, agent: Agent, seeds: Sequence[int], worlds: Sequence[dict[str, Any]], **extra: Any
) -> list[Trajectory]:
    """Run ``agent`` one episode per seed, each in its world (``extra`` on top).

    Consecutive episodes given the same world (the same dict) share one env.
    """
    trajectories: list[Trajectory] = []
    env: gym.Env[Any, Any] | None = None
    current: dict[str, Any] | None = None
    try:
        for seed, world in zip(seeds, worlds, strict=True):
            if env is None or world is not current:
                if env is not None:
                    env.close()
                env, current = gym.make(env_id, **{**world, **extra}), world
            _, runs = evaluate(env, agent, [seed], return_trajectories=True)
            trajectories += runs
    finally:
        if env is not None:
            env.close()
    return trajectories


def reference_agent(spec: str) -> Agent:
    """Build the reference agent named ``module:Class`` with its defaults."""
    module, name = spec.split(":")
    agent: Agent = getattr(importlib.import_module(module), name)()
    return agent


# ---------------------------------------------------------------------------- constant policies
class ConstantPolicy(Agent):
    """Play the same action every step and learn nothing: the floor a learner must clear.

    ``value`` fills the action space: a 0/1 per applicant (``MultiBinary``),
    an int (``Discrete``) or one entry per component (``MultiDiscrete``).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("OneSidedLending-v0", horizon=3, batch_size=2)
    >>> run_episode(env, ConstantPolicy(value=0), seed=0).actions.tolist()
    [[0, 0], [0, 0], [0, 0]]
    """

    abstract = True  # a yardstick of the grader, not an agent to benchmark

    def __init__(self, value: int | tuple[int, ...] = 0) -> None:
        self.value = value

    def act(self, observation: Any) -> Any:  # noqa: D102
        space = self.action_space_
        if isinstance(space, gym.spaces.Discrete):
            return int(self.value)  # type: ignore[arg-type]
        return np.broadcast_to(np.asarray(self.value, dtype=space.dtype), space.shape or ()).copy()

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:  # noqa: D102
        return None


#: per family, the policies that learn nothing, by name: a submission doing worse than one
#: of them gets a hint (services: every service at one user is a single service)
CONSTANT_POLICIES: dict[str, dict[str, int | tuple[int, ...]]] = {
    "lending": {"deny everyone": 0, "approve everyone": 1},
    "apple": {"never taste": 0, "always taste": 1},
    "reject": {
        "reject everything": (1, 0),
        "always predict -1": (0, 0),
        "always predict +1": (2, 0),
    },
    "services": {"always ask user 0": 0},
}


def episode_rows(label: str, trajectories: Sequence[Trajectory]) -> list[dict[str, Any]]:
    """Return one results row per episode: ``seed``, ``agent`` (``label``), the metrics."""
    return [{"seed": t.seed, "agent": label, **t.metrics} for t in trajectories]


def mean_curve(runs: Sequence[np.ndarray]) -> np.ndarray:
    """Return the mean of per-step curves over episodes, cut to the shortest."""
    length = min(run.size for run in runs)
    return np.mean([run[:length] for run in runs], axis=0)


def run_agents(
    env_id: str,
    agents: dict[str, Agent],
    seeds: Sequence[int],
    worlds: Sequence[dict[str, Any]],
    folder: Path | None,
) -> tuple[dict[str, Any], Path | None]:
    """Run ``agents`` (by label) on ``seeds`` in ``worlds``; cache in ``folder`` (None: none).

    The cache is used only when every episode has the same, public world
    (:func:`grade` passes None otherwise).

    Returns, per label, the episode rows and the mean curve R_t/t, and the
    cache file they were read from (None when they ran).
    """
    key = ""
    if folder is not None:
        specs = [f"{label}={agent!r}" for label, agent in agents.items()]
        key = _cache.entry_key(env_id, worlds[0], seeds, specs)
        entry = _cache.load(folder, key)
        if entry is not None and set(entry["agents"]) == set(agents):
            return {
                label: {"rows": value["rows"], "curve": np.asarray(value["curve"], dtype=float)}
                for label, value in entry["agents"].items()
            }, folder / f"{key}.json"
    scored: dict[str, Any] = {}
    for label, agent in agents.items():
        trajectories = evaluate_worlds(env_id, agent, seeds, worlds)
        scored[label] = {
            "rows": episode_rows(label, trajectories),
            "curve": mean_curve([t.average_loss for t in trajectories]),
        }
    if folder is not None:
        _cache.store(folder, key, scored)
    return scored, None


def run_baselines(
    env_id: str,
    results: pd.DataFrame,
    comparisons: pd.DataFrame,
    yours: str,
    family: Family,
    seeds: Sequence[int],
    worlds: Sequence[dict[str, Any]],
    folder: Path | None,
) -> pd.DataFrame:
    """Run the family's constant policies on ``seeds`` in ``worlds`` until one beats ``yours``.

    None runs for a submission whose mean is at least every reference's (the
    references are then the bar it clears); the policies run in
    :data:`CONSTANT_POLICIES` order and stop at the first that does better
    than the submission, which is all the hint needs.
    """
    rows: list[dict[str, Any]] = []
    sign = 1.0 if family.lower_is_better else -1.0
    # advice, not a verdict: any reference with a better mean makes the floor worth showing
    if not (sign * comparisons["mean_difference"] > 0).any():
        return pd.DataFrame(rows, columns=["seed", "agent", family.objective])
    mine = float(results.loc[results["agent"] == yours, family.objective].mean())
    for name, value in CONSTANT_POLICIES.get(family.name, {}).items():
        policy = {name: ConstantPolicy(value=value)}
        scored, _ = run_agents(env_id, policy, seeds, worlds, folder)
        rows += scored[name]["rows"]
        theirs = float(np.mean([row[family.objective] for row in scored[name]["rows"]]))
        if sign * (mine - theirs) > 0:
            break
    return pd.DataFrame(rows)


def flag_implausible(
    results: pd.DataFrame,
    label: str,
    env_id: str,
    worlds: Sequence[dict[str, Any]],
    seeds: Sequence[int],
    family: Family,
) -> list[str]:
    """Compare a submission that beats every reference with the references shown every outcome.

    :func:`osfb_gym.grade.integrity.implausible` on the same worlds and
    seeds; run only when the submission beats every reference on average,
    and only for families with a ``feedback="full"`` mode.
    """
    table = results.pivot_table(index="seed", columns="agent", values=family.objective)
    sign = 1.0 if family.lower_is_better else -1.0
    others = [agent for agent in table.columns if agent != label]
    if not others or not all(
        sign * table[label].mean() < sign * table[other].mean() for other in others
    ):
        return []
    try:
        gym.make(env_id, **{**worlds[0], "feedback": "full"}).close()
    except (TypeError, ValueError):  # no full-information mode
        return []
    bounds = {}
    for spec in family.reference_agents:
        agent = reference_agent(spec)
        runs = evaluate_worlds(env_id, agent, seeds, worlds, feedback="full")
        bounds[f"{type(agent).__name__} (full)"] = {
            int(seed): float(run.metrics[family.objective])
            for seed, run in zip(seeds, runs, strict=True)
        }
    mine = {int(s): float(table.loc[s, label]) for s in seeds}
    return implausible(mine, bounds, lower_is_better=family.lower_is_better)
