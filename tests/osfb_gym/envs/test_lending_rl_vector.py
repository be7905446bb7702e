"""Lending's native vector env: what the registry-wide test (test_rl_vector.py) leaves out.

Its equality with SyncVectorEnv over every lending RL id, its bad arguments
and its returned arrays are tested for every native id in
``test_rl_vector.py``; here the keywords only lending has and Gymnasium's
vector wrappers.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs.lending.rl_vector import LendingRLVectorEnv
from osfb_gym.wrappers.vector import make_rl_vector_env
from tests.osfb_gym.envs.test_rl_vector import pair, same

ID = "OneSidedLending-RL-v0"


def test_int_seed_is_seed_plus_index_and_episodes_differ():
    native, sync = pair(ID, AutoresetMode.NEXT_STEP, 3, horizon=3)
    obs, _ = native.reset(seed=10)
    same((obs,), (sync.reset(seed=10)[0],))
    assert not np.array_equal(obs[0], obs[1])
    again, _ = native.reset(seed=[10, 11, 12])
    np.testing.assert_array_equal(obs, again)


def test_make_vec_falls_back_to_sync_where_native_does_not_apply():
    assert isinstance(gym.make_vec(ID, num_envs=2), LendingRLVectorEnv)
    assert isinstance(
        gym.make_vec("OneSidedLending-RL-Features-v0", num_envs=2), LendingRLVectorEnv
    )
    for kwargs in (
        {"scenario": "greedy_trap", "dim": 3},
        {"render_mode": "ansi"},
        {"native": False},
        {"hide_oracle": False},
    ):
        assert isinstance(gym.make_vec(ID, num_envs=2, **kwargs), SyncVectorEnv), kwargs
    # the native step records the training episodes itself (test_native_episodes.py)
    assert isinstance(gym.make_vec(ID, num_envs=2, on_episode=print), LendingRLVectorEnv)
    sync = gym.make_vec(ID, num_envs=2, scenario="greedy_trap", dim=3, autoreset_mode="SameStep")
    assert sync.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    # Gymnasium's wrappers argument is the sync env's
    wrapped = gym.make_vec(ID, num_envs=2, vectorization_mode="sync", wrappers=[])
    assert isinstance(wrapped, SyncVectorEnv)
    with pytest.raises(ValueError, match="native=True"):
        make_rl_vector_env(2, env_id="OneSidedLending-v0", scenario="greedy_trap", native=True)


def test_lending_only_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="scenario"):
        LendingRLVectorEnv(2, scenario="greedy_trap")
    with pytest.raises(ValueError, match="horizon"):
        LendingRLVectorEnv(2, horizon=0)
    with pytest.raises(TypeError, match="native"):
        gym.make_vec(ID, num_envs=2, native="yes")
    # a batch of 7 has 128 joint actions: more than DiscreteActions tables
    with pytest.raises(ValueError, match="batch_size"):
        gym.make_vec("OneSidedLending-RL-Discrete-v0", num_envs=2, batch_size=7)


def test_gymnasium_vector_wrappers_take_it():
    envs = gym.wrappers.vector.RecordEpisodeStatistics(gym.make_vec(ID, num_envs=3, horizon=4))
    envs.reset(seed=0)
    finished = None
    for _ in range(4):
        *_, info = envs.step(np.ones((3, 1), dtype=np.int8))
        finished = info.get("episode", finished)
    assert finished is not None and finished["l"].tolist() == [4, 4, 4]
