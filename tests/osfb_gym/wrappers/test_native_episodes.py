"""The native vector envs record each training episode's metrics as the single env does.

``rl_env(..., on_episode=f)`` scores every episode with
:class:`osfb_gym.runner.EpisodeRecorder`; the native vector envs of lending and
apple take the same ``on_episode`` and must hand over every finished episode
of every sub-env once, with the values the sync env's recorders give, in the
same order (by step, then by sub-env index). The metrics are computed by two
code paths (a batched oracle against the single env's), so floats are compared
within 1e-12 relative; counts exactly.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.wrappers.vector import make_rl_vector_env, native_rl_vector_class

CASES = [
    ("OneSidedLending-v0", {"horizon": 7}, {}),
    ("OneSidedLending-v0", {"horizon": 5, "batch_size": 3, "link": "linear"}, {}),
    (
        "OneSidedLending-v0",
        {"horizon": 4, "batch_size": 2, "feedback": "full"},
        {"discrete_actions": True},
    ),
    ("OneSidedLending-v0", {"horizon": 6, "world_seed": 3}, {"view": "features"}),
    ("AppleTasting-v0", {"horizon": 6}, {}),
    ("AppleTasting-v0", {"horizon": 4, "cost_fp": 3.0, "gain": 2.0}, {"view": "feedback"}),
    # noisy: the Bayes decision's expected loss is not 0, past a chunk of 256 examples
    ("AppleTasting-v0", {"horizon": 300, "noise": 0.2, "cost_fp": 2.0}, {}),
    # 300 steps: past a chunk of 256 examples (Chow's risk of the next chunk's)
    ("RejectOption-v0", {"horizon": 300, "d": 0.3}, {}),
    ("RejectOption-v0", {"horizon": 5, "settle": "never"}, {"discrete_actions": True}),
    ("DelayedImpactLending-v0", {"horizon": 6}, {}),
    ("DelayedImpactLending-v0", {"horizon": 4, "batch_size": 3}, {"view": "features"}),
    ("MultiServiceChoice-v0", {"n_users": 6, "n_services": 3}, {}),
    (
        "MultiServiceChoice-v0",
        {"n_users": 5, "n_services": 2, "dynamics_rounds": 2},
        {"view": "feedback"},
    ),
    ("MultiServiceChoice-Retention-v0", {"n_users": 6, "n_services": 3, "horizon": 5}, {}),
]


def assert_same_episodes(ours: list[dict[str, float]], theirs: list[dict[str, float]]) -> None:
    """Same episodes in the same order: counts exact, floats within 1e-12 relative."""
    assert len(ours) == len(theirs) > 0
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.keys() == b.keys(), f"episode {k}"
        for key in a:
            np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=0, err_msg=f"{k} {key}")


def play(envs: gym.vector.VectorEnv, steps: int, seed: int) -> None:
    """Reset with ``seed`` and step seeded random actions (the same for both envs)."""
    envs.reset(seed=seed)
    space = envs.action_space
    space.seed(seed)
    for _ in range(steps):
        envs.step(space.sample())


@pytest.mark.parametrize(("env_id", "env_kwargs", "rl_kwargs"), CASES)
@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_every_episode_is_recorded_once_as_the_sync_env_records_it(
    env_id, env_kwargs, rl_kwargs, mode
):
    # the services' episodes end by their k-th service at the latest
    length = env_kwargs.get("horizon") or env_kwargs["n_services"]
    recorded: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for native in (True, False):
        envs = make_rl_vector_env(
            4,
            env_id=env_id,
            native=native,
            autoreset_mode=mode,
            on_episode=recorded[native].append,
            **rl_kwargs,
            **env_kwargs,
        )
        assert (type(envs).__name__ == "SyncVectorEnv") is not native
        play(envs, 3 * length + 2, seed=11)
        envs.close()
    assert_same_episodes(recorded[True], recorded[False])
    steps = {m["steps"] for m in recorded[True]}
    if "horizon" in env_kwargs:
        # NextStep spends a step per reset: 3 episodes each; SameStep: 3 each as well
        assert len(recorded[True]) == 3 * 4 and steps == {float(length)}
    else:  # a services episode may end before its k-th service (a step that changes nothing)
        assert len(recorded[True]) >= 3 * 4 and max(steps) <= length


def test_a_reset_mid_episode_drops_the_unfinished_episode_as_the_recorder_does():
    recorded: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for native in (True, False):
        envs = make_rl_vector_env(
            3,
            env_id="AppleTasting-v0",
            native=native,
            autoreset_mode="SameStep",
            on_episode=recorded[native].append,
            horizon=5,
        )
        play(envs, 3, seed=0)  # three steps of five: nothing finished
        play(envs, 6, seed=1)  # a new start: one finished episode per sub-env
    assert len(recorded[True]) == 3
    assert_same_episodes(recorded[True], recorded[False])


@pytest.mark.parametrize(
    ("env_id", "kwargs", "metric"),
    [
        ("OneSidedLending-v0", {"horizon": 2}, "bayes_agreement"),
        ("MultiServiceChoice-v0", {"n_users": 5, "n_services": 2}, "fairness"),
        ("MultiServiceChoice-Retention-v0", {"n_users": 5, "n_services": 2}, "retention_rate"),
    ],
)
@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_the_oracle_stays_out_of_what_the_policy_sees(env_id, kwargs, metric, mode):
    episodes: list[dict[str, float]] = []
    envs = make_rl_vector_env(
        2, env_id=env_id, native=True, autoreset_mode=mode, on_episode=episodes.append, **kwargs
    )
    _, info = envs.reset(seed=0)
    assert "oracle" not in info
    envs.action_space.seed(0)
    for _ in range(8):
        *_, info = envs.step(envs.action_space.sample())
        assert "oracle" not in info and "oracle" not in info.get("final_info", {})
    assert len(episodes) >= 2 and {"cumulative_loss", metric} <= set(episodes[0])


def test_a_native_env_without_an_oracle_refuses_and_the_others_fall_back():
    from osfb_gym.envs.lending.rl_vector import LendingRLVectorEnv

    class Silent(LendingRLVectorEnv):
        records_episodes = False

    record: Any = [].append
    with pytest.raises(ValueError, match="on_episode"):
        Silent(2, on_episode=record, horizon=3)
    assert native_rl_vector_class("AppleTasting-v0", on_episode=record) is not None
    # what the native envs do not cover still falls back, recording through the sync env
    envs = make_rl_vector_env(
        2, env_id="OneSidedLending-v0", on_episode=record, scenario="greedy_trap", dim=3
    )
    assert type(envs).__name__ == "SyncVectorEnv"


def test_a_callback_that_cannot_be_called_is_refused_naming_on_episode():
    from osfb_gym.envs.lending.rl_vector import LendingRLVectorEnv

    with pytest.raises(TypeError, match="on_episode"):
        LendingRLVectorEnv(2, on_episode="print", horizon=3)
