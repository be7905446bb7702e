"""The generic environment suite: every registered id and variant gets these tests."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import osfb_gym
from osfb_gym.core.channels import strip_oracle
from tests.helpers import assert_same, differs
from tests.osfb_gym.envs.cases import CASES, case_param
from tests.osfb_gym.envs.hidden import override_hidden

pytestmark = pytest.mark.parametrize("case", [case_param(c) for c in CASES])

STEPS = 25


def make(case: tuple[str, dict[str, Any]], **extra: Any) -> gym.Env:
    env_id, kwargs = case
    return gym.make(env_id, **{**kwargs, **extra})


def rollout(env: gym.Env, seed: int, steps: int = STEPS, probe: str | None = None) -> list:
    """Reset with ``seed``, take seeded random actions, record what an agent sees."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(int(seed))
    record: list = [(obs, strip_oracle(info))]
    for _ in range(steps):
        action = env.action_space.sample()
        if probe is not None:
            override_hidden(env.unwrapped, action, probe)
        obs, reward, terminated, truncated, info = env.step(action)
        record.append((obs, reward, terminated, truncated, strip_oracle(info), info["oracle"]))
        if terminated or truncated:
            break
    return record


def test_gymnasium_check_env(case):
    env = make(case)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped, skip_render_check=False)


def test_sb3_check_env(case):
    env = make(case)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # lending's observation is a (batch, features) matrix (one row per applicant);
        # SB3 only recommends flattening it (FlattenObservation does), so that
        # advice is the one warning allowed.
        warnings.filterwarnings("ignore", message=".*unconventional shape.*")
        sb3_check_env(env.unwrapped, warn=True)


def test_make_with_module_prefix(case):
    env_id, kwargs = case
    env = gym.make(f"osfb_gym:{env_id}", **kwargs)
    assert env.unwrapped.spec.id == env_id


def test_same_seed_same_actions_same_trajectory(case):
    first = rollout(make(case), seed=11)
    second = rollout(make(case), seed=11)
    assert_same(first, second)
    assert differs(first[0][0], rollout(make(case), seed=12, steps=0)[0][0])


def test_reset_returns_to_the_same_start(case):
    env = make(case)
    first = rollout(env, seed=3)
    rollout(env, seed=4)
    assert_same(first, rollout(env, seed=3))


def test_vector_env_is_deterministic(case):
    def run() -> list:
        vec = gym.vector.SyncVectorEnv([lambda: make(case) for _ in range(2)])
        vec.action_space.seed(0)
        obs, _ = vec.reset(seed=[5, 6])
        record = [obs]
        for _ in range(10):
            obs, reward, terminated, truncated, _ = vec.step(vec.action_space.sample())
            record.append((obs, reward, terminated, truncated))
        vec.close()
        return record

    assert_same(run(), run())


def test_hidden_outcomes_do_not_leak(case):
    """Obs, reward and info minus the oracle are identical whatever the hidden outcomes are."""
    low = rollout(make(case), seed=21, probe="low")
    high = rollout(make(case), seed=21, probe="high")
    visible = lambda record: [step[:5] if len(step) == 6 else step for step in record]  # noqa: E731
    assert_same(visible(low), visible(high))
    hidden = make(case).unwrapped
    hidden.reset(seed=0)
    if hidden.feedback_mode == "full":
        assert not override_hidden(hidden, hidden.action_space.sample() * 0, "low")
    else:
        # the probe did change the hidden truth, so the comparison above could fail
        oracle = lambda record: [step[5] for step in record[1:]]  # noqa: E731
        assert differs(oracle(low), oracle(high))


def bad_actions(space: spaces.Space) -> list[Any]:
    if isinstance(space, spaces.MultiBinary):
        n = int(np.prod(space.shape))
        return [
            np.full(n, 2),
            np.full(n + 1, 1),
            np.full(n, np.nan),
            np.full(n, 0.5),
            np.full(n, -1),
            ["yes"] * n,
            np.ones((n, 2)),
        ]
    if isinstance(space, spaces.Discrete):
        return [space.n, -1, 0.5, np.nan, "0", [0, 1]]
    if isinstance(space, spaces.MultiDiscrete):
        return [space.nvec, -np.ones_like(space.nvec), np.full(space.shape, np.nan), [0]]
    raise NotImplementedError(type(space))


def test_bad_actions_raise_and_name_the_parameter(case):
    env = make(case)
    env.reset(seed=0)
    for action in bad_actions(env.action_space):
        with pytest.raises((ValueError, TypeError), match="action"):
            env.unwrapped.step(action)


def test_unknown_keyword_is_rejected(case):
    with pytest.raises(TypeError, match="no_such_option"):
        make(case, no_such_option=1)


def test_numpy_integer_seeds_are_seeds_and_bad_seeds_or_options_are_named(case):
    env = make(case)
    assert_same(rollout(env, np.int64(3), steps=3), rollout(env, 3, steps=3))
    for seed, error in ((1.5, TypeError), (True, TypeError), (-1, ValueError)):
        with pytest.raises(error, match="seed"):
            env.reset(seed=seed)
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(seed=0, options="x")


def test_step_before_reset_is_an_error(case):
    env_id, kwargs = case
    env = gym.spec(env_id).make(**kwargs).unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.action_space.sample())


def test_episode_ends_with_python_bools_and_float_rewards(case):
    env = make(case)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    assert set(info) >= {"feedback", "oracle"}
    assert "loss" in info["oracle"] and "revealed" in info["feedback"]


def test_registered_ids_are_all_covered(case):
    registered = {env_id for env_id in gym.registry if env_id in osfb_gym.register_all()}
    assert registered == {env_id for env_id, _ in CASES}
