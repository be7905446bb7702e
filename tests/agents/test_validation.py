"""Bad input to every agent: hyperparameters at reset, observations and feedback at each step.

Generic over every agent (``all_agents``), so a new agent is covered as soon
as it exists: calls before ``reset``, every hyperparameter of its table,
non-finite observations, non-finite and out-of-range revealed labels.
"""

from __future__ import annotations

import copy
import math
import pickle
from numbers import Real
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import osfb_gym  # noqa: F401  (registers the env ids)
from agents.base import Agent, Interval, NotResetError, all_agents
from agents.lending import Adaptive, Greedy, Margin
from agents.lending._fast.replicas import CutoffReplicas
from agents.reject import DRAL, DSAL
from agents.rl import SB3Agent
from agents.services import AcQUIre, Uniform
from tests.agents.test_generic import SMALL

AGENTS = [cls for cls in all_agents() if cls is not SB3Agent]
IDS = {"ids": lambda value: getattr(value, "__name__", str(value))}
# an action that makes each labelled family reveal the label(s) of the step
REVEALING = {
    "OneSidedLending-v0": lambda env: np.ones(env.action_space.shape, dtype=np.int8),
    "AppleTasting-v0": lambda env: 1,
    "RejectOption-v0": lambda env: np.array([1, 1]),
}
LABELLED = [cls for cls in AGENTS if cls.env_ids[0] in REVEALING]


def started(cls: type[Agent], **env_kwargs: Any) -> tuple[Agent, gym.Env, Any]:
    env_id = cls.env_ids[0]
    env = gym.make(env_id, **{**SMALL[env_id], **env_kwargs})
    observation, info = env.reset(seed=0)
    agent = cls()
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    return agent, env, observation


def poisoned(observation: Any, value: float) -> Any:
    """A copy of ``observation`` with its first number replaced by ``value``."""
    if isinstance(observation, dict):
        losses = np.array(observation["losses"], dtype=float)
        losses[0] = value
        return {**observation, "losses": losses}
    array = np.array(observation, dtype=float)
    array.flat[0] = value
    return array


def revealing_step(agent: Agent, env: gym.Env, observation: Any) -> tuple[Any, float, dict, Any]:
    action = REVEALING[env.spec.id](env)
    agent.act(observation)
    next_observation, reward, _, _, info = env.step(action)
    return action, float(reward), dict(info["feedback"]), next_observation


def with_label(feedback: dict, value: float) -> dict:
    """``feedback`` with every revealed label replaced by ``value``."""
    y = feedback["y"]
    if np.ndim(y):
        y = np.where(feedback["revealed"], value, np.asarray(y, dtype=float))
    else:
        y = value
    return {**feedback, "y": y}


# ---------------------------------------------------------------------------- before reset
@pytest.mark.parametrize("cls", AGENTS, **IDS)
def test_act_and_update_before_reset_say_so(cls):
    env = gym.make(cls.env_ids[0], **SMALL[cls.env_ids[0]])
    observation, _ = env.reset(seed=0)
    action = env.action_space.sample()
    _, reward, _, _, info = env.step(action)
    with pytest.raises(NotResetError, match=r"act\(\) was called before reset\(\)"):
        cls().act(observation)
    with pytest.raises(NotResetError, match=r"update\(\) was called before reset\(\)"):
        cls().update(observation, action, reward, info["feedback"])


# ---------------------------------------------------------------------------- hyperparameters
def bad_values(constraints: list[Any]) -> list[Any]:
    """Values outside every constraint of a hyperparameter's table entry."""
    values: list[Any] = ["not-a-valid-value"]
    for constraint in constraints:
        if isinstance(constraint, Interval):
            values.append(True)
            if constraint.left is not None:
                values.append(constraint.left - 1)
            if constraint.right is not None:
                values.append(constraint.right + 1)
            if constraint.type is Real:
                values.append(math.nan)
    return values


PARAMS = [
    (cls, name, value)
    for cls in AGENTS
    for name, constraints in cls._parameter_constraints.items()
    for value in bad_values(constraints)
]


@pytest.mark.parametrize(("cls", "name", "value"), PARAMS, **IDS)
def test_every_hyperparameter_is_checked_at_reset(cls, name, value):
    env = gym.make(cls.env_ids[0], **SMALL[cls.env_ids[0]])
    _, info = env.reset(seed=0)
    agent = cls(**{name: value})  # stored unchanged, like scikit-learn
    assert getattr(agent, name) is value
    with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter of {cls.__name__}"):
        agent.reset(env.observation_space, env.action_space, feedback=info["feedback"])


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        (Adaptive(horizon=-10), "horizon"),
        (Adaptive(delta=math.nan), "delta"),
        (Adaptive(beta_bound=-1), "beta_bound"),
        (Adaptive(project="yes"), "project"),
        (Uniform(allow_repeats="yes"), "allow_repeats"),
        (AcQUIre(allow_repeats=1), "allow_repeats"),
        (DSAL(eta=0.1, eta_min=0.2), "eta_min"),
        (DRAL(budget=5), "budget"),
        (DRAL(kernel="rbf", kernel_params=[1]), "kernel_params"),
    ],
    **IDS,
)
def test_the_issues_bad_hyperparameters_are_refused_by_name(agent, name):
    env = gym.make(agent.env_ids[0], **SMALL[agent.env_ids[0]])
    _, info = env.reset(seed=0)
    with pytest.raises(ValueError, match=name):
        agent.reset(env.observation_space, env.action_space, feedback=info["feedback"])


