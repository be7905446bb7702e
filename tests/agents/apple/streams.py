"""Seeded apple-tasting episodes and the trivial policies the learners must beat."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import osfb_gym  # noqa: F401  (registers AppleTasting-v0)
from agents.base import Agent
from osfb_gym.runner import run_episode

DIM = 20
#: The margin scaled for the env's standard normal features: ||x||^2 ~ dim (see MarginPerceptron)
M = 2.0 * DIM
SEEDS = (0, 1, 2)


class Always(Agent):
    """Taste everything (1) or nothing (0)."""

    def __init__(self, value: int = 1) -> None:
        self.value = value

    def act(self, observation: Any) -> int:
        return self.value


def mean_metrics(agent: Agent, seeds=SEEDS, **env_kwargs: Any) -> dict[str, float]:
    """Average the episode metrics of fresh clones of ``agent`` over ``seeds``."""
    env = gym.make("AppleTasting-v0", **env_kwargs)
    runs = [run_episode(env, agent.clone(), seed=seed).metrics for seed in seeds]
    return {key: float(np.mean([run[key] for run in runs])) for key in runs[0]}


def spaces_for(dim: int, dtype=np.float32) -> tuple[spaces.Box, spaces.Discrete]:
    return spaces.Box(-np.inf, np.inf, (dim,), dtype), spaces.Discrete(2)


def stream(n: int, dim: int, *, noise: float = 0.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm separable examples (float32) and 0/1 labels, the paper's feature scale."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(dim)
    x = rng.standard_normal((n, dim))
    y = (x @ w > 0) ^ (rng.random(n) < noise)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), y.astype(int)


def play(agent: Agent, x: np.ndarray, y: np.ndarray, *, one_sided: bool = True, seed: int = 0):
    """Run ``agent`` over a numpy stream; return its actions."""
    agent.reset(*spaces_for(x.shape[1], x.dtype), seed=seed, feedback={"gain": 1.0, "cost_fp": 1.0})
    actions = []
    for xi, yi in zip(x, y, strict=True):
        action = agent.act(xi)
        revealed = action == 1 or not one_sided
        reward = (1.0 if yi else -1.0) if action == 1 else 0.0
        agent.update(xi, action, reward, {"revealed": revealed, "y": int(yi) if revealed else 0})
        actions.append(action)
    return np.asarray(actions)
