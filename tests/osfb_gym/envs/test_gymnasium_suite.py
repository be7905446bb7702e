"""Gymnasium's own environment tests, run over every id this project registers.

Adapted from Gymnasium 1.4.0 (the version this project pins its tests to;
the files at its commit 95a790e19, "Update to v1.4.0", of
https://github.com/Farama-Foundation/Gymnasium):

- ``tests/envs/test_envs.py``: ``test_all_env_api``,
  ``test_all_env_passive_env_checker``, ``test_env_determinism_rollout``,
  ``test_pickle_env``;
- ``tests/envs/test_rendering.py``: ``check_rendered``, ``test_render_modes``;
- ``tests/envs/registration/test_spec.py``: ``test_spec``,
  ``test_check_can_jsonify`` (a string entry point serialises);
- ``tests/envs/registration/test_env_spec.py``: ``test_full_integration``,
  ``test_env_spec_to_from_json``, ``test_pickling_env_stack``;
- ``tests/envs/registration/test_make_vec.py``: ``test_make_vec_env_id``,
  ``test_make_vec_num_envs``, ``test_make_vec_render_mode``,
  ``test_make_vec_wrappers``, ``test_make_vec_with_spec``.

Gymnasium's originals iterate over ``gymnasium.envs.*`` specs (CartPole);
here they iterate over ``envs_registry``'s ids, the raw ones and the
RL-ready ones, with their registered defaults. The adaptations, each
marked where it is made: the raw ids are checked as Gymnasium checks its
own (``.unwrapped``), an RL id as the stack ``gym.make`` returns (its
view is the point); Gymnasium's ``test_pickle_env`` pickles
``env.unwrapped`` before any step, which missed the RL ids' wrappers, so
here the whole stack is pickled mid-episode, with ``pickle`` and
``cloudpickle``, and must continue the episode identically.
"""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
from gymnasium.wrappers import TimeLimit, TransformObservation

import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import ENVS, env_ids, rl_env_ids

RAW_IDS = env_ids()
RL_IDS = rl_env_ids()
ALL_IDS = RAW_IDS + RL_IDS
# one RL id of each family and view kind, where the default run needs only a sample
RL_SAMPLE = [rl_env_ids(entry.family)[0] for entry in ENVS] + [
    rl_env_ids(entry.family, discrete=True)[0] for entry in ENVS if entry.discrete_rl
]

# (test_envs.py) the warnings Gymnasium's checker may give that are not failures; ours:
# an RL id is checked as the stack gym.make returns, whose spaces differ from the raw env's
CHECK_ENV_IGNORE_WARNINGS = [r".*different from the unwrapped version.*"]
PASSIVE_CHECK_IGNORE_WARNING: list[str] = []


def spec_of(env_id: str) -> EnvSpec:
    return gym.spec(env_id)


# ----------------------------------------------------------------------------- test_envs.py
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_all_env_api(env_id):
    """Each id passes Gymnasium's ``check_env`` with no warnings other than the expected."""
    with warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        env = spec_of(env_id).make()
        # adapted: a raw id as Gymnasium checks its own, an RL id as the stack (its view)
        check_env(env.unwrapped if env_id in RAW_IDS else env, skip_render_check=True)
        env.close()
    pattern = re.compile("|".join(CHECK_ENV_IGNORE_WARNINGS))
    for warning in caught_warnings:
        if not pattern.search(str(warning.message)):
            raise gym.error.Error(f"Unexpected warning: {warning.message}")


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_all_env_passive_env_checker(env_id):
    with warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        env = gym.make(env_id)
        env.reset()
        env.step(env.action_space.sample())
        env.close()
    for warning in caught_warnings:
        if not any(re.search(p, str(warning.message)) for p in PASSIVE_CHECK_IGNORE_WARNING):
            raise ValueError(f"Unexpected warning: {warning.message}")


