"""SB3VecEnv: a SAME_STEP Gymnasium vector env as a stable-baselines3 VecEnv.

The native lending vector env through the adapter equals SB3's own
``DummyVecEnv`` over the single RL id under the same seeds: observations,
rewards, dones, infos (``terminal_observation``, ``TimeLimit.truncated``)
and ``reset_infos``; and PPO trains on it.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecMonitor  # noqa: E402

import osfb_gym  # noqa: E402, F401  (registers the ids)
from osfb_gym.wrappers.sb3 import SB3VecEnv, make_sb3_vec_env, unbatch_infos  # noqa: E402
from tests.helpers import assert_same  # noqa: E402

ID = "OneSidedLending-RL-v0"


def adapted(num_envs: int, **kwargs) -> SB3VecEnv:
    return SB3VecEnv(gym.make_vec(ID, num_envs=num_envs, autoreset_mode="SameStep", **kwargs))


@pytest.mark.parametrize(
    "kwargs", [{"horizon": 5}, {"horizon": 3, "batch_size": 2, "link": "linear"}]
)
def test_equals_dummy_vec_env_through_episode_ends(kwargs):
    ours = adapted(4, **kwargs)
    theirs = DummyVecEnv([lambda: gym.make(ID, **kwargs) for _ in range(4)])
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    ours.seed(7)
    theirs.seed(7)
    assert_same(ours.reset(), theirs.reset())
    assert_same(ours.reset_infos, theirs.reset_infos)
    rng = np.random.default_rng(1)
    ends = 0
    for t in range(3 * kwargs["horizon"] + 1):
        # float 0/1 actions, as SB3's MultiBinary policy gives them
        actions = rng.integers(0, 2, size=(4, ours.action_space.n)).astype(np.float32)
        obs, reward, done, infos = ours.step(actions)
        expected = theirs.step(actions)
        assert_same((obs, reward, done), expected[:3], f"step {t}")
        assert_same(infos, expected[3], f"step {t} infos")
        assert_same(ours.reset_infos, theirs.reset_infos, f"step {t} reset_infos")
        ends += int(done.any())
        if done.any():
            assert all("terminal_observation" in info for info in infos)
            assert all(info["TimeLimit.truncated"] for info in infos)
    assert ends == 3


def test_sync_vector_env_of_cartpole_equals_dummy_vec_env():
    """Terminations (not truncations) too: CartPole's pole falls."""
    sync = SyncVectorEnv(
        [lambda: gym.make("CartPole-v1") for _ in range(3)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    ours = SB3VecEnv(sync)
    theirs = DummyVecEnv([lambda: gym.make("CartPole-v1") for _ in range(3)])
    ours.seed(0)
    theirs.seed(0)
    assert_same(ours.reset(), theirs.reset())
    terminated = 0
    for _ in range(60):
        actions = np.ones(3, dtype=np.int64)
        result = ours.step(actions)
        expected = theirs.step(actions)
        assert_same(result, expected)
        dones, infos = result[2], result[3]
        terminated += sum(
            d and not i["TimeLimit.truncated"] for d, i in zip(dones, infos, strict=True)
        )
    assert terminated >= 3


def test_ppo_learns_on_it_with_vec_monitor_and_nan_checks():
    venv = VecCheckNan(VecMonitor(adapted(4, horizon=16)), raise_exception=True)
    venv.seed(0)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    # VecMonitor saw the episodes end: 4 envs x 256 / 4 / 16 steps
    assert len(model.ep_info_buffer) == 16
    assert all(ep["l"] == 16 for ep in model.ep_info_buffer)


def test_rejects_next_step_autoreset_and_non_vector_envs():
    with pytest.raises(ValueError, match="autoreset_mode"):
        SB3VecEnv(gym.make_vec(ID, num_envs=2))
    with pytest.raises(TypeError, match="VectorEnv"):
        SB3VecEnv(gym.make(ID))


def test_attributes_methods_wrappers_and_options():
    venv = adapted(3, horizon=4)
    assert venv.get_attr("horizon") == [4, 4, 4]
    assert venv.get_attr("cutoff", indices=[1]) == [venv.env.envs[1].cutoff]
    venv.set_attr("horizon", 2, indices=0)
    assert venv.get_attr("horizon") == [2, 4, 4]
    assert venv.env_method("get_wrapper_attr", "dim") == [5, 5, 5]
    assert venv.env_is_wrapped(Monitor) == [False, False, False]
    sync = SB3VecEnv(
        SyncVectorEnv(
            [lambda: Monitor(gym.make(ID)), lambda: gym.make(ID)],
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
    )
    assert sync.env_is_wrapped(Monitor) == [True, False]
    venv.set_options([{"a": 1}, {}, {}])
    with pytest.raises(ValueError, match="options"):
        venv.reset()
    with pytest.raises(RuntimeError, match="step_async"):
        venv.step_wait()


def test_unbatch_infos_follows_the_masks():
    infos = {
        "a": np.array([1.0, 2.0, 3.0]),
        "_a": np.array([True, False, True]),
        "b": {"c": np.arange(3), "_c": np.ones(3, dtype=bool)},
        "_b": np.array([False, True, True]),
    }
    out = unbatch_infos(infos, 3)
    assert out == [{"a": 1.0}, {"b": {"c": 1}}, {"a": 3.0, "b": {"c": 2}}]


def test_apple_native_equals_dummy_vec_env():
    """Discrete actions (PPO gives int64 codes) and the apple env's Python-scalar feedback."""
    kwargs = {"horizon": 4, "dim": 3}
    ours = SB3VecEnv(
        gym.make_vec("AppleTasting-RL-v0", num_envs=3, autoreset_mode="SameStep", **kwargs)
    )
    theirs = DummyVecEnv([lambda: gym.make("AppleTasting-RL-v0", **kwargs) for _ in range(3)])
    ours.seed(5)
    theirs.seed(5)
    assert_same(ours.reset(), theirs.reset())
    rng = np.random.default_rng(2)
    for t in range(9):
        actions = rng.integers(0, 2, size=3)
        result = ours.step(actions)
        expected = theirs.step(actions)
        assert_same(result, expected, f"step {t}")
        assert_same(ours.reset_infos, theirs.reset_infos, f"step {t} reset_infos")


# ----------------------------------------------------------------------------- make_sb3_vec_env
def _without_episode(infos):
    """The infos without SB3's ``episode`` entry (its wall-clock ``t`` differs by design)."""
    return [{key: value for key, value in info.items() if key != "episode"} for info in infos]


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("OneSidedLending-v0", {"horizon": 4}),
        ("RejectOption-RL-Features-Discrete-v0", {"horizon": 3}),
        ("DelayedImpactLending-RL-Feedback-v0", {"horizon": 5, "batch_size": 2}),
        ("AppleTasting-v0", {"horizon": 4, "view": "features"}),
        ("MultiServiceChoice-RL-v0", {"n_users": 10, "n_services": 4}),
        ("MultiServiceChoice-Retention-RL-v0", {"n_users": 8, "n_services": 2, "horizon": 4}),
    ],
)
def test_make_sb3_vec_env_native_equals_its_dummy_vec_env(env_id, kwargs):
    ours = make_sb3_vec_env(env_id, n_envs=3, seed=5, **kwargs)
    theirs = make_sb3_vec_env(env_id, n_envs=3, seed=5, native=False, **kwargs)
    assert isinstance(ours.venv, SB3VecEnv) and isinstance(theirs, DummyVecEnv)
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    assert_same(ours.reset(), theirs.reset())
    ours.action_space.seed(0)
    episodes = 0
    for t in range(2 * (kwargs.get("horizon") or kwargs["n_services"]) + 1):
        actions = np.stack([ours.action_space.sample() for _ in range(3)])
        obs, reward, done, infos = ours.step(actions)
        expected = theirs.step(actions)
        assert_same((obs, reward, done), expected[:3], f"step {t}")
        assert_same(_without_episode(infos), _without_episode(expected[3]), f"step {t} infos")
        for mine, other in zip(infos, expected[3], strict=True):
            assert ("episode" in mine) == ("episode" in other)
            if "episode" in mine:
                episodes += 1
                assert mine["episode"]["l"] == other["episode"]["l"]
                # VecMonitor sums the float32 rewards SB3 gets, Monitor the env's floats
                expected_return = other["episode"]["r"]
                assert mine["episode"]["r"] == pytest.approx(expected_return, rel=1e-6, abs=1e-5)
    assert episodes >= 3


def test_make_sb3_vec_env_falls_back_where_native_does_not_apply():
    def kind(venv):
        return type(getattr(venv, "venv", venv)).__name__

    assert kind(make_sb3_vec_env("OneSidedLending-RL-v0", n_envs=2)) == "SB3VecEnv"
    assert kind(make_sb3_vec_env("OneSidedLending-RL-v0", n_envs=1)) == "DummyVecEnv"
    services = {"n_users": 8, "n_services": 3}
    assert kind(make_sb3_vec_env("MultiServiceChoice-RL-v0", n_envs=2, **services)) == ("SB3VecEnv")
    retention = make_sb3_vec_env("MultiServiceChoice-Retention-RL-v0", n_envs=2, **services)
    assert kind(retention) == "SB3VecEnv"
    trap = make_sb3_vec_env("OneSidedLending-v0", n_envs=2, scenario="greedy_trap", dim=3)
    assert kind(trap) == "DummyVecEnv"
    # on_episode: the native envs record it
    assert kind(make_sb3_vec_env("RejectOption-v0", n_envs=2, on_episode=print)) == "SB3VecEnv"
    recorded = make_sb3_vec_env("MultiServiceChoice-v0", n_envs=2, on_episode=print, **services)
    assert kind(recorded) == "SB3VecEnv"
    assert kind(make_sb3_vec_env("RejectOption-v0", n_envs=2, native=True)) == "SB3VecEnv"
    venv = make_sb3_vec_env("AppleTasting-v0", n_envs=2, binary_as_multidiscrete=True)
    assert kind(venv) == "SB3VecEnv"  # (apple's actions are Discrete: nothing to adapt)


def test_make_sb3_vec_env_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="n_envs"):
        make_sb3_vec_env("OneSidedLending-v0", n_envs=0)
    with pytest.raises(ValueError, match="seed"):
        make_sb3_vec_env("OneSidedLending-v0", n_envs=2, seed=-1)
    with pytest.raises(TypeError, match="native"):
        make_sb3_vec_env("OneSidedLending-v0", n_envs=2, native="yes")
    with pytest.raises(ValueError, match="native=True"):
        make_sb3_vec_env(
            "MultiServiceChoice-Retention-v0", n_envs=2, native=True, render_mode="ansi"
        )
    with pytest.raises(ValueError, match="horizon"):
        make_sb3_vec_env("OneSidedLending-v0", n_envs=2, horizon=0)
    with pytest.raises(ValueError, match="n_users"):
        make_sb3_vec_env("MultiServiceChoice-v0", n_envs=2, n_users=0)
