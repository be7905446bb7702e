"""The generic agent suite: every concrete Agent subclass is found and checked."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil

import gymnasium as gym
import numpy as np
import pytest

import agents
import osfb_gym  # noqa: F401  (registers the ids)
from agents.base import Agent
from agents.rl import SB3Agent
from osfb_gym.runner import run_episode
from tests.helpers import assert_same

SMALL = {
    "OneSidedLending-v0": {"horizon": 40, "batch_size": 3},
    "AppleTasting-v0": {"horizon": 300},
    "RejectOption-v0": {"horizon": 300},
    "MultiServiceChoice-v0": {"n_users": 60, "n_services": 5},
}


# SB3Agent acts only with a trained model, which its defaults cannot give;
# tests/agents/test_rl.py runs the same contract checks on trained models.
NEEDS_A_MODEL = {SB3Agent}


def discover() -> list[type[Agent]]:
    for module in pkgutil.walk_packages(agents.__path__, prefix="agents."):
        importlib.import_module(module.name)
    found, stack = [], list(Agent.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        # shared bases say so (abstract = True in their own body) or are private
        concrete = not cls.__dict__.get("abstract", False) and not cls.__name__.startswith("_")
        if concrete and cls.__module__.startswith("agents.") and cls not in NEEDS_A_MODEL:
            found.append(cls)
    return sorted(set(found), key=lambda cls: cls.__qualname__)


AGENTS = discover()
PAIRS = [(cls, env_id) for cls in AGENTS for env_id in cls.env_ids]


def test_discovery_finds_the_known_agents():
    names = {cls.__name__ for cls in AGENTS}
    assert {"Greedy", "Adaptive", "EpsilonGreedy", "Margin"} <= names
    assert "CutoffAgent" not in names


@pytest.mark.parametrize("cls", AGENTS, ids=lambda cls: cls.__name__)
def test_constructible_with_defaults_and_nothing_learned_in_init(cls):
    agent = cls()
    params = agent.get_params()
    assert set(vars(agent)) == set(params), "__init__ must only store hyperparameters"
    assert not any(name.endswith("_") for name in vars(agent))
    signature = inspect.signature(cls.__init__)
    for name, value in params.items():
        assert (
            signature.parameters[name].default is value
            or signature.parameters[name].default == value
        )


@pytest.mark.parametrize("cls", AGENTS, ids=lambda cls: cls.__name__)
def test_clone_is_equal_and_fresh(cls):
    agent = cls()
    assert cls.env_ids, f"{cls.__name__} declares no env_ids"
    env = gym.make(cls.env_ids[0], **SMALL.get(cls.env_ids[0], {}))
    run_episode(env, agent, seed=0)
    clone = agent.clone()
    assert type(clone) is cls and clone.get_params() == agent.get_params()
    assert set(vars(clone)) == set(clone.get_params())
    assert repr(clone) == repr(agent) and repr(agent).startswith(cls.__name__ + "(")


@pytest.mark.parametrize("cls", AGENTS, ids=lambda cls: cls.__name__)
def test_unknown_hyperparameter_is_rejected(cls):
    with pytest.raises(ValueError, match="no_such_thing"):
        cls().set_params(no_such_thing=1)


@pytest.mark.parametrize(("cls", "env_id"), PAIRS, ids=lambda p: getattr(p, "__name__", p))
def test_pickles_mid_episode_and_continues_identically(cls, env_id):
    env = gym.make(env_id, **SMALL.get(env_id, {}))
    agent = cls()
    obs, info = env.reset(seed=4)
    agent.reset(env.observation_space, env.action_space, seed=4, feedback=info["feedback"])
    for _ in range(5):
        action = agent.act(obs)
        next_obs, reward, _, _, info = env.step(action)
        agent.update(obs, action, reward, info["feedback"])
        obs = next_obs
    copy = pickle.loads(pickle.dumps(agent))
    assert_same(agent.act(obs), copy.act(obs))


@pytest.mark.parametrize(("cls", "env_id"), PAIRS, ids=lambda p: getattr(p, "__name__", p))
def test_runs_an_episode_and_seeded_runs_reproduce(cls, env_id):
    env = gym.make(env_id, **SMALL.get(env_id, {}))
    first = run_episode(env, cls(), seed=8)
    second = run_episode(env, cls(), seed=8)
    assert first.rewards.size > 0
    assert_same(first.actions, second.actions)
    assert_same(first.metrics, second.metrics)
    for action in first.actions:
        assert env.action_space.contains(np.asarray(action, dtype=env.action_space.dtype))
