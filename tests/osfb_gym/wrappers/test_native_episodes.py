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
    # 300 steps: past a chunk of 256 examples (Chow's risk of the next chunk's)
    ("RejectOption-v0", {"horizon": 300, "d": 0.3}, {}),
    ("RejectOption-v0", {"horizon": 5, "settle": "never"}, {"discrete_actions": True}),
    ("DelayedImpactLending-v0", {"horizon": 6}, {}),
    ("DelayedImpactLending-v0", {"horizon": 4, "batch_size": 3}, {"view": "features"}),
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
        play(envs, 3 * env_kwargs["horizon"] + 2, seed=11)
        envs.close()
    # NextStep spends a step per reset: 3 episodes each; SameStep: 3 each as well
    assert len(recorded[True]) == 3 * 4
    assert_same_episodes(recorded[True], recorded[False])
    assert {m["steps"] for m in recorded[True]} == {float(env_kwargs["horizon"])}


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


def test_the_oracle_stays_out_of_what_the_policy_sees():
    episodes: list[dict[str, float]] = []
    envs = make_rl_vector_env(
        2, env_id="OneSidedLending-v0", native=True, on_episode=episodes.append, horizon=2
    )
    _, info = envs.reset(seed=0)
    assert "oracle" not in info
    for _ in range(2):
        *_, info = envs.step(envs.action_space.sample())
        assert "oracle" not in info and "oracle" not in info.get("final_info", {})
    assert len(episodes) == 2 and {"cumulative_loss", "bayes_agreement"} <= set(episodes[0])


def test_families_whose_native_step_has_no_oracle_fall_back_or_refuse():
    from osfb_gym.envs.services.rl_vector import ServicesRLVectorEnv

    record: Any = [].append
    small = {"n_users": 6, "n_services": 2}
    assert native_rl_vector_class("MultiServiceChoice-v0", on_episode=record, **small) is None
    assert native_rl_vector_class("MultiServiceChoice-v0", **small) is ServicesRLVectorEnv
    assert native_rl_vector_class("AppleTasting-v0", on_episode=record) is not None
    envs = make_rl_vector_env(2, env_id="MultiServiceChoice-v0", on_episode=record, **small)
    assert type(envs).__name__ == "SyncVectorEnv"
    with pytest.raises(ValueError, match="on_episode"):
        ServicesRLVectorEnv(2, on_episode=record, **small)
    with pytest.raises(ValueError, match="native=True"):
        make_rl_vector_env(
            2, env_id="MultiServiceChoice-v0", native=True, on_episode=record, **small
        )


def test_a_callback_that_cannot_be_called_is_refused_naming_on_episode():
    from osfb_gym.envs.lending.rl_vector import LendingRLVectorEnv

    with pytest.raises(TypeError, match="on_episode"):
        LendingRLVectorEnv(2, on_episode="print", horizon=3)
