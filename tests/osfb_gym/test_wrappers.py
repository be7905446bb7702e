"""The RL adapters: DiscreteActions and rl_env."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

import osfb_gym  # noqa: F401
from osfb_gym.wrappers import DiscreteActions, rl_env


def test_discrete_actions_enumerate_every_joint_action_once():
    env = DiscreteActions(gym.make("RejectOption-v0", horizon=5))
    joints = {tuple(env.action(k).tolist()) for k in range(env.action_space.n)}
    assert joints == {(d, q) for d in range(3) for q in range(2)}
    assert env.action(3).dtype == env.unwrapped.action_space.dtype


def test_one_applicant_a_step_becomes_a_binary_choice():
    env = DiscreteActions(gym.make("OneSidedLending-v0", horizon=5))
    assert env.action_space == gym.spaces.Discrete(2)
    np.testing.assert_array_equal(env.action(1), np.array([1], dtype=np.int8))
    env.reset(seed=0)
    env.step(1)


def test_a_small_batch_is_enumerated_first_applicant_highest_bit():
    env = DiscreteActions(gym.make("OneSidedLending-v0", batch_size=3, horizon=5))
    assert env.action_space == gym.spaces.Discrete(8)
    codes = [env.action(k).tolist() for k in range(8)]
    assert codes == [[k >> 2 & 1, k >> 1 & 1, k & 1] for k in range(8)]
    assert all(env.code(env.action(k)) == k for k in range(8))
    assert env.action(3).dtype == np.int8
    env.action(3)[0] = 1  # a copy: the table is not changed by what the env is given
    assert env.action(3).tolist() == [0, 1, 1]
    env.reset(seed=0)
    *_, info = env.step(6)
    assert info["feedback"]["revealed"].tolist() == [True, True, False]


def test_a_large_batch_of_applicants_cannot_be_enumerated():
    env = DiscreteActions(gym.make("OneSidedLending-v0", batch_size=6))
    assert env.action_space.n == 64
    with pytest.raises(ValueError, match="batch_size=1"):
        DiscreteActions(gym.make("OneSidedLending-v0", batch_size=7))
    with pytest.raises(ValueError, match="joint"):
        env.code([1, 0])
    with pytest.raises(TypeError, match="MultiDiscrete"):
        DiscreteActions(gym.make("AppleTasting-v0"))
    env = DiscreteActions(gym.make("RejectOption-v0"))
    with pytest.raises(ValueError, match="action"):
        env.action(6)


CASES = [
    ("OneSidedLending-v0", {"batch_size": 3, "horizon": 20}, False),
    ("OneSidedLending-v0", {"horizon": 20}, False),
    ("OneSidedLending-v0", {"horizon": 20}, True),
    ("AppleTasting-v0", {"horizon": 20}, False),
    ("AppleTasting-v0", {"horizon": 20}, True),
    ("RejectOption-v0", {"horizon": 20}, False),
    ("RejectOption-v0", {"horizon": 20}, True),
    ("MultiServiceChoice-v0", {"n_users": 30, "n_services": 4}, False),
    ("MultiServiceChoice-v0", {"n_users": 30, "n_services": 4}, True),
]


@pytest.mark.parametrize(("env_id", "kwargs", "discrete"), CASES)
def test_rl_env_passes_sb3s_checker_without_the_oracle(env_id, kwargs, discrete):
    env = rl_env(env_id, discrete_actions=discrete, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, warn=True)
    assert len(env.observation_space.shape) == 1
    if discrete:
        assert isinstance(env.action_space, gym.spaces.Discrete)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert "oracle" not in info and "feedback" in info
    assert "oracle" in rl_env(env_id, hide_oracle=False, **kwargs).reset(seed=0)[1]


def test_a_hidden_oracle_env_solves_no_reference(monkeypatch):
    # the services' reference optimum belongs to the metrics: stepping never solves it
    from osfb_gym.envs.services import reference as services_reference

    monkeypatch.setattr(services_reference, "reference_loss", lambda *a, **k: 1 / 0)
    env = rl_env("MultiServiceChoice-v0", n_users=30, n_services=3)
    env.reset(seed=0)
    for user in range(3):
        env.step(user)


def test_an_argument_the_env_lacks_is_named_once_with_the_ones_it_takes():
    from osfb_gym.core.validation import env_arguments

    with pytest.raises(TypeError, match=r"^AppleTasting-v0 takes no argument 'horizn'; its "
                       r"arguments: .*horizon"):  # fmt: skip
        rl_env("AppleTasting-v0", horizn=20)
    with pytest.raises(TypeError) as raised:  # through an RL-ready id, Gymnasium adds its context
        gym.make("AppleTasting-RL-v0", horizn=20)
    assert str(raised.value).count("takes no argument 'horizn'") == 1
    assert "unexpected keyword" not in str(raised.value)
    assert "render_mode" in env_arguments("AppleTasting-v0")
    assert env_arguments("AppleTasting-RL-v0") is None  # rl_env takes any keyword: checked inside
    # gym.make's own keywords are not the env's, and pass
    env = rl_env("AppleTasting-v0", max_episode_steps=3, disable_env_checker=True, horizon=20)
    env.reset(seed=0)
    assert [env.step(1)[3] for _ in range(3)] == [False, False, True]  # truncated at 3


def test_an_env_whose_creator_cannot_be_read_is_left_to_gym_make():
    from osfb_gym.core.validation import check_env_kwargs, env_arguments

    gym.register("OsfbTestMissing-v0", entry_point="no_such_module_anywhere:Env")
    try:
        assert env_arguments("OsfbTestMissing-v0") is None
        check_env_kwargs("OsfbTestMissing-v0", {"anything": 1})  # gym.make will say what is wrong
        with pytest.raises(ModuleNotFoundError):
            rl_env("OsfbTestMissing-v0", anything=1)
    finally:
        del gym.registry["OsfbTestMissing-v0"]
