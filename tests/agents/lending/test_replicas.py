"""CutoffReplicas: agents run as replicas decide and score exactly as they do alone."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from agents.apple import Perceptron
from agents.lending import (
    SGD,
    Adaptive,
    EpsilonGreedy,
    Greedy,
    LinUCB,
    Margin,
    Noise,
    OneSidedEpsilonGreedy,
    OneSidedNoise,
    Passive,
    ThompsonSampling,
)
from agents.lending.replicas import CutoffReplicas
from osfb_gym.runner import run_episode, run_vector_episode

ID = "OneSidedLending-v0"

AGENTS = [
    Greedy(),
    Greedy(l2=4.0),
    EpsilonGreedy(alpha=0.5),
    EpsilonGreedy(alpha=2.0),
    OneSidedEpsilonGreedy(alpha=0.25),
    Noise(alpha=1.0),
    OneSidedNoise(alpha=0.5),
    Margin(alpha=0.125),
    Adaptive(rho=0.25),
    Adaptive(rho="theory", horizon=300),
    Adaptive(rho=0.5, project=True, beta_bound=1.0),
    LinUCB(alpha=0.1),
    ThompsonSampling(nu=0.5),
    Passive(),
    SGD(),
]

SETTINGS = [
    pytest.param(dict(link="linear", horizon=300), id="linear"),
    pytest.param(dict(link="logistic", horizon=150, batch_size=4), id="logistic-batch"),
    pytest.param(dict(scenario="greedy_trap", link="linear", horizon=300), id="trap"),
    pytest.param(dict(dataset="breast_cancer", link="linear"), id="dataset"),
]


@pytest.mark.parametrize("kwargs", SETTINGS)
def test_replicas_decide_and_score_as_each_agent_alone(kwargs):
    envs = gym.make_vec(ID, num_envs=len(AGENTS), lockstep=True, **kwargs)
    replicas = CutoffReplicas([agent.clone() for agent in AGENTS])
    together = run_vector_episode(envs, replicas, seed=4)
    env = gym.make(ID, **kwargs)
    for agent, trajectory in zip(AGENTS, together, strict=True):
        alone = run_episode(env, agent.clone(), seed=4)
        np.testing.assert_array_equal(trajectory.actions, alone.actions, err_msg=repr(agent))
        np.testing.assert_array_equal(trajectory.rewards, alone.rewards, err_msg=repr(agent))
        np.testing.assert_array_equal(trajectory.oracle_loss, alone.oracle_loss)
        np.testing.assert_array_equal(trajectory.n_revealed, alone.n_revealed)
        assert trajectory.metrics == alone.metrics, agent


def test_replicas_on_different_seeds_are_the_agents_on_their_own_episodes():
    agents = [Greedy(), Noise(alpha=1.0), Adaptive(rho=0.5)]
    envs = gym.make_vec(ID, num_envs=3, horizon=100, link="linear", lockstep=True)
    together = run_vector_episode(envs, CutoffReplicas(agents), seed=[1, 2, 3])
    env = gym.make(ID, horizon=100, link="linear")
    for agent, trajectory, seed in zip(agents, together, [1, 2, 3], strict=True):
        assert trajectory.metrics == run_episode(env, agent.clone(), seed=seed).metrics


def test_the_adaptive_bonus_learns_what_greedy_misses_as_a_replica_too():
    """The trap of Theorem 1: Greedy stays wrong about the trapped type, Adaptive does not."""
    envs = gym.make_vec(ID, num_envs=2, scenario="greedy_trap", horizon=1000, lockstep=True)
    greedy, adaptive = run_vector_episode(
        envs, CutoffReplicas([Greedy(), Adaptive(rho=0.5)]), seed=0
    )
    assert adaptive.metrics["wrongly_denied"] < 0.2 * greedy.metrics["wrongly_denied"]


def test_bad_agents_and_seeds_are_named():
    with pytest.raises(ValueError, match="agents"):
        CutoffReplicas([])
    with pytest.raises(TypeError, match=r"agents\[1\].*Perceptron"):
        CutoffReplicas([Greedy(), Perceptron()])
    envs = gym.make_vec(ID, num_envs=2, horizon=5, lockstep=True)
    with pytest.raises(ValueError, match="seed"):
        run_vector_episode(envs, CutoffReplicas([Greedy(), Greedy()]), seed=[1, 2, 3])
