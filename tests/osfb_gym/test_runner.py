"""The runner: the only reader of the oracle; what agents receive; evaluation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from agents.base import Agent
from agents.lending import Greedy
from osfb_gym.runner import evaluate, run_episode, run_vector_episode


class Spy(Agent):
    """Records everything the runner hands it."""

    env_ids = ()

    def __init__(self) -> None:
        pass

    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.seen_ = [("reset", seed, feedback)]

    def act(self, observation):
        return self.rng_.integers(0, 2, size=len(observation)).astype(np.int8)

    def update(self, observation, action, reward, feedback):
        self.seen_.append(("update", observation, action, reward, feedback))


def test_agents_never_receive_the_oracle():
    env = gym.make("OneSidedLending-v0", batch_size=3, horizon=10)
    spy = Spy()
    trajectory = run_episode(env, spy, seed=0)
    assert len(spy.seen_) == 11
    _, agent_seed, reset_feedback = spy.seen_[0]
    assert agent_seed != 0  # independent of the env's stream
    assert set(reset_feedback) == {"warm_start", "cutoff", "link"}
    for _, _, action, _, feedback in spy.seen_[1:]:
        assert set(feedback) == {"y", "revealed", "valid"}
        np.testing.assert_array_equal(feedback["revealed"], action == 1)
        assert feedback["valid"].all()  # a synthetic world has no padding
    np.testing.assert_array_equal(trajectory.rewards, [s[3] for s in spy.seen_[1:]])


def test_trajectory_fields_agree_with_the_metrics():
    env = gym.make("OneSidedLending-v0", batch_size=4, horizon=50)
    trajectory = run_episode(env, Greedy(), seed=1)
    assert trajectory.rewards.shape == trajectory.oracle_loss.shape == (50,)
    assert trajectory.actions.shape == (50, 4)
    np.testing.assert_array_equal(trajectory.n_revealed, trajectory.actions.sum(axis=1))
    assert trajectory.metrics["cumulative_loss"] == pytest.approx(trajectory.oracle_loss.sum())
    assert trajectory.metrics["return"] == pytest.approx(trajectory.rewards.sum())
    assert trajectory.average_loss[-1] == pytest.approx(trajectory.oracle_loss.mean())


def test_max_steps_and_bad_seed():
    env = gym.make("OneSidedLending-v0")
    assert run_episode(env, Greedy(), seed=0, max_steps=7).rewards.size == 7
    with pytest.raises(ValueError, match="seed"):
        run_episode(env, Greedy(), seed=-1)


def test_evaluate_clones_the_agent_and_reproduces():
    agent = Greedy()
    kwargs = {"horizon": 20}
    first = evaluate("OneSidedLending-v0", agent, [0, 1, 2], env_kwargs=kwargs)
    second = evaluate("OneSidedLending-v0", agent, [0, 1, 2], env_kwargs=kwargs)
    assert not hasattr(agent, "model_")
    assert first.equals(second) and len(first) == 3
    with pytest.raises(ValueError, match="env_kwargs"):
        evaluate(gym.make("OneSidedLending-v0"), agent, [0], env_kwargs=kwargs)
    with pytest.raises(TypeError, match=r"^env_kwargs: OneSidedLending-v0 takes no argument "
                       r"'horizn'; its arguments: .*horizon"):  # fmt: skip
        evaluate("OneSidedLending-v0", agent, [0], env_kwargs={"horizn": 20})


class ApproveAll:
    """A vector agent (run_vector_episode's interface) that approves every applicant."""

    def reset(self, observation_space, action_space, *, seeds, feedback):
        self.shape_ = action_space.shape

    def act(self, observations):
        return np.ones((len(observations), *self.shape_), dtype=np.int8)

    def update(self, observations, actions, rewards, feedback):
        pass


def _vector(horizons, wrap=lambda env: env):
    makers = [lambda h=h: wrap(gym.make("OneSidedLending-v0", horizon=h)) for h in horizons]
    return gym.vector.SyncVectorEnv(makers)


def test_both_loops_refuse_an_env_that_hides_the_oracle():
    from osfb_gym.core.channels import HideOracle

    with pytest.raises(ValueError, match=r"info\['oracle'\]"):
        run_episode(HideOracle(gym.make("OneSidedLending-v0", horizon=3)), Greedy(), seed=0)
    with pytest.raises(ValueError, match=r"info\['oracle'\]"):
        run_vector_episode(_vector([3, 3], HideOracle), ApproveAll(), seed=0)


def test_vector_episodes_must_end_together():
    trajectories = run_vector_episode(_vector([3, 3]), ApproveAll(), seed=[0, 1])
    assert [t.rewards.shape for t in trajectories] == [(3,), (3,)]
    assert [t.seed for t in trajectories] == [0, 1]
    np.testing.assert_array_equal(trajectories[0].n_revealed, [1, 1, 1])
    with pytest.raises(RuntimeError, match=r"end together; sub-envs \[0\] ended alone"):
        run_vector_episode(_vector([2, 4]), ApproveAll(), seed=0)
