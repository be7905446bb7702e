"""A user's script: CI runs `mypy --strict` on it against the installed osfb-gym.

It checks that the package's annotations reach its users (``Typing :: Typed``):
under setuptools' default editable install mypy reports ``import-not-found``
for these imports; ``--config-settings editable_mode=compat`` fixes that.
"""

from __future__ import annotations

import gymnasium as gym

import osfb_gym
from agents.lending import Adaptive
from osfb_gym.runner import Trajectory, run_episode


def cumulative_loss(seed: int) -> float:
    """Return Adaptive's cumulative one-sided loss on one short episode."""
    env = gym.make("OneSidedLending-v0", horizon=100)
    trajectory: Trajectory = run_episode(env, Adaptive(rho=0.5), seed=seed)
    return float(trajectory.metrics["cumulative_loss"])


if __name__ == "__main__":
    print(osfb_gym.__version__, cumulative_loss(0))
