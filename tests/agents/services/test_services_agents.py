"""AcQUIre and its baselines: the paper's effects on seeded clustered populations."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from agents.services import AcQUIre, FairAcQUIre, GroupBalancedUniform, MaxLossGreedy, Uniform
from osfb_gym.runner import evaluate, run_episode

ENV = "MultiServiceChoice-v0"


def final_losses(agent, seeds=range(10), **kwargs) -> np.ndarray:
    frame = evaluate(ENV, agent, seeds, env_kwargs={"reference_restarts": 0, **kwargs})
    return frame["total_loss"].to_numpy()


@pytest.mark.parametrize("loss", ["squared", "mahalanobis"])
def test_acquire_beats_uniform_on_clustered_populations(loss):
    kwargs = {"n_users": 300, "n_services": 10, "loss": loss}
    acquire, uniform = final_losses(AcQUIre(), **kwargs), final_losses(Uniform(), **kwargs)
    assert acquire.mean() < 0.6 * uniform.mean()
    assert (acquire < uniform).mean() >= 0.8  # seed by seed, not only on average


def test_ratio_to_the_reference_optimum_stays_in_the_log_k_regime_up_to_k_30():
    """Theorem 1: E[L] <= O(log k) L*; measured ratios stay below ln k + 2."""
    for k in (2, 5, 10, 20, 30):
        env = gym.make(ENV, n_users=300, n_services=k, reference_restarts=3)
        ratios = [
            run_episode(env, AcQUIre(), seed=s).metrics["approximation_ratio"] for s in range(5)
        ]
        assert min(ratios) >= 1.0 - 1e-9  # the reference is a local optimum, not below it
        assert np.mean(ratios) <= math.log(k) + 2, (k, ratios)


def test_fair_acquire_lowers_the_worst_groups_loss_against_group_balanced_uniform():
    kwargs = {"n_users": 300, "n_services": 10, "n_groups": 4, "group_correlation": 0.9}
    frame = lambda agent: evaluate(  # noqa: E731
        ENV, agent, range(10), env_kwargs={"reference_restarts": 0, **kwargs}
    )["fairness"]
    assert frame(FairAcQUIre()).mean() < 0.5 * frame(GroupBalancedUniform()).mean()


def test_fair_agents_need_the_groups():
    env = gym.make(ENV, n_users=20, n_services=2, reveal_groups=False)
    for agent in (FairAcQUIre(), GroupBalancedUniform()):
        with pytest.raises(ValueError, match="reveal_groups=True"):
            run_episode(env, agent, seed=0)


def test_first_pick_is_uniform_for_acquire_and_group_balanced_for_fair_acquire():
    groups = np.array([0] * 9 + [1])  # user 9 is a group of its own
    obs = {"losses": np.zeros(10, np.float32), "n_services": 0, "groups": groups}
    space = gym.spaces.Discrete(10)
    picks = {AcQUIre: [], FairAcQUIre: []}
    for cls, chosen in picks.items():
        agent = cls()
        for seed in range(400):
            agent.reset(None, space, seed=seed)
            chosen.append(agent.act(obs))
    assert 0.03 < np.mean(np.array(picks[AcQUIre]) == 9) < 0.2  # 1/10
    assert 0.4 < np.mean(np.array(picks[FairAcQUIre]) == 9) < 0.6  # 1/2


def test_acquire_samples_in_proportion_to_the_loss_and_greedy_takes_the_largest():
    obs = {"losses": np.array([0.0, 1.0, 3.0, 0.0], np.float32), "n_services": 1}
    space = gym.spaces.Discrete(4)
    picks = []
    for seed in range(400):
        agent = AcQUIre()
        agent.reset(None, space, seed=seed)
        picks.append(agent.act(obs))
    counts = np.bincount(picks, minlength=4)
    assert counts[0] == counts[3] == 0 and 0.65 < counts[2] / 400 < 0.85
    greedy = MaxLossGreedy()
    greedy.reset(None, space, seed=0)
    assert greedy.act(obs) == 2
    greedy.update(obs, 2, 0.0, {})
    assert greedy.act(obs) == 1  # never the same user twice


def test_no_agent_acquires_a_user_twice_even_when_its_loss_stays_positive():
    """Linear subpopulations keep their OLS residual, so repeats would be drawn."""
    env = gym.make(ENV, population="linear", n_users=12, dim=2, n_services=12, reference_restarts=0)
    for agent in (AcQUIre(), MaxLossGreedy(), Uniform()):
        actions = run_episode(env, agent, seed=1).actions
        assert sorted(actions.tolist()) == list(range(12))
    repeats = AcQUIre(allow_repeats=True)
    drawn = [run_episode(env, repeats, seed=s).actions for s in range(5)]
    assert any(len(set(a.tolist())) < 12 for a in drawn)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kwargs",
    [
        {"loss": "squared"},
        {"loss": "mahalanobis"},
        {"loss": "huber"},
        {"loss": "cosine", "dim": 3},
        {"population": "linear", "dim": 3},
    ],
    ids=lambda kwargs: "-".join(map(str, kwargs.values())),
)
def test_full_size_acquire_beats_uniform_and_stays_near_the_reference(kwargs):
    """The bose-services sizes: 500 users, k = 30, 10 seeds, every family."""
    env = gym.make(ENV, n_services=30, reference_restarts=3, **kwargs)
    acquire = [run_episode(env, AcQUIre(), seed=s).metrics for s in range(10)]
    uniform = [run_episode(env, Uniform(), seed=s).metrics for s in range(10)]
    for ours, theirs in zip(acquire, uniform, strict=True):
        assert ours["total_loss"] < theirs["total_loss"]
    assert np.mean([m["approximation_ratio"] for m in acquire]) <= math.log(30) + 2


def reference_act(agent, observation) -> int:
    """ServiceAgent.act as it was written first: np.where over candidates, rng.choice."""
    weights = np.asarray(type(agent).weights(agent, observation), dtype=float).copy()
    candidates = np.ones(agent.n_users_, dtype=bool)
    if not agent.allow_repeats and not agent.acquired_.all():
        candidates = ~agent.acquired_
    weights = np.where(candidates, weights, 0.0)
    total = weights.sum()
    if not np.isfinite(total) or total <= 0:
        weights, total = candidates.astype(float), float(candidates.sum())
    return int(agent.rng_.choice(agent.n_users_, p=weights / total))


ALL_AGENTS = [AcQUIre, FairAcQUIre, Uniform, GroupBalancedUniform, MaxLossGreedy]


@pytest.mark.parametrize("cls", ALL_AGENTS)
@pytest.mark.parametrize("allow_repeats", [False, True])
@pytest.mark.crossimpl
def test_act_draws_the_user_the_plain_reference_draws_step_for_step(cls, allow_repeats):
    """In-place weights and the cached group sizes: the same draw as np.where + rng.choice.

    Two codes of the weights' total and cumulative shares, which another SIMD width
    may round apart by a few EPS: a draw moves only for a uniform within that of a
    share's edge (~1e-13 over this test), so the users drawn must be equal.
    """
    rng = np.random.default_rng(3)
    n = 60
    groups = rng.integers(0, 3, n)
    space = gym.spaces.Discrete(n)
    fast, plain = cls(allow_repeats=allow_repeats), cls(allow_repeats=allow_repeats)
    for episode in range(3):
        fast.reset(None, space, seed=episode)
        plain.reset(None, space, seed=episode)
        for step in range(n + 5):  # past every user: the fallback to all candidates
            losses = rng.exponential(size=n).astype(np.float32) * (rng.random(n) < 0.7)
            obs = {"losses": losses, "n_services": step, "groups": groups.copy()}
            before = obs["losses"].copy()
            action = fast.act(obs)
            assert action == reference_act(plain, obs), (episode, step)
            assert obs["losses"].tobytes() == before.tobytes()  # the observation is kept
            fast.update(obs, action, 0.0, {})
            plain.update(obs, action, 0.0, {})
        groups = rng.integers(0, 4, n)  # a new episode may have other groups


def test_a_subclass_whose_weights_are_shared_keeps_them_unchanged():
    class Fixed(AcQUIre):
        """Weights from one array kept by the agent (not fresh at each call)."""

        def weights(self, observation):
            return self.kept

    agent = Fixed()
    agent.reset(None, gym.spaces.Discrete(4), seed=0)
    agent.kept = np.array([1.0, 2.0, 3.0, 4.0])
    obs = {"losses": np.ones(4, np.float32), "n_services": 1}
    agent.update(obs, agent.act(obs), 0.0, {})
    agent.act(obs)
    np.testing.assert_array_equal(agent.kept, [1.0, 2.0, 3.0, 4.0])
