"""The native vector env of AppleTasting-RL-v0 equals SyncVectorEnv over the single RL id.

Same seeds, same actions: the same observations, rewards, terminations,
truncations and infos, bit for bit, through autoresets (and the chunk
boundaries where each sub-env draws its next 256 examples), in both
autoreset modes.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs.apple.rl_vector import AppleRLVectorEnv
from tests.osfb_gym.envs.test_lending_rl_vector import same

ID = "AppleTasting-RL-v0"
KWARGS = [
    {"horizon": 300},  # past the first chunk of 256 examples
    {"horizon": 7, "scenario": "gappy", "noise": 0.2, "gain": 2.0, "cost_fp": 3.0, "dim": 3},
    {"horizon": 5, "feedback": "full", "world_seed": 4, "scenario": "minority"},
    {"horizon": 6, "scenario": "striped"},
]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("kwargs", KWARGS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_equals_sync_vector_env_through_autoresets(mode, kwargs):
    native = gym.make_vec(ID, num_envs=4, autoreset_mode=mode, **kwargs)
    sync = SyncVectorEnv([lambda: gym.make(ID, **kwargs) for _ in range(4)], autoreset_mode=mode)
    assert isinstance(native, AppleRLVectorEnv)
    assert native.single_observation_space == sync.single_observation_space
    assert native.observation_space == sync.observation_space
    assert native.action_space == sync.action_space
    seeds = [2, 7, 1, 8]
    same(native.reset(seed=seeds), sync.reset(seed=seeds), "reset")
    rng = np.random.default_rng(0)
    ends = 0
    for t in range(2 * kwargs["horizon"] + 3):
        actions = rng.integers(0, 2, size=4)
        result = native.step(actions)
        same(result, sync.step(actions), f"step {t}")
        ends += int(result[3].any())
    assert ends >= 2
    same(native.reset(), sync.reset(), "reset()")


def test_falls_back_to_sync_and_rejects_bad_actions():
    assert isinstance(gym.make_vec(ID, num_envs=2, order="adversarial"), SyncVectorEnv)
    assert isinstance(gym.make_vec("AppleTasting-RL-Feedback-v0", num_envs=2), SyncVectorEnv)
    envs = gym.make_vec(ID, num_envs=2, horizon=3)
    envs.reset(seed=0)
    with pytest.raises(TypeError, match="actions"):
        envs.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="actions"):
        envs.step(np.array([2, 0]))
    with pytest.raises(ValueError, match="order"):
        AppleRLVectorEnv(2, order="adversarial")
