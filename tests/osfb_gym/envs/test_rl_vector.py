"""Every RL id with a native vector env equals SyncVectorEnv over the single RL id.

The ids are read from the registry (each RL entry with a
``vector_entry_point``), so an id that gets a native env is covered here for
free. Same seeds, same actions: the same observations, rewards,
terminations, truncations and infos with their ``_key`` masks, bit for bit
(the native envs draw with each sub-env's generator and compute the single
env's arithmetic in its order; a view is each sub-env's own), through
autoresets in both autoreset modes.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import RL_ENVS
from osfb_gym.envs._native_vector import NativeRLVectorEnv, native_supported
from tests.helpers import assert_same

#: base id -> keyword sets of its synthetic world the native env covers
WORLDS: dict[str, list[dict[str, Any]]] = {
    "OneSidedLending-v0": [
        {"horizon": 7},
        {"horizon": 5, "batch_size": 3, "link": "linear", "noise_std": 0.5},
        {"horizon": 4, "batch_size": 2, "feedback": "full", "dim": 3},
        {"horizon": 6, "world_seed": 11, "cutoff_quantile": 0.5},
    ],
    "AppleTasting-v0": [
        {"horizon": 7},
        {"horizon": 300},  # past the first chunk of 256 examples
        {"horizon": 7, "scenario": "gappy", "noise": 0.2, "gain": 2.0, "cost_fp": 3.0, "dim": 3},
        {"horizon": 5, "feedback": "full", "world_seed": 4, "scenario": "minority"},
        {"horizon": 6, "scenario": "striped"},
    ],
    "RejectOption-v0": [
        {"horizon": 7},
        {"horizon": 300},  # past the first chunk of 256 examples
        {"horizon": 5, "d": 0.4, "query_cost": 0.1, "scenario": "separable", "noise": 0.1},
        {"horizon": 4, "feedback": "full", "world_seed": 4, "dim": 3},
        {"horizon": 6, "settle": "never", "separation": 1.0},
    ],
    "DelayedImpactLending-v0": [
        {"horizon": 7},
        {"horizon": 5, "batch_size": 3, "shift_mass": 0.2},  # big moves: a bin's whole mass moves
        {"horizon": 4, "batch_size": 2, "feedback": "full", "scenario": "bin_shift"},
        {"horizon": 6, "loan_gain": 2.0, "default_loss": 1.0, "repay_score_change": 50.0},
        {"horizon": 5, "dataset": "fico", "groups": ["Black", "White", "Asian"]},
    ],
    "MultiServiceChoice-v0": [
        {"n_users": 12, "n_services": 3},
        {"n_users": 10, "n_services": 4, "report": "excess", "reveal_groups": True},
        {"n_users": 9, "n_services": 3, "loss": "huber", "world_seed": 2},
        {"n_users": 8, "n_services": 2, "loss": "mahalanobis", "dynamics_rounds": 2},
    ],
    "MultiServiceChoice-Retention-v0": [
        {"n_users": 10, "n_services": 3, "horizon": 6},
        {"n_users": 8, "n_services": 2, "horizon": 5, "replace": True, "reveal_groups": True},
        {
            "n_users": 9,
            "n_services": 3,
            "horizon": 4,
            "leave_probability": 0.9,
            "return_probability": 0.5,
        },
    ],
}
#: the RL ids with a native vector env, and their base ids
NATIVE = {entry.id: str(entry.kwargs["env_id"]) for entry in RL_ENVS if entry.vector_entry_point}
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]


def small(env_id: str) -> dict[str, Any]:
    """The first world of ``env_id``'s family: a short episode."""
    return WORLDS[NATIVE[env_id]][0]


def length(kwargs: dict[str, Any]) -> int:
    """An episode's steps under ``kwargs`` (services: one per service)."""
    return int(kwargs.get("horizon") or kwargs["n_services"])


