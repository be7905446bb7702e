"""Behaviour of OneSidedLending-v0: the world, the channels, bad input, the science."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import osfb_gym  # noqa: F401
from agents.lending import Adaptive, Greedy
from osfb_gym.core.links import get_link
from osfb_gym.envs.lending import (
    bayes_decision,
    gaussian_score_cutoff,
    one_sided_loss,
)
from osfb_gym.runner import evaluate

ID = "OneSidedLending-v0"

mus = arrays(np.float64, st.integers(1, 20), elements=st.floats(-5, 5))


@given(mus, st.floats(-5, 5), st.data())
def test_one_sided_loss_is_the_regret_of_the_expected_reward(mu, cutoff, data):
    action = data.draw(arrays(np.int8, mu.shape, elements=st.integers(0, 1)))
    expected_reward = lambda a: float(np.sum((mu - cutoff) * a))  # noqa: E731
    regret = expected_reward(bayes_decision(mu, cutoff)) - expected_reward(action)
    loss = one_sided_loss(mu, cutoff, action)
    assert loss >= 0
    assert loss == pytest.approx(regret, abs=1e-9)
    assert one_sided_loss(mu, cutoff, bayes_decision(mu, cutoff)) == 0


@pytest.mark.parametrize("link", ["linear", "logistic"])
@pytest.mark.parametrize("quantile", [0.5, 0.7])
def test_cutoff_quantile_matches_the_empirical_quantile(link, quantile):
    env = gym.make(ID, link=link, cutoff_quantile=quantile, batch_size=1000, horizon=5)
    env.reset(seed=0)
    mus = [env.step(np.zeros(1000, dtype=np.int8))[4]["oracle"]["mu"] for _ in range(5)]
    assert np.mean(np.concatenate(mus) <= env.unwrapped.cutoff) == pytest.approx(quantile, abs=0.02)
    assert gaussian_score_cutoff(get_link(link), 2.0, quantile) == env.unwrapped.cutoff


def test_greedy_trap_is_the_theorem_1_construction():
    env = gym.make(ID, scenario="greedy_trap", batch_size=2000, horizon=3, tau=0.1)
    _, info = env.reset(seed=1)
    unwrapped = env.unwrapped
    v = unwrapped._world.trap_direction
    beta = info["oracle"]["beta"]
    assert float(unwrapped.link.mean(v @ beta)) == pytest.approx(unwrapped.cutoff + 0.1)
    x = env.step(np.zeros(2000, dtype=np.int8))[0].astype(float)
    is_v = np.all(np.isclose(x, v, atol=1e-6), axis=1)
    assert is_v.mean() == pytest.approx(0.1, abs=0.025)
    assert np.max(np.abs(x[~is_v] @ v)) < 1e-3  # the others are orthogonal to v


def test_warm_start_and_task_terms_at_reset():
    env = gym.make(ID, warm_start=15, dim=3)
    _, info = env.reset(seed=0)
    feedback = info["feedback"]
    assert feedback["X"].shape == (15, 3) and feedback["y"].shape == (15,)
    assert set(np.unique(feedback["y"])) <= {0.0, 1.0}
    assert feedback["cutoff"] == env.unwrapped.cutoff and feedback["link"] == "logistic"


def test_world_seed_fixes_the_world_not_the_stream():
    env = gym.make(ID, world_seed=3)
    obs_a, info_a = env.reset(seed=0)
    obs_b, info_b = env.reset(seed=1)
    np.testing.assert_array_equal(info_a["oracle"]["beta"], info_b["oracle"]["beta"])
    assert not np.array_equal(obs_a, obs_b)
    free = gym.make(ID)
    beta_0 = free.reset(seed=0)[1]["oracle"]["beta"]
    beta_1 = free.reset(seed=1)[1]["oracle"]["beta"]
    assert not np.array_equal(beta_0, beta_1)


def test_reward_and_feedback_follow_the_decisions():
    env = gym.make(ID, batch_size=6, link="linear")
    env.reset(seed=2)
    action = np.array([1, 0, 1, 0, 0, 1], dtype=np.int8)
    _, reward, _, _, info = env.step(action)
    y, cutoff = info["oracle"]["y"], env.unwrapped.cutoff
    assert reward == pytest.approx(np.sum(y[action == 1] - cutoff))
    np.testing.assert_array_equal(info["feedback"]["revealed"], action == 1)
    np.testing.assert_array_equal(info["feedback"]["y"][action == 1], y[action == 1])
    assert np.all(info["feedback"]["y"][action == 0] == 0.0)


def test_full_feedback_reveals_every_outcome_but_pays_only_approvals():
    env = gym.make(ID, batch_size=4, feedback="full")
    env.reset(seed=2)
    _, reward, _, _, info = env.step([0, 0, 0, 0])
    assert reward == 0.0
    assert info["feedback"]["revealed"].all()
    np.testing.assert_array_equal(info["feedback"]["y"], info["oracle"]["y"])


def test_linear_noise_has_the_requested_scale():
    env = gym.make(ID, link="linear", noise_std=0.5, batch_size=5000, horizon=2)
    env.reset(seed=0)
    oracle = env.step(np.zeros(5000, dtype=np.int8))[4]["oracle"]
    assert np.std(oracle["y"] - oracle["mu"]) == pytest.approx(0.5, rel=0.05)


def test_truncates_at_the_horizon():
    env = gym.make(ID, horizon=3)
    env.reset(seed=0)
    flags = [env.step([0])[3] for _ in range(3)]
    assert flags == [False, False, True]


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"dim": 0}, ValueError, "dim"),
        ({"dim": 2.0}, TypeError, "dim"),
        ({"horizon": -1}, ValueError, "horizon"),
        ({"link": "probit"}, ValueError, "link"),
        ({"scenario": "nope"}, ValueError, "scenario"),
        ({"feedback": "partial"}, ValueError, "feedback"),
        ({"cutoff_quantile": 0.0}, ValueError, "cutoff_quantile"),
        ({"cutoff_quantile": 1.5}, ValueError, "cutoff_quantile"),
        ({"cutoff_quantile": float("nan")}, ValueError, "cutoff_quantile"),
        ({"cutoff": 0.5, "cutoff_quantile": 0.5}, ValueError, "cutoff"),
        ({"cutoff": 1.2}, ValueError, "cutoff"),
        ({"cutoff": "high"}, TypeError, "cutoff"),
        ({"noise_std": 1.0}, ValueError, "noise_std"),
        ({"link": "linear", "noise_std": -1.0}, ValueError, "noise_std"),
        ({"warm_start": -1}, ValueError, "warm_start"),
        ({"beta_norm": 0.0}, ValueError, "beta_norm"),
        ({"scenario": "greedy_trap", "tau": 0.5}, ValueError, "tau"),
        ({"scenario": "greedy_trap", "dim": 1}, ValueError, "dim"),
        ({"trap_probability": 1.0}, ValueError, "trap_probability"),
        ({"world_seed": -3}, ValueError, "world_seed"),
        ({"render_mode": "video"}, ValueError, "render_mode"),
    ],
)
@pytest.mark.filterwarnings("ignore:.*render_mode")  # Gymnasium's own warning, before ours
def test_bad_arguments_name_the_parameter(kwargs, error, name):
    with pytest.raises(error, match=name):
        gym.make(ID, **kwargs)


def test_ansi_render_reports_decisions_and_loss():
    env = gym.make(ID, render_mode="ansi", batch_size=3)
    env.reset(seed=0)
    env.step([1, 0, 1])
    line = env.render()
    assert "approved   2/3" in line and "cumulative" in line


@pytest.mark.parametrize("dim", [2, 4])
def test_rgb_render_is_an_image(dim):
    env = gym.make(ID, render_mode="rgb_array", dim=dim, batch_size=20, horizon=10)
    env.reset(seed=0)
    assert env.render().ndim == 3
    for _ in range(5):
        env.step(env.action_space.sample())
    image = env.render()
    assert image.dtype == np.uint8 and image.shape[2] == 3 and image.shape[0] > 100
    assert image.std() > 0  # something was drawn


# ----------------------------------------------------------------------------- science
def test_adaptive_beats_greedy_on_the_default_logistic_world():
    """Section 8's claim on the default world: lower mean cumulative one-sided loss."""
    seeds = range(10)
    greedy = evaluate(ID, Greedy(), seeds)["cumulative_loss"].mean()
    adaptive = evaluate(ID, Adaptive(), seeds)["cumulative_loss"].mean()
    assert adaptive < greedy