# ---------------------------------------------------------------------------- observations
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("cls", AGENTS, **IDS)
def test_act_on_a_non_finite_observation_names_it(cls, value):
    agent, _, observation = started(cls)
    with pytest.raises(ValueError, match="observation"):
        agent.act(poisoned(observation, value))


# ---------------------------------------------------------------------------- revealed labels
@pytest.mark.parametrize("label", [math.nan, math.inf, 2.0])
@pytest.mark.parametrize("cls", LABELLED, **IDS)
def test_a_bad_revealed_label_is_refused_and_nothing_is_learned(cls, label):
    agent, env, observation = started(cls)
    action, reward, feedback, next_observation = revealing_step(agent, env, observation)
    before = pickle.loads(pickle.dumps(agent))
    with pytest.raises(ValueError, match=r"y"):
        agent.update(observation, action, reward, with_label(feedback, label))
    # nothing was learned: the agent still decides as its copy from before the call
    assert np.array_equal(agent.act(next_observation), before.act(next_observation))


@pytest.mark.parametrize("cls", LABELLED, **IDS)
def test_a_revealed_non_finite_observation_is_refused(cls):
    agent, env, observation = started(cls)
    action, reward, feedback, _ = revealing_step(agent, env, observation)
    with pytest.raises(ValueError, match="observation"):
        agent.update(poisoned(observation, math.nan), action, reward, feedback)


def test_the_logistic_link_refuses_an_outcome_outside_0_1_and_the_linear_link_does_not():
    agent, env, observation = started(Greedy, link="logistic")
    action, reward, feedback, _ = revealing_step(agent, env, observation)
    with pytest.raises(
        ValueError, match=r"feedback\['y'\] must lie in \[0, 1\] under the logistic"
    ):
        agent.update(observation, action, reward, with_label(feedback, 2.0))
    agent, env, observation = started(Greedy, link="linear")
    action, reward, feedback, _ = revealing_step(agent, env, observation)
    agent.update(observation, action, reward, with_label(feedback, 2.0))
    assert np.isfinite(agent.beta_).all()
    with pytest.raises(ValueError, match=r"feedback\['y'\] must be finite"):
        agent.update(observation, action, reward, with_label(feedback, math.inf))


def test_a_non_finite_warm_start_is_refused_at_reset():
    env = gym.make("OneSidedLending-v0", **SMALL["OneSidedLending-v0"])
    _, info = env.reset(seed=0)
    feedback = copy.deepcopy(info["feedback"])
    start = feedback.get("warm_start", feedback)  # the warm start's keys, either layout
    start["y"][0] = math.nan
    with pytest.raises(ValueError, match="warm-start outcomes"):
        Greedy().reset(env.observation_space, env.action_space, feedback=feedback)


def test_services_refuse_an_action_that_is_no_user():
    agent, env, observation = started(Uniform)
    _, reward, _, _, info = env.step(agent.act(observation))
    with pytest.raises(ValueError, match=r"update: action must lie in Discrete\(\d+\)"):
        agent.update(observation, -1, reward, info["feedback"])


def test_replicas_refuse_non_finite_observations_and_outcomes():
    envs = gym.make_vec("OneSidedLending-v0", num_envs=2, horizon=10, batch_size=2)
    observations, info = envs.reset(seed=0)
    replicas = CutoffReplicas([Greedy(), Margin()])
    single = envs.single_observation_space, envs.single_action_space
    replicas.reset(*single, seeds=[0, 1], feedback=info["feedback"])
    with pytest.raises(ValueError, match="observations"):
        replicas.act(poisoned(observations, math.nan))
    actions = np.ones((2, 2), dtype=np.int8)
    observations_after, rewards, _, _, info = envs.step(actions)
    feedback = {"revealed": info["feedback"]["revealed"], "y": np.full((2, 2), math.nan)}
    with pytest.raises(ValueError, match=r"feedback\['y'\]"):
        replicas.update(observations, actions, rewards, feedback)


STREAM_AGENTS = [cls for cls in AGENTS if cls.env_ids[0] in ("AppleTasting-v0", "RejectOption-v0")]


@pytest.mark.parametrize("cls", STREAM_AGENTS, **IDS)
def test_stream_agents_refuse_an_observation_space_of_more_than_one_example(cls):
    env = gym.make(cls.env_ids[0])
    _, info = env.reset(seed=0)
    feedback = info.get("feedback")
    wide = gym.spaces.Box(-1, 1, (2, *env.observation_space.shape), np.float32)
    with pytest.raises(ValueError, match=r"one-dimensional Box observation_space"):
        cls().reset(wide, env.action_space, seed=0, feedback=feedback)
    cls().reset(env.observation_space, env.action_space, seed=0, feedback=feedback)  # the env's