SEED = 0
NUM_STEPS = 50


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_env_determinism_rollout(env_id):
    """Two envs made alike, reset with one seed and given the same actions, agree exactly."""
    env_spec = spec_of(env_id)
    assert env_spec.nondeterministic is False
    env_1 = env_spec.make(disable_env_checker=True)
    env_2 = env_spec.make(disable_env_checker=True)

    initial_obs_1, initial_info_1 = env_1.reset(seed=SEED)
    initial_obs_2, initial_info_2 = env_2.reset(seed=SEED)
    assert data_equivalence(initial_obs_1, initial_obs_2, exact=True)
    assert data_equivalence(initial_info_1, initial_info_2, exact=True)

    env_1.action_space.seed(SEED)
    for time_step in range(NUM_STEPS):
        action = env_1.action_space.sample()
        obs_1, rew_1, terminated_1, truncated_1, info_1 = env_1.step(action)
        obs_2, rew_2, terminated_2, truncated_2, info_2 = env_2.step(action)
        assert data_equivalence(obs_1, obs_2, exact=True), f"[{time_step}] {obs_1} {obs_2}"
        assert env_1.observation_space.contains(obs_1)
        assert rew_1 == rew_2, f"[{time_step}] reward 1={rew_1}, reward 2={rew_2}"
        assert terminated_1 == terminated_2 and truncated_1 == truncated_2
        assert data_equivalence(info_1, info_2, exact=True), f"[{time_step}] infos differ"
        if terminated_1 or truncated_1:
            env_1.reset(seed=SEED)
            env_2.reset(seed=SEED)
    env_1.close()
    env_2.close()


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_pickle_env(env_id, dumps):
    """The stack ``gym.make`` returns pickles mid-episode and goes on exactly as the original.

    Adapted: Gymnasium pickles ``env.unwrapped`` right after it is made (so
    it missed the RL ids' unpicklable view); here the whole stack, after 3
    steps (and before any reset, as Gymnasium's), with the standard ``pickle`` and
    with ``cloudpickle``; then 5
    more steps of both (past the horizon of no default) must agree, and a
    reset with a seed too.
    """
    env = gym.make(env_id)
    fresh = pickle.loads(dumps(env))  # (as Gymnasium's: before any reset)
    assert data_equivalence(env.reset(seed=123), fresh.reset(seed=123), exact=True)
    env.action_space.seed(123)
    for _ in range(3):
        env.step(env.action_space.sample())
    pickled_env = pickle.loads(dumps(env))
    for _ in range(5):
        action = env.action_space.sample()
        step, pickled_step = env.step(action), pickled_env.step(action)
        assert data_equivalence(step, pickled_step, exact=True)
    assert data_equivalence(env.reset(seed=7), pickled_env.reset(seed=7), exact=True)
    env.close()
    pickled_env.close()


# ----------------------------------------------------------------------------- test_rendering.py
def check_rendered(rendered_frame: Any, mode: str) -> None:
    """Check that the rendered frame is as expected (the modes these envs offer)."""
    if mode == "rgb_array":
        assert isinstance(rendered_frame, np.ndarray)
        assert len(rendered_frame.shape) == 3
        assert rendered_frame.shape[2] == 3
        assert np.all(rendered_frame >= 0) and np.all(rendered_frame <= 255)
    elif mode == "ansi":
        assert isinstance(rendered_frame, str)
        assert len(rendered_frame) > 0
    else:  # pragma: no cover - a new mode must be added here
        raise AssertionError(f"Unknown render mode: {mode}, add a case to check_rendered")


@pytest.mark.parametrize(
    "env_id",
    RAW_IDS
    + RL_SAMPLE
    + [pytest.param(i, marks=pytest.mark.slow) for i in RL_IDS if i not in RL_SAMPLE],
)
def test_render_modes(env_id):
    """Every mode of ``metadata["render_modes"]`` renders right after reset and after a step.

    (An rgb frame is a matplotlib draw, about 0.2 s: the raw ids and one plain and
    one ``-Discrete`` RL id of each family in the default run, every id with ``-m slow``.)
    """
    spec = spec_of(env_id)
    env = spec.make()
    assert "rgb_array" in env.metadata["render_modes"]
    for mode in env.metadata["render_modes"]:
        if mode != "human":
            new_env = spec.make(render_mode=mode)
            try:
                new_env.reset()
                rendered = new_env.render()
                check_rendered(rendered, mode)

                new_env.step(new_env.action_space.sample())
                rendered = new_env.render()
                check_rendered(rendered, mode)
            finally:
                new_env.close()
    env.close()