def _cases() -> list[Any]:
    """Every native id with its family's first world; the plain ids with all of them."""
    cases = []
    for env_id, base in NATIVE.items():
        worlds = WORLDS[base]
        plain = gym.spec(env_id).kwargs.get("view") == "plain"
        for k, kwargs in enumerate(worlds if plain else worlds[:1]):
            marks = [pytest.mark.slow] if length(kwargs) > 100 and not plain else []
            cases.append(pytest.param(env_id, kwargs, id=f"{env_id}-{k}", marks=marks))
    return cases


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


def pair(
    env_id: str, mode: AutoresetMode, num_envs: int, **kwargs: Any
) -> tuple[Any, SyncVectorEnv]:
    """The native vector env of ``env_id`` and the sync env over its single env."""
    native = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=mode, **kwargs)
    sync = SyncVectorEnv(
        [lambda: gym.make(env_id, **kwargs) for _ in range(num_envs)], autoreset_mode=mode
    )
    return native, sync


def test_the_native_ids_are_the_families_with_a_native_env():
    assert set(NATIVE.values()) == set(WORLDS)
    # lending 6, apple 3, reject 6, delayed impact 6, services 3, retention 1: views, twins
    assert len(NATIVE) == 25


# crossimpl: two implementations of one world (batched and single) that must stay equal
# bit for bit because they run the same float operations in the same order; .ci/run
# checks that again under another SIMD dispatch
@pytest.mark.crossimpl
@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.value)
@pytest.mark.parametrize(("env_id", "kwargs"), _cases())
def test_equals_sync_vector_env_through_autoresets(env_id, kwargs, mode):
    native, sync = pair(env_id, mode, 5, **kwargs)
    assert isinstance(native, NativeRLVectorEnv)
    assert native.metadata["autoreset_mode"] == mode
    assert native.single_observation_space == sync.single_observation_space
    assert native.single_action_space == sync.single_action_space
    assert native.observation_space == sync.observation_space
    assert native.action_space == sync.action_space
    seeds = [3, 1, 4, 1, 5]  # a repeated seed: two sub-envs with one stream
    same(native.reset(seed=seeds), sync.reset(seed=seeds), "reset")
    native.action_space.seed(0)
    ends = 0
    for t in range(2 * length(kwargs) + 3):
        actions = native.action_space.sample()
        result = native.step(actions)
        same(result, sync.step(actions), f"step {t}")
        ends += int((result[2] | result[3]).any())
    assert ends >= 2  # the comparison crossed autoresets
    # a reset without seeds goes on from each sub-env's generator, as the sync env's
    same(native.reset(), sync.reset(), "reset()")
    actions = native.action_space.sample()
    same(native.step(actions), sync.step(actions), "after reset()")


@pytest.mark.crossimpl
@pytest.mark.parametrize("env_id", list(NATIVE))
def test_binary_as_multidiscrete_equals_the_sync_env(env_id):
    """RecurrentPPO's action space (``MultiDiscrete([2] * n)`` for ``MultiBinary(n)``)."""
    native, sync = pair(
        env_id, AutoresetMode.SAME_STEP, 3, binary_as_multidiscrete=True, **small(env_id)
    )
    assert isinstance(native, NativeRLVectorEnv)
    assert native.single_action_space == sync.single_action_space
    same(native.reset(seed=0), sync.reset(seed=0), "reset")
    native.action_space.seed(2)
    for t in range(9):
        actions = native.action_space.sample()
        same(native.step(actions), sync.step(actions), f"step {t}")


@pytest.mark.parametrize("env_id", list(NATIVE))
def test_returned_arrays_are_the_callers(env_id):
    """Writing into what a step returned changes nothing the env steps on."""
    native, sync = pair(env_id, AutoresetMode.NEXT_STEP, 2, **small(env_id))
    obs, _ = native.reset(seed=[0, 1])
    sync.reset(seed=[0, 1])
    native.action_space.seed(1)
    for _ in range(4):
        actions = native.action_space.sample()
        obs, reward, _, _, info = native.step(actions)
        expected = sync.step(actions)
        same((obs, reward, info), (expected[0], expected[1], expected[4]))
        obs[:] = 99.0
        reward[:] = 99.0
        for value in info["feedback"].values():
            value[...] = 1


