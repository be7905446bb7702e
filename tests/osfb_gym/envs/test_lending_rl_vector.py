"""The native vector env of OneSidedLending-RL-v0 equals SyncVectorEnv over the single RL id.

Same seeds, same actions: the same observations, rewards, terminations,
truncations and infos, bit for bit (the native step draws with each
sub-env's generator and takes each score with the single env's own product),
through autoresets in both autoreset modes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs.lending.rl_vector import LendingRLVectorEnv
from osfb_gym.wrappers.vector import make_rl_vector_env
from tests.helpers import assert_same

ID = "OneSidedLending-RL-v0"
KWARGS = [
    {"horizon": 7},
    {"horizon": 5, "batch_size": 3, "link": "linear", "noise_std": 0.5},
    {"horizon": 4, "batch_size": 2, "feedback": "full", "dim": 3},
    {"horizon": 6, "world_seed": 11, "cutoff_quantile": 0.5},
]


def same(a: Any, b: Any, path: str = "") -> None:
    """:func:`assert_same`, with object arrays (``final_obs``) compared entry by entry."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {set(a)} != {set(b)}"
        for key in a:
            same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert isinstance(b, np.ndarray) and b.dtype == object and a.shape == b.shape, path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    else:
        assert_same(a, b, path)


def pair(mode: AutoresetMode, num_envs: int, **kwargs: Any) -> tuple[Any, SyncVectorEnv]:
    native = gym.make_vec(ID, num_envs=num_envs, autoreset_mode=mode, **kwargs)
    sync = SyncVectorEnv(
        [lambda: gym.make(ID, **kwargs) for _ in range(num_envs)], autoreset_mode=mode
    )
    return native, sync


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("kwargs", KWARGS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_equals_sync_vector_env_through_autoresets(mode, kwargs):
    native, sync = pair(mode, 5, **kwargs)
    assert isinstance(native, LendingRLVectorEnv)
    assert native.metadata["autoreset_mode"] == mode
    assert native.single_observation_space == sync.single_observation_space
    assert native.single_action_space == sync.single_action_space
    assert native.observation_space == sync.observation_space
    seeds = [3, 1, 4, 1, 5]  # a repeated seed: two sub-envs with one stream
    same(native.reset(seed=seeds), sync.reset(seed=seeds), "reset")
    rng = np.random.default_rng(0)
    ends = 0
    for t in range(3 * kwargs["horizon"] + 2):
        actions = rng.integers(0, 2, size=(5, native.batch_size)).astype(np.int8)
        result = native.step(actions)
        same(result, sync.step(actions), f"step {t}")
        ends += int(result[3].any())
    assert ends >= 3  # the comparison crossed autoresets
    # a reset without seeds goes on from each sub-env's generator, as the sync env's
    same(native.reset(), sync.reset(), "reset()")
    actions = np.ones((5, native.batch_size), dtype=np.int8)
    same(native.step(actions), sync.step(actions), "after reset()")


def test_int_seed_is_seed_plus_index_and_episodes_differ():
    native, sync = pair(AutoresetMode.NEXT_STEP, 3, horizon=3)
    obs, _ = native.reset(seed=10)
    same((obs,), (sync.reset(seed=10)[0],))
    assert not np.array_equal(obs[0], obs[1])
    again, _ = native.reset(seed=[10, 11, 12])
    np.testing.assert_array_equal(obs, again)


def test_returned_arrays_are_the_callers():
    """Writing into what a step returned changes nothing the env steps on."""
    native, sync = pair(AutoresetMode.NEXT_STEP, 2, horizon=5)
    obs, _ = native.reset(seed=[0, 1])
    sync.reset(seed=[0, 1])
    actions = np.ones((2, 1), dtype=np.int8)
    for _ in range(3):
        obs, reward, _, _, info = native.step(actions)
        expected = sync.step(actions)
        same((obs, reward, info), (expected[0], expected[1], expected[4]))
        obs[:] = 99.0
        reward[:] = 99.0
        info["feedback"]["y"][:] = 99.0


def test_make_vec_falls_back_to_sync_where_native_does_not_apply():
    assert isinstance(gym.make_vec(ID, num_envs=2), LendingRLVectorEnv)
    for kwargs in (
        {"scenario": "greedy_trap", "dim": 3},
        {"render_mode": "ansi"},
        {"native": False},
    ):
        assert isinstance(gym.make_vec(ID, num_envs=2, **kwargs), SyncVectorEnv), kwargs
    sync = gym.make_vec(ID, num_envs=2, scenario="greedy_trap", dim=3, autoreset_mode="SameStep")
    assert sync.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    # the other RL ids keep Gymnasium's default vectorisation (and its wrappers argument)
    assert isinstance(gym.make_vec("OneSidedLending-RL-Features-v0", num_envs=2), SyncVectorEnv)
    with pytest.raises(ValueError, match="native=True"):
        make_rl_vector_env(2, env_id="OneSidedLending-v0", view="feedback", native=True)


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="autoreset_mode"):
        gym.make_vec(ID, num_envs=2, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match="num_envs"):
        LendingRLVectorEnv(0)
    with pytest.raises(TypeError, match="native"):
        gym.make_vec(ID, num_envs=2, native="yes")
    with pytest.raises(ValueError, match="scenario"):
        LendingRLVectorEnv(2, scenario="greedy_trap")
    with pytest.raises(ValueError, match="horizon"):
        LendingRLVectorEnv(2, horizon=0)
    envs = LendingRLVectorEnv(2, horizon=3)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros((2, 1), dtype=np.int8))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        envs.step(np.full((2, 1), 2))
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=[1, 2, 3])


def test_gymnasium_vector_wrappers_take_it():
    envs = gym.wrappers.vector.RecordEpisodeStatistics(gym.make_vec(ID, num_envs=3, horizon=4))
    envs.reset(seed=0)
    finished = None
    for _ in range(4):
        *_, info = envs.step(np.ones((3, 1), dtype=np.int8))
        finished = info.get("episode", finished)
    assert finished is not None and finished["l"].tolist() == [4, 4, 4]