# ----------------------------------------------------------------------------- registration
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_spec(env_id):
    spec = gym.spec(env_id)
    assert spec.id == env_id
    assert spec is gym.envs.registry[env_id]
    # (test_check_can_jsonify) the entry points are strings: every spec serialises
    assert isinstance(spec.entry_point, str)
    assert EnvSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_env_spec_to_from_json(env_id):
    for env_spec in (
        gym.spec(env_id),
        gym.make(env_id).spec,
        gym.wrappers.NormalizeReward(gym.make(env_id)).spec,
    ):
        assert env_spec is not None
        assert EnvSpec.from_json(env_spec.to_json()) == env_spec


@pytest.mark.parametrize("env_id", RAW_IDS + RL_SAMPLE)
def test_full_integration(env_id):
    """A wrapped env's spec stack round-trips through JSON and remakes the same env."""
    env = gym.make(env_id, render_mode="rgb_array")
    env = gym.wrappers.TimeAwareObservation(env)
    env = gym.wrappers.NormalizeReward(env, gamma=0.8)

    env_spec = env.spec
    assert isinstance(env_spec, EnvSpec)
    # adapted: an RL id's entry point adds its own wrappers (HideOracle, the view), which
    # the spec lists first and gym.make(spec) leaves to the entry point
    prior = len(gym.make(env_id).spec.additional_wrappers)
    assert (prior == 0) == (env_id in RAW_IDS)
    assert len(env_spec.additional_wrappers) == prior + 2
    assert [w.name for w in env_spec.additional_wrappers[prior:]] == [
        "TimeAwareObservation",
        "NormalizeReward",
    ]
    recreate_env_spec = EnvSpec.from_json(env_spec.to_json())
    assert env_spec.additional_wrappers == recreate_env_spec.additional_wrappers
    assert recreate_env_spec == env_spec

    recreated_env = gym.make(recreate_env_spec)
    assert recreated_env.render_mode == "rgb_array"
    assert isinstance(recreated_env, gym.wrappers.NormalizeReward)
    assert recreated_env.gamma == 0.8
    assert isinstance(recreated_env.env, gym.wrappers.TimeAwareObservation)
    assert type(recreated_env.unwrapped) is type(env.unwrapped)

    obs, info = env.reset(seed=42)
    recreated_obs, recreated_info = recreated_env.reset(seed=42)
    assert data_equivalence(obs, recreated_obs)
    assert data_equivalence(info, recreated_info)

    action = env.action_space.sample()
    assert data_equivalence(env.step(action), recreated_env.step(action))
    assert env_spec.pprint(disable_print=True) == recreate_env_spec.pprint(disable_print=True)


@pytest.mark.parametrize("env_id", RAW_IDS + RL_SAMPLE)
def test_pickling_env_stack(env_id):
    """Gymnasium's wrappers over an id, pickled before reset, behave as the original.

    (Gymnasium's test pickles with ``dill``, not installed here: Gymnasium's own
    ``FlattenObservation`` keeps a lambda, which the standard ``pickle`` refuses.
    ``cloudpickle`` here, what ``AsyncVectorEnv`` and SB3's ``SubprocVecEnv`` use;
    the ids themselves pickle with the standard ``pickle``: ``test_pickle_env``.)
    """
    env = gym.make(env_id, render_mode="rgb_array")
    env = gym.wrappers.FlattenObservation(env)
    env = gym.wrappers.TimeAwareObservation(env)
    env = gym.wrappers.NormalizeReward(env, gamma=0.8)

    pickled_env = pickle.loads(cloudpickle.dumps(env))

    obs, info = env.reset(seed=123)
    pickled_obs, pickled_info = pickled_env.reset(seed=123)
    assert data_equivalence(obs, pickled_obs)
    assert data_equivalence(info, pickled_info)

    action = env.action_space.sample()
    assert data_equivalence(env.step(action), pickled_env.step(action))
    env.close()
    pickled_env.close()


# ----------------------------------------------------------------------------- test_make_vec.py
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_make_vec_env_id(env_id):
    env = gym.make_vec(env_id)
    assert env.num_envs == 1
    # lending's vector entry point (a SyncVectorEnv by default), Gymnasium's sync otherwise;
    # the RL ids of the families with a native vector env get it, every view and twin (issue 36)
    native = {
        "OneSidedLending": "LendingRLVectorEnv",
        "AppleTasting": "AppleRLVectorEnv",
        "RejectOption": "RejectRLVectorEnv",
        "DelayedImpactLending": "ImpactRLVectorEnv",
        "MultiServiceChoice": "ServicesRLVectorEnv",
        "MultiServiceChoice-Retention": "RetentionRLVectorEnv",
    }
    family = env_id.split("-RL-")[0]
    if "-RL-" in env_id and family in native:
        assert type(env).__name__ == native[family]
    else:
        assert isinstance(env, SyncVectorEnv)
    env.close()


