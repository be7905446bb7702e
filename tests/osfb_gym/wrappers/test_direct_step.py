"""A view steps the raw env once the layers below it are spent, with the same results."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import PassiveEnvChecker

import osfb_gym  # noqa: F401
from osfb_gym.core.channels import HideOracle, strip_oracle
from osfb_gym.wrappers import apply_view, rl_env
from osfb_gym.wrappers.views import encode, make_view

CASES = [
    ("OneSidedLending-v0", {"horizon": 25}),
    ("OneSidedLending-v0", {"batch_size": 3, "link": "linear", "horizon": 25}),
    ("AppleTasting-v0", {"horizon": 25}),
    ("RejectOption-v0", {"horizon": 25}),
    ("MultiServiceChoice-v0", {"n_users": 20, "n_services": 4}),
]


class Counting(gym.Wrapper):
    """A wrapper the view does not know: it must be stepped every time."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.calls = 0

    def step(self, action: Any) -> Any:
        self.calls += 1
        return self.env.step(action)


def frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: frozen(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return (type(value).__name__, repr(value))


def rollout(env: gym.Env, encoder: Any, seed: int, steps: int = 60) -> list:
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    seen = [frozen(encoder(obs)), frozen(info)]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        seen.append([frozen(encoder(obs)), frozen(reward), terminated, truncated, frozen(info)])
        if terminated or truncated:
            obs, info = env.reset(seed=seed + 1)
            seen.append([frozen(encoder(obs)), frozen(info)])
    return seen


@pytest.mark.parametrize(("env_id", "kwargs"), CASES)
@pytest.mark.parametrize("view", ["plain", "feedback"])
def test_rl_env_gives_what_the_full_stack_gives(env_id, kwargs, view):
    """Through its whole wrapper stack, every step: the same observations, rewards and infos."""
    fast = rl_env(env_id, view=view, **kwargs)
    # the reference: HideOracle and Gymnasium's wrappers stepped every time, the view
    # applied outside the env by hand
    slow = HideOracle(gym.make(env_id, **kwargs))
    shown = make_view(slow, view)

    def by_hand(obs: Any) -> Any:
        return shown.encode(obs)

    class ByHand(gym.Wrapper):
        def reset(self, **options: Any) -> Any:
            obs, info = self.env.reset(**options)
            shown.reset(info["feedback"], seed=options.get("seed"))
            self._last = obs
            return obs, info

        def step(self, action: Any) -> Any:
            obs, reward, terminated, truncated, info = self.env.step(action)
            shown.update(self._last, action, float(reward), info["feedback"])
            self._last = obs
            return obs, reward, terminated, truncated, info

    assert rollout(fast, lambda obs: obs, 5) == rollout(ByHand(slow), by_hand, 5)
    assert fast._direct is fast.unwrapped  # the fast path was taken


def test_the_layers_below_are_stepped_until_their_checks_are_done():
    env = rl_env("AppleTasting-v0", horizon=30)
    checker = env.env
    while not isinstance(checker, PassiveEnvChecker):
        checker = checker.env
    env.reset(seed=0)
    env.step(1)
    assert checker.checked_step and env._direct is not env.unwrapped
    env.step(1)  # the checker's data-reuse check
    assert checker.checked_data_reuse
    env.step(1)
    assert env._direct is env.unwrapped


def test_an_unknown_wrapper_below_is_stepped_every_time():
    counting = Counting(HideOracle(gym.make("RejectOption-v0", horizon=40)))
    env = apply_view(counting, "plain")
    env.reset(seed=0)
    for _ in range(10):
        env.step(np.array([1, 1]))
    assert counting.calls == 10


def test_the_oracle_stays_hidden_on_the_direct_path():
    env = rl_env("OneSidedLending-v0", horizon=30)
    env.reset(seed=0)
    infos = [env.step(np.array([1.0], dtype=np.float32))[4] for _ in range(20)]
    assert env._direct is env.unwrapped
    assert all("oracle" not in info and "feedback" in info for info in infos)


def test_the_oracle_stays_for_the_evaluator_without_hide_oracle():
    env = apply_view(gym.make("OneSidedLending-v0", horizon=30), "plain")
    env.reset(seed=0)
    infos = [env.step(np.array([1]))[4] for _ in range(10)]
    assert env._direct is env.unwrapped
    assert all("oracle" in info for info in infos)
    assert strip_oracle(infos[-1]).keys() == {"feedback"}


@pytest.mark.parametrize(
    "obs",
    [
        np.arange(10, dtype=np.float32).reshape(2, 5) / 3,
        np.linspace(-9, 9, 7),
        np.array([[1, 2], [3, 4]]),
        [0.25, 0.5],
    ],
)
def test_the_plain_views_cast_equals_encode(obs):
    shape = np.asarray(obs).shape
    space = gym.spaces.Box(-10.0, 10.0, shape, dtype=np.float32)
    env = gym.make("OneSidedLending-v0")
    env.observation_space = space
    view = make_view(env, "plain")
    got, want = view.encode(obs), encode(space, obs)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    if isinstance(obs, np.ndarray):
        assert not np.shares_memory(got, obs)
