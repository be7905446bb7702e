"""Apple's native vector env: what the registry-wide test (test_rl_vector.py) leaves out.

Its equality with SyncVectorEnv over every apple RL id (across the chunk
boundaries where each sub-env draws its next 256 examples) is tested in
``test_rl_vector.py``; here the keywords only apple has.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs.apple.rl_vector import AppleRLVectorEnv

ID = "AppleTasting-RL-v0"


def test_falls_back_to_sync_and_rejects_bad_actions():
    assert isinstance(gym.make_vec(ID, num_envs=2, order="adversarial"), SyncVectorEnv)
    assert isinstance(gym.make_vec("AppleTasting-RL-Feedback-v0", num_envs=2), AppleRLVectorEnv)
    envs = gym.make_vec(ID, num_envs=2, horizon=3)
    envs.reset(seed=0)
    with pytest.raises(TypeError, match="actions"):
        envs.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="actions"):
        envs.step(np.array([2, 0]))
    with pytest.raises(ValueError, match="order"):
        AppleRLVectorEnv(2, order="adversarial")