@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize(
    "vectorization_mode", ["sync", pytest.param("async", marks=pytest.mark.slow)]
)
@pytest.mark.parametrize("env_id", RAW_IDS + RL_SAMPLE)
def test_make_vec_num_envs(env_id, num_envs, vectorization_mode):
    env = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=vectorization_mode)
    assert env.num_envs == num_envs
    if vectorization_mode == "async":
        assert isinstance(env, AsyncVectorEnv)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()


@pytest.mark.parametrize("env_id", RAW_IDS + RL_SAMPLE)
def test_make_vec_render_mode(env_id):
    envs = gym.make_vec(env_id, vectorization_mode="sync")
    assert envs.render_mode is None
    envs.close()
    envs = gym.make_vec(env_id, render_mode="rgb_array", vectorization_mode="sync")
    assert envs.render_mode == "rgb_array"
    envs.close()


@pytest.mark.parametrize("env_id", RAW_IDS + RL_SAMPLE)
def test_make_vec_wrappers(env_id):
    env = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync")
    assert isinstance(env, SyncVectorEnv)
    assert len(env.envs) == 2
    sub_env = env.envs[0]
    assert isinstance(sub_env, gym.Env)
    assert sub_env.spec is not None
    # (Gymnasium asks for a TimeLimit wherever the spec has a limit; these envs truncate at
    # their own horizon, which the spec reports, and gym.make adds no TimeLimit over it)
    assert sub_env.spec.max_episode_steps is not None
    assert not any(isinstance(layer, TransformObservation) for layer in _layers(sub_env))
    env.close()

    space = sub_env.observation_space
    env = gym.make_vec(
        env_id,
        num_envs=2,
        vectorization_mode="sync",
        wrappers=[
            lambda _env: TransformObservation(
                _env,
                lambda obs: obs,  # a Dict (services' raw observation) passes as it is
                space,
            )
        ],
    )
    assert isinstance(env, SyncVectorEnv)
    assert all(
        any(isinstance(layer, TransformObservation) for layer in _layers(sub)) for sub in env.envs
    )
    env.close()


def _layers(env: gym.Env) -> list[gym.Env]:
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"num_envs": 3},
        {"vectorization_mode": "sync"},
        {"vectorization_mode": "sync", "vector_kwargs": {"copy": False}},
        {"vectorization_mode": "sync", "wrappers": (gym.wrappers.TimeAwareObservation,)},
        {"render_mode": "rgb_array", "vectorization_mode": "sync"},
        {"vectorization_mode": "sync", "max_episode_steps": 5},
    ],
    ids=["default", "num_envs", "sync", "no-copy", "wrappers", "render", "max_steps"],
)
@pytest.mark.parametrize("env_id", RAW_IDS + RL_SAMPLE)
def test_make_vec_with_spec(env_id, kwargs):
    envs = gym.make_vec(env_id, **kwargs)
    assert envs.spec is not None
    recreated_envs = gym.make_vec(envs.spec)

    assert envs.spec == recreated_envs.spec
    assert envs.num_envs == recreated_envs.num_envs
    assert type(envs) is type(recreated_envs)
    assert envs.observation_space == recreated_envs.observation_space
    assert envs.single_observation_space == recreated_envs.single_observation_space
    assert envs.action_space == recreated_envs.action_space
    assert envs.single_action_space == recreated_envs.single_action_space
    assert envs.render_mode == recreated_envs.render_mode
    envs.close()
    recreated_envs.close()


def test_time_limit_is_not_added_twice():
    """(test_make_vec_wrappers' TimeLimit) ``max_episode_steps`` given: Gymnasium's TimeLimit."""
    env = gym.make_vec(RAW_IDS[0], num_envs=1, vectorization_mode="sync", max_episode_steps=5)
    assert sum(isinstance(layer, TimeLimit) for layer in _layers(env.envs[0])) == 1
    env.close()