def test_greedy_stalls_in_the_trap_while_adaptive_escapes():
    """Theorem 1 against Theorem 2, on seeded runs of the greedy-trap scenario.

    A run that never approves ``v`` again loses about ``tau`` on each
    ``v`` applicant, ``tau * trap_probability = 0.01`` per step; a run
    that learned ``v`` loses almost nothing. Greedy stays trapped; the
    uncertainty bonus gets Adaptive out in most runs (not all: its default
    bonus is constant, while the theory's ``rho_t`` grows with ``t``).
    """
    tau, p_v = 0.1, 0.1
    kwargs = {"scenario": "greedy_trap", "horizon": 2000, "tau": tau, "trap_probability": p_v}
    runs = {}
    for agent in (Greedy(), Adaptive()):
        _, runs[type(agent).__name__] = evaluate(
            ID, agent, range(10), env_kwargs=kwargs, return_trajectories=True
        )
    late = {
        name: np.array([r.oracle_loss[1000:].mean() for r in trajectories])
        for name, trajectories in runs.items()
    }
    escaped = {name: int(np.sum(loss < tau * p_v / 2)) for name, loss in late.items()}
    final = {
        name: np.mean([r.average_loss[-1] for r in trajectories])
        for name, trajectories in runs.items()
    }
    assert escaped["Greedy"] <= 3 and escaped["Adaptive"] >= escaped["Greedy"] + 3
    assert final["Greedy"] > tau * p_v / 2  # R_T/T bounded away from 0
    assert final["Adaptive"] < final["Greedy"] / 1.5