@pytest.mark.parametrize("env_id", list(NATIVE))
def test_native_false_and_unsupported_keywords_give_the_sync_env(env_id):
    kwargs = small(env_id)
    assert isinstance(gym.make_vec(env_id, num_envs=2, **kwargs), NativeRLVectorEnv)
    sync = gym.make_vec(env_id, num_envs=2, native=False, autoreset_mode="SameStep", **kwargs)
    assert isinstance(sync, SyncVectorEnv)
    assert sync.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert isinstance(gym.make_vec(env_id, num_envs=2, render_mode="ansi"), SyncVectorEnv)


def test_native_supported_names_the_first_single_only_keyword():
    single_only = {"dataset": None, "order": "random", "render_mode": None}
    assert native_supported({}, single_only) is None
    assert native_supported({"dataset": None, "order": "random", "dim": 3}, single_only) is None
    assert native_supported({"dataset": np.zeros(3)}, single_only) == "dataset"  # not elementwise
    assert native_supported({"render_mode": "ansi", "order": "sorted"}, single_only) == "order"
    assert (
        native_supported({"order": "random", "render_mode": "ansi"}, single_only) == "render_mode"
    )


@pytest.mark.parametrize("family", ["apple", "delayed_impact", "lending", "reject", "services"])
def test_each_family_reports_its_single_only_keywords(family):
    module = importlib.import_module(f"osfb_gym.envs.{family}.rl_vector")
    assert "render_mode" in module.SINGLE_ONLY  # renders are always the single env's
    assert module.native_supported(dict(module.SINGLE_ONLY)) is None
    for name in module.SINGLE_ONLY:
        assert module.native_supported({name: "another"}) == name


def test_services_needs_a_view_and_names_its_own_id():
    from osfb_gym.envs.services.rl_vector import RetentionRLVectorEnv, ServicesRLVectorEnv

    with pytest.raises(TypeError, match="view must be given"):
        ServicesRLVectorEnv(2)
    with pytest.raises(ValueError, match="MultiServiceChoice-Retention-RL-v0"):
        RetentionRLVectorEnv(2, render_mode="ansi")


@pytest.mark.parametrize("env_id", list(NATIVE))
def test_bad_arguments_name_the_parameter(env_id):
    kwargs = small(env_id)
    cls = type(gym.make_vec(env_id, num_envs=1, **kwargs))
    with pytest.raises(ValueError, match="num_envs"):
        cls(0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        cls(2, autoreset_mode="Disabled")
    with pytest.raises(TypeError, match="view"):
        cls(2, view="features")  # the class takes a factory: gym.make_vec makes it
    with pytest.raises(ValueError, match="view"):
        gym.make_vec(env_id, num_envs=2, view="pixels")
    with pytest.raises(TypeError, match="discrete_actions"):
        gym.make_vec(env_id, num_envs=2, discrete_actions="yes")
    with pytest.raises(TypeError, match="binary_as_multidiscrete"):
        gym.make_vec(env_id, num_envs=2, binary_as_multidiscrete=1)
    with pytest.raises(ValueError, match="render_mode"):
        cls(2, render_mode="ansi")
    with pytest.raises(ValueError, match="native=True"):
        gym.make_vec(env_id, num_envs=2, native=True, render_mode="ansi")
    envs = gym.make_vec(env_id, num_envs=2, **kwargs)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(envs.action_space.sample())
    envs.reset(seed=0)
    with pytest.raises((TypeError, ValueError), match="actions"):
        envs.step(np.full(envs.action_space.shape, 0.5))
    with pytest.raises(ValueError, match="actions"):
        envs.step(np.full(envs.action_space.shape, 1000))
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=[1, 2, 3])
