"""The opt-in options of the paper's fit (design_l2, free_intercept) and of Algorithm 2."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import osfb_gym  # noqa: F401
from agents.lending import Adaptive, Greedy, Margin
from agents.lending.glm import GLMEstimator
from osfb_gym.bench.executors import replica_groups
from osfb_gym.bench.sweep import Cell
from osfb_gym.core.links import get_link
from osfb_gym.runner import run_episode


def with_intercept(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = np.hstack([rng.standard_normal((n, d)), np.ones((n, 1))])
    return x, rng


def test_design_ridge_is_As_own_and_the_linear_fit_keeps_l2():
    x, rng = with_intercept()
    y = x @ np.array([1.0, -2.0, 0.5, 3.0]) + rng.standard_normal(len(x))
    model = GLMEstimator(get_link("linear"), 4, 1.0, design_l2=1e-6)
    for row, target in zip(x, y, strict=True):
        model.add(row[None], np.array([target]))
        model.fit()
    assert np.allclose(model.A, x.T @ x + 1e-6 * np.eye(4))
    assert np.allclose(model.A_inv, np.linalg.inv(x.T @ x + 1e-6 * np.eye(4)))
    assert np.allclose(model.beta, np.linalg.solve(x.T @ x + np.eye(4), x.T @ y))


def test_free_intercept_linear_fit_penalises_only_the_features():
    x, rng = with_intercept()
    y = x @ np.array([1.0, -2.0, 0.5, 30.0]) + rng.standard_normal(len(x))
    model = GLMEstimator(get_link("linear"), 4, 50.0, design_l2=1e-8, free_intercept=True)
    model.add(x, y)
    model.fit()
    ridge = np.diag([50.0, 50.0, 50.0, 1e-8])
    assert np.allclose(model.beta, np.linalg.solve(x.T @ x + ridge, x.T @ y))
    # the intercept is not shrunk towards 0 (a ridge on it would pull 30 down)
    assert abs(model.beta[-1] - 30.0) < 0.5


@pytest.mark.parametrize("solver", ["exact", "incremental"])
def test_free_intercept_logistic_fit_is_scikit_learns_default(solver):
    x, rng = with_intercept(n=400, seed=1)
    y = (rng.random(400) < 1 / (1 + np.exp(-x @ [1.5, -1.0, 0.5, 2.0]))).astype(float)
    model = GLMEstimator(get_link("logistic"), 4, 1.0, solver, design_l2=1e-9, free_intercept=True)
    for start in range(0, 400, 40):
        model.add(x[start : start + 40], y[start : start + 40])
        model.fit()
    if solver == "incremental":  # its refits are Newton steps from the running estimate
        model._refit()
    reference = LogisticRegression(C=1.0, tol=1e-10, max_iter=1000).fit(x[:, :3], y)
    expected = np.append(reference.coef_[0], reference.intercept_[0])
    assert np.abs(model.beta - expected).max() < 1e-4


def test_defaults_keep_the_single_ridge_everywhere():
    model = GLMEstimator(get_link("logistic"), 3, 2.0)
    same = GLMEstimator(get_link("logistic"), 3, 2.0, design_l2=2.0, free_intercept=True)
    assert model.penalty == same.penalty == 2.0 and model._uniform and same._uniform
    assert np.array_equal(model.A, 2.0 * np.eye(3)) and np.array_equal(model._H, same._H)


def test_free_intercept_needs_an_intercept_column():
    env = gym.make("OneSidedLending-v0", horizon=5)  # synthetic: no intercept column
    with pytest.raises(ValueError, match="free_intercept=True"):
        run_episode(env, Greedy(free_intercept=True, design_l2=1e-6), seed=0)


def test_rho_schedule_grows_as_algorithm_2():
    env = gym.make("OneSidedLending-v0", horizon=30, dim=4)
    agent = Adaptive(rho=0.5, rho_schedule="sqrt_log_t")
    trajectory = run_episode(env, agent, seed=0)
    assert trajectory.metrics["steps"] == 30
    assert agent.rho_ == pytest.approx(0.5 * np.sqrt(2 * 4 * np.log(31)))


def test_per_applicant_A_shrinks_the_width_of_a_repeat_after_an_approval():
    env = gym.make("OneSidedLending-v0", batch_size=2, horizon=3, dim=3)
    _, info = env.reset(seed=0)
    widths = {}
    for flag in (False, True):
        agent = Adaptive(rho=100.0, per_applicant_A=flag)  # a bonus that approves everyone
        agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
        batch = np.tile(np.array([[1.0, 0.5, -0.5]], dtype=np.float32), (2, 1))
        bonus = agent.exploration(batch)
        widths[flag] = bonus
        assert agent.act(batch).tolist() == [1, 1]
    assert widths[False][0] == widths[False][1] == widths[True][0]
    assert widths[True][1] < widths[True][0]  # A already holds the first copy


def test_options_keep_an_episode_identical_at_their_defaults():
    env = gym.make("OneSidedLending-v0", horizon=150, batch_size=5)
    base = run_episode(env, Adaptive(rho=0.5), seed=3).metrics
    same = run_episode(
        env,
        Adaptive(
            rho=0.5,
            design_l2=None,
            free_intercept=False,
            rho_schedule="constant",
            per_applicant_A=False,
        ),
        seed=3,
    ).metrics
    assert base == same
    assert (
        run_episode(env, Margin(alpha=1.0, design_l2=1.0), seed=3).metrics
        == run_episode(env, Margin(alpha=1.0), seed=3).metrics
    )


def test_cells_with_the_logistic_fit_options_run_alone():
    kwargs = {"horizon": 5}
    cells = [
        Cell("s", "OneSidedLending-v0", kwargs, "Greedy", {}, 0),
        Cell("s", "OneSidedLending-v0", kwargs, "Margin", {"alpha": 1.0}, 0),
        Cell("s", "OneSidedLending-v0", kwargs, "Adaptive", {"rho_schedule": "sqrt_log_t"}, 0),
        Cell("s", "OneSidedLending-v0", kwargs, "Margin", {"design_l2": 1e-6}, 0),
        Cell("s", "OneSidedLending-v0", kwargs, "Margin", {"free_intercept": False}, 0),
    ]
    # Adaptive's Algorithm 2 options run as replicas (shared states, tested bit for bit)
    assert [len(group) for group in replica_groups(cells)] == [3, 1, 1]


def test_refit_option_reaches_the_fit_is_checked_and_runs_alone():
    env = gym.make("OneSidedLending-v0", link="logistic", horizon=120)
    agent = Adaptive(refit="expand")
    trajectory = run_episode(env, agent, seed=2)
    assert agent.model_.refit == "expand" and agent.model_.n_refits > 0
    assert (
        run_episode(env, Adaptive(refit="newton"), seed=2).metrics
        == run_episode(env, Adaptive(), seed=2).metrics
    )
    assert np.isfinite(trajectory.cumulative_loss[-1])
    with pytest.raises(ValueError, match="refit"):
        run_episode(env, Adaptive(refit="sometimes"), seed=2)
    cells = [
        Cell("s", "OneSidedLending-v0", {"horizon": 5}, "Adaptive", {}, 0),
        Cell("s", "OneSidedLending-v0", {"horizon": 5}, "Adaptive", {"refit": "expand"}, 0),
    ]
    assert [len(group) for group in replica_groups(cells)] == [1, 1]
