"""OneSidedLending's configs: two world types, frozen and checked, equal to the keywords."""

from __future__ import annotations

import dataclasses
import inspect

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs.lending import DatasetLending, OneSidedLendingEnv, SyntheticLending
from osfb_gym.envs.lending.config import ARGUMENTS, lending_config


def _episode(env: gym.Env, seed: int = 1, steps: int = 12) -> list:
    obs, info = env.reset(seed=seed)
    out = [obs, info["feedback"]["warm_start"]["y"]]
    actions = np.random.default_rng(seed)
    for _ in range(steps):
        action = actions.integers(0, 2, env.action_space.shape)
        obs, reward, terminated, truncated, info = env.step(action)
        out += [obs, reward, info["oracle"]["loss"], info["feedback"]["y"]]
        if terminated or truncated:
            break
    return out


@pytest.mark.parametrize(
    ("kwargs", "config"),
    [
        (
            {"link": "linear", "batch_size": 3, "scenario": "greedy_trap", "world_seed": 2},
            SyntheticLending(link="linear", batch_size=3, scenario="greedy_trap", world_seed=2),
        ),
        (
            {"dataset": "breast_cancer", "batch_size": 20, "last_batch": "drop"},
            DatasetLending(dataset="breast_cancer", batch_size=20, last_batch="drop"),
        ),
    ],
)
def test_a_config_and_its_keywords_make_the_same_env(kwargs, config):
    by_keywords = gym.make("OneSidedLending-v0", **kwargs)
    by_config = gym.make("OneSidedLending-v0", config=config)
    assert by_keywords.unwrapped.config == config == by_config.unwrapped.config
    for a, b in zip(_episode(by_keywords), _episode(by_config), strict=True):
        np.testing.assert_array_equal(a, b)  # the same code path: bit for bit


def test_the_keywords_pick_the_world_type():
    assert isinstance(OneSidedLendingEnv().config, SyntheticLending)
    env = OneSidedLendingEnv(dataset="breast_cancer")
    assert isinstance(env.config, DatasetLending) and env.config.dataset == "breast_cancer"


def test_a_config_is_frozen_and_its_checks_are_idempotent():
    config = SyntheticLending(batch_size=np.int64(4), horizon=None)
    assert type(config.batch_size) is int and config.horizon == 2000 and config.warm_start == 20
    assert dataclasses.replace(config) == config  # a checked config checks again to itself
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.batch_size = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda: SyntheticLending(batch_size=0), "batch_size"),
        (lambda: SyntheticLending(scenario="greedy_trap", dim=1), "dim"),
        (lambda: SyntheticLending(link="logistic", noise_std=1.0), "noise_std"),
        (lambda: SyntheticLending(cutoff=0.5, cutoff_quantile=0.5), "cutoff"),
        (lambda: SyntheticLending(warm_start=0.1), "warm_start"),
        (lambda: DatasetLending(dataset=3), "dataset"),
        (lambda: DatasetLending(dataset="german", scaling="minmax"), "scaling"),
        (lambda: DatasetLending(dataset="german", cutoff=2.0), "cutoff"),
    ],
)
def test_a_config_refuses_bad_values_when_made_naming_them(make, named):
    with pytest.raises((ValueError, TypeError), match=named):
        make()


def test_world_types_take_only_their_own_arguments():
    with pytest.raises(TypeError, match="scaling"):
        SyntheticLending(scaling="robust")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="beta_norm"):
        DatasetLending(dataset="german", beta_norm=3.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="dataset"):
        DatasetLending()  # type: ignore[call-arg]


def test_a_config_beside_other_keywords_is_refused_naming_them():
    with pytest.raises(TypeError, match="batch_size"):
        OneSidedLendingEnv(batch_size=3, config=SyntheticLending())
    with pytest.raises(TypeError, match="config"):
        OneSidedLendingEnv(config={"batch_size": 3})  # type: ignore[arg-type]


def test_the_env_signature_and_the_configs_agree_on_every_default():
    """The keywords are the configs' fields with the same defaults (None: resolved later)."""
    parameters = inspect.signature(OneSidedLendingEnv).parameters
    assert set(ARGUMENTS) == set(parameters) - {"render_mode", "render_truth", "config"}
    for cls in (SyntheticLending, DatasetLending):
        for field in dataclasses.fields(cls):
            default = parameters[field.name].default
            if field.default is not dataclasses.MISSING and default is not None:
                assert field.default == default, field.name
    assert lending_config() == SyntheticLending()
