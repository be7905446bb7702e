"""The GLM fits behind the lending agents, and the agents' own behaviour."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

import osfb_gym  # noqa: F401
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
from agents.lending.adaptive import project_estimate
from agents.lending.glm import GLMEstimator, fit_logistic_newton
from osfb_gym.core.links import get_link
from osfb_gym.runner import run_episode
from tests.helpers import EPISODE_RTOL, assert_close


class Constant(Greedy):
    """Approve everyone (1) or no one (0): the trivial policies to beat."""

    def __init__(self, value: int = 1) -> None:
        super().__init__()
        self.value = value

    def act(self, observation):
        return np.full(len(observation), self.value, dtype=np.int8)


def data(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    beta = rng.standard_normal(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ beta))).astype(float)
    return x, y


def test_newton_matches_scikit_learn_logistic_regression():
    x, y = data()
    ours = fit_logistic_newton(x, y, l2=2.0)
    reference = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12, max_iter=10_000)
    np.testing.assert_allclose(ours, reference.fit(x, y).coef_[0], atol=1e-6)


def test_newton_stays_finite_on_separable_data():
    x = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 1.0]])
    beta = fit_logistic_newton(x, np.array([1.0, 0.0, 1.0]), l2=1e-3)
    assert np.all(np.isfinite(beta))


def test_linear_fit_matches_ridge_and_inverse_stays_exact():
    x, _ = data()
    y = x @ np.arange(4.0) + np.random.default_rng(1).standard_normal(len(x))
    model = GLMEstimator(get_link("linear"), 4, l2=3.0)
    for chunk in np.array_split(np.arange(len(x)), 7):
        model.add(x[chunk], y[chunk])
    reference = Ridge(alpha=3.0, fit_intercept=False).fit(x, y).coef_
    np.testing.assert_allclose(model.fit(), reference, atol=1e-9)
    np.testing.assert_allclose(model.A_inv, np.linalg.inv(model.A), atol=1e-12)
    np.testing.assert_allclose(model.A, 3.0 * np.eye(4) + x.T @ x, atol=1e-9)


def test_exact_logistic_refits_equal_one_fit_on_everything():
    x, y = data(n=300)
    model = GLMEstimator(get_link("logistic"), 4, l2=1.0, solver="exact")
    for chunk in np.array_split(np.arange(len(x)), 10):
        model.add(x[chunk], y[chunk])
        model.fit()
    np.testing.assert_allclose(model.beta, fit_logistic_newton(x, y, 1.0), atol=1e-8)


@pytest.mark.parametrize("link", ["linear", "logistic"])
def test_incremental_solver_tracks_the_exact_fit_one_example_at_a_time(link):
    x, y = data(n=2000, d=6, seed=2)
    if link == "linear":
        y = x @ np.linspace(-1, 1, 6) + np.random.default_rng(0).standard_normal(len(x))
    fast = GLMEstimator(get_link(link), 6, l2=1.0)
    exact = GLMEstimator(get_link(link), 6, l2=1.0, solver="exact")
    gaps = []
    for i in range(len(x)):
        for model in (fast, exact):
            model.add(x[i : i + 1], y[i : i + 1])
        fast.fit()
        if i % 50 == 49:
            gaps.append(np.abs(fast.beta - exact.fit()).max() / np.abs(exact.beta).max())
    # between exact refits the logistic estimate is a Newton step on a quadratic
    # model: close, never equal; the linear one is recursive least squares
    assert max(gaps) < (1e-9 if link == "linear" else 0.02)
    assert fast.n_refits < 0.05 * len(x)  # geometric (every 10% more data), not per step
    if link == "logistic":
        np.testing.assert_allclose(fast.hessian(), exact.hessian(), rtol=0.05, atol=0.5)


def test_incremental_and_exact_adaptive_decide_alike():
    """The exact learner shadows the incremental one on the same history."""
    env = gym.make("OneSidedLending-v0", horizon=1500, dim=8, batch_size=2)
    fast, exact = Adaptive(), Adaptive(solver="exact")
    obs, info = env.reset(seed=1)
    for agent in (fast, exact):
        agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    disagree = []
    for _ in range(1500):
        action = fast.act(obs)
        disagree.append(action != exact.act(obs))
        next_obs, reward, _, _, info = env.step(action)
        for agent in (fast, exact):
            agent.update(obs, action, reward, info["feedback"])
        obs = next_obs
    assert np.mean(disagree) <= 0.01


def test_projection_step_lands_in_the_ball_and_beats_the_radial_projection():
    x, y = data(n=300, d=4, seed=3)
    model = GLMEstimator(get_link("logistic"), 4, l2=1e-3, solver="exact")
    model.add(3 * x, y)
    beta_hat = model.fit()
    bound = 0.5 * float(np.linalg.norm(beta_hat))
    projected = project_estimate(model, bound)
    assert np.linalg.norm(projected) <= bound + 1e-9

    def distance(beta):
        z, z_hat = 3 * x @ beta, 3 * x @ beta_hat
        residual = (3 * x).T @ (1 / (1 + np.exp(-z)) - 1 / (1 + np.exp(-z_hat)))
        return residual @ model.A_inv @ residual

    assert distance(projected) < distance(beta_hat * bound / np.linalg.norm(beta_hat))
    assert project_estimate(model, 2 * bound) is model.beta  # inside the ball: untouched


def test_adaptive_projection_caps_the_decision_parameter():
    env = gym.make("OneSidedLending-v0", horizon=100, beta_norm=4.0)
    agent = Adaptive(project=True, beta_bound=1.0)
    run_episode(env, agent, seed=0)
    assert np.linalg.norm(agent.beta_) <= 1.0 + 1e-9 < np.linalg.norm(agent.model_.beta)


@pytest.mark.parametrize("link", ["linear", "logistic"])
def test_passive_pays_for_exploration_then_beats_trivial_policies(link):
    env = gym.make("OneSidedLending-v0", link=link, horizon=2000)
    agent = Passive(horizon=2000)
    passive = run_episode(env, agent, seed=5)
    explore = (agent.n_discretize_ + agent.n_explore_) - 20  # the warm start counts
    after = passive.oracle_loss[explore:].mean()
    for value in (0, 1):
        trivial = run_episode(env, Constant(value), seed=5)
        assert passive.cumulative_loss[-1] < trivial.cumulative_loss[-1]
        assert after < trivial.oracle_loss[explore:].mean() / 4


def test_passive_explores_then_never_changes_its_rule():
    env = gym.make("OneSidedLending-v0", horizon=400, warm_start=0)
    agent = Passive(horizon=400)
    trajectory = run_episode(env, agent, seed=2)
    explore = agent.n_discretize_ + agent.n_explore_
    assert (agent.n_discretize_, agent.n_explore_) == (8, 55)
    assert trajectory.actions[:explore].all()
    assert trajectory.n_revealed[explore:].sum() == trajectory.actions[explore:].sum()
    assert agent.candidates_.shape == (agent.n_candidates, 5)


def test_sgd_steps_shrink_the_radius_and_bonus():
    env = gym.make("OneSidedLending-v0", horizon=300, link="linear")
    agent = SGD(alpha=0.5)
    run_episode(env, agent, seed=0)
    assert agent.n_steps_ > 0
    assert agent.radius_ < agent.radius


def test_adaptive_with_no_bonus_decides_exactly_like_greedy():
    env = gym.make("OneSidedLending-v0", horizon=300, batch_size=2)
    greedy = run_episode(env, Greedy(), seed=3)
    no_bonus = run_episode(env, Adaptive(rho=0.0), seed=3)
    # exact on any CPU: one estimator's code, and a score plus a zero bonus is the score
    np.testing.assert_array_equal(greedy.actions, no_bonus.actions)


def test_bonus_makes_adaptive_approve_more_than_greedy():
    env = gym.make("OneSidedLending-v0", horizon=300)
    greedy = run_episode(env, Greedy(), seed=3).metrics["approval_rate"]
    adaptive = run_episode(env, Adaptive(rho=1.0), seed=3).metrics["approval_rate"]
    assert adaptive > greedy


def test_theory_rho_runs_and_is_conservative():
    env = gym.make("OneSidedLending-v0", horizon=50, link="linear")
    agent = Adaptive(rho="theory", horizon=50)
    trajectory = run_episode(env, agent, seed=0)
    assert agent.rho_ > 1.0
    assert trajectory.metrics["approval_rate"] > 0.9


@pytest.mark.parametrize("link", ["linear", "logistic"])
@pytest.mark.parametrize(
    "cls",
    [
        Greedy,
        Adaptive,
        EpsilonGreedy,
        OneSidedEpsilonGreedy,
        Noise,
        OneSidedNoise,
        Margin,
        # the theory's width (alpha=1) is famously conservative: at T=500 it still
        # approves about 60% of applicants and loses more than approving everyone
        lambda: LinUCB(alpha=0.1),
        ThompsonSampling,
        SGD,
    ],
)
def test_agents_learn_beyond_trivial_policies(link, cls):
    """Each at least halves the loss of approving everyone or no one, on a seeded world."""
    env = gym.make("OneSidedLending-v0", link=link, horizon=500)
    learned = run_episode(env, cls(), seed=5).metrics["cumulative_loss"]  # type: ignore[operator]

    for value in (0, 1):
        trivial = run_episode(env, Constant(value), seed=5).metrics["cumulative_loss"]
        assert learned < trivial / 2


@pytest.mark.parametrize(
    ("agent", "name"),
    [
        (Adaptive(rho=-1.0), "rho"),
        (Adaptive(rho="big"), "rho"),
        (Greedy(l2=0.0), "l2"),
        (Adaptive(rho="theory", delta=2.0), "delta"),
        (EpsilonGreedy(alpha=-1.0), "alpha"),
        (LinUCB(delta=2.0), "delta"),
        (ThompsonSampling(nu=-1.0), "nu"),
        (Greedy(solver="fast"), "solver"),
        (Passive(n_explore=-1), "n_explore"),
        (SGD(radius=-1.0), "radius"),
        (Adaptive(project=True, beta_bound=0.0), "beta_bound"),
    ],
)
def test_bad_hyperparameters_name_themselves(agent, name):
    env = gym.make("OneSidedLending-v0")
    _, info = env.reset(seed=0)
    with pytest.raises(ValueError, match=name):
        agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])


def test_reset_without_the_task_terms_is_a_clear_error():
    env = gym.make("OneSidedLending-v0")
    with pytest.raises(ValueError, match="cutoff"):
        Greedy().reset(env.observation_space, env.action_space, seed=0, feedback={})


@pytest.mark.parametrize(
    "cls", [EpsilonGreedy, OneSidedEpsilonGreedy, Noise, OneSidedNoise, Margin]
)
def test_exploration_decays_and_alpha_zero_is_greedy(cls):
    env = gym.make("OneSidedLending-v0", horizon=400, batch_size=2)
    greedy = run_episode(env, Greedy(), seed=2)
    np.testing.assert_array_equal(run_episode(env, cls(alpha=0.0), seed=2).actions, greedy.actions)
    explored = run_episode(env, cls(alpha=4.0), seed=2).actions != greedy.actions
    early, late = explored[:100].mean(), explored[300:].mean()
    assert early > late  # alpha / sqrt(t) shrinks


def test_one_sided_variants_only_ever_add_approvals():
    env = gym.make("OneSidedLending-v0", horizon=1, batch_size=500, warm_start=50)
    obs, info = env.reset(seed=0)
    decisions = {}
    for cls in (Greedy, OneSidedEpsilonGreedy, OneSidedNoise, Margin):
        agent = cls() if cls is Greedy else cls(alpha=0.5)
        agent.reset(env.observation_space, env.action_space, seed=1, feedback=info["feedback"])
        decisions[cls.__name__] = agent.act(obs)
    for name, action in decisions.items():
        assert np.all(action >= decisions["Greedy"]), name


def test_thompson_samples_follow_the_laplace_posterior():
    env = gym.make("OneSidedLending-v0", link="linear", warm_start=200, dim=3)
    obs, info = env.reset(seed=0)
    agent = ThompsonSampling()
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    x = np.eye(3)
    # exploration on unit vectors is beta_sample - beta_hat itself (linear link)
    draws = np.array([agent.exploration(x) for _ in range(4000)])
    np.testing.assert_allclose(np.cov(draws.T), np.linalg.inv(agent.model_.A), atol=3e-4)
    np.testing.assert_allclose(draws.mean(axis=0), 0.0, atol=2e-3)


def test_linucb_width_grows_with_data_and_scales_with_alpha():
    env = gym.make("OneSidedLending-v0")
    _, info = env.reset(seed=0)
    agent = LinUCB()
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    before = agent.confidence_width()
    agent.model_.add(np.ones((50, 5)), np.ones(50))
    assert agent.confidence_width() > before
    assert agent.set_params(alpha=2.0).confidence_width() == pytest.approx(
        2 * agent.set_params(alpha=1.0).confidence_width()
    )


@pytest.mark.parametrize(
    "cls",
    [
        Greedy,
        Adaptive,
        EpsilonGreedy,
        OneSidedEpsilonGreedy,
        Noise,
        OneSidedNoise,
        Margin,
        LinUCB,
        ThompsonSampling,
        Passive,
        SGD,
    ],
)
def test_every_agent_streams_a_real_dataset_to_its_end(cls):
    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", batch_size=10)
    trajectory = run_episode(env, cls(), seed=0)
    assert len(trajectory.rewards) == env.unwrapped.n_steps  # terminated, not truncated
    assert np.isfinite(trajectory.cumulative_loss[-1])


# ------------------------------------------------------------------ the lean batch-of-one path
def _shadow_episode(agent, twin, env, seed, steps, twin_obs=lambda obs: obs):
    """``agent`` drives; ``twin`` decides on the same history (observations via ``twin_obs``)."""
    obs, info = env.reset(seed=seed)
    for each in (agent, twin):
        each.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    actions, twins = [], []
    for _ in range(steps):
        action = agent.act(obs)
        seen = twin_obs(obs)
        twins.append(twin.act(seen))
        next_obs, reward, terminated, truncated, info = env.step(action)
        agent.update(obs, action, reward, info["feedback"])
        twin.update(seen, action, reward, info["feedback"])
        actions.append(action)
        obs = next_obs
        if terminated or truncated:
            break
    return np.concatenate(actions), np.concatenate(twins)


@pytest.mark.parametrize(
    "params",
    [{}, {"l2": 1e-6, "rho_schedule": "sqrt_log_t", "per_applicant_A": True}],
    ids=["default", "paper"],
)
@pytest.mark.crossimpl
def test_lean_path_is_the_general_path_under_the_linear_link(params):
    """A batch of one as an array takes the lean path; as a list, the checked general one.

    Two codes of one learner: the decisions equal, the estimates within the episodes'
    bound (tests.helpers.EPISODE_RTOL and assert_episodes_agree say why).
    """
    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", link="linear", batch_size=1)
    lean, general = Adaptive(**params), Adaptive(**params)
    actions, twins = _shadow_episode(lean, general, env, 3, 400, lambda obs: obs.tolist())
    assert np.array_equal(actions, twins)
    assert lean.model_.n == general.model_.n > 100
    assert_close(lean.model_.A_inv, general.model_.A_inv, ulps=0, rtol=EPISODE_RTOL)
    assert_close(lean.model_.beta, general.model_.beta, ulps=0, rtol=EPISODE_RTOL)


@pytest.mark.parametrize(
    "make",
    [Greedy, lambda: Margin(alpha=0.5), lambda: OneSidedNoise(alpha=0.5), LinUCB],
    ids=["Greedy", "Margin", "OneSidedNoise", "LinUCB"],
)
@pytest.mark.crossimpl
def test_every_cutoff_agents_lean_path_is_its_general_path(make):
    """The one-applicant path (agents/lending/_fast/one_row.py) reads each agent's own rule.

    The agents without a bonus scale (their own exploration, drawn from their own
    generator) decide as on the checked path; the linear fit within the episodes' bound.
    """
    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", link="linear", batch_size=1)
    lean, general = make(), make()
    actions, twins = _shadow_episode(lean, general, env, 2, 300, lambda obs: obs.tolist())
    assert np.array_equal(actions, twins)
    assert lean.model_.n == general.model_.n > 20
    assert_close(lean.model_.beta, general.model_.beta, ulps=0, rtol=EPISODE_RTOL)


@pytest.mark.crossimpl
def test_lean_logistic_path_keeps_A_inverse_and_the_estimate_within_round_off():
    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", link="logistic", batch_size=1)
    lean, general = Adaptive(), Adaptive()
    actions, twins = _shadow_episode(lean, general, env, 1, 400, lambda obs: obs.tolist())
    assert np.array_equal(actions, twins)
    # the same products in two codes: within the episodes' bound on any CPU
    assert_close(lean.model_.A_inv, general.model_.A_inv, ulps=0, rtol=EPISODE_RTOL)
    # beta follows H^-1 in O(d) there, by a matrix-vector product here; H is folded when read
    np.testing.assert_allclose(lean.model_.beta, general.model_.beta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lean.model_.hessian(), general.model_.hessian(), rtol=1e-9)
    np.testing.assert_allclose(
        lean.model_.beta, -lean.model_._H_inv @ lean.model_._s, rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize(
    ("link", "refit"), [("logistic", "newton"), ("logistic", "expand"), ("linear", "newton")]
)
@pytest.mark.parametrize("fit", ["default", "paper"])
def test_lean_learner_decides_like_the_exact_solver(link, refit, fit):
    """Issue 18's bar: >= 99% of the decisions of the exact refit on the same history."""
    env_kwargs, params = {}, {"refit": refit}
    if fit == "paper":
        env_kwargs = {"scaling": "robust"}  # (breast_cancer has one encoding)
        params = {"l2": 1e-6} if link == "linear" else {"design_l2": 1e-6, "free_intercept": True}
        params |= {"rho_schedule": "sqrt_log_t", "per_applicant_A": True}
    env = gym.make(
        "OneSidedLending-v0", dataset="breast_cancer", link=link, batch_size=1, **env_kwargs
    )
    disagree = []
    for seed in range(3):
        actions, exact = _shadow_episode(
            Adaptive(**params), Adaptive(solver="exact", **params), env, seed, 600
        )
        assert len(actions) > 300
        disagree.append(np.mean(actions != exact))
    assert np.mean(disagree) <= 0.01


def test_expand_refits_converge_the_warm_start_and_sit_at_the_optimum_of_their_data():
    x, y = data(n=600, d=5, seed=4)
    model = GLMEstimator(get_link("logistic"), 5, l2=1.0, refit="expand")
    model.add(x[:300], y[:300])
    model.fit()  # the warm start: converged, not two Newton steps from zero
    np.testing.assert_allclose(model.beta, fit_logistic_newton(x[:300], y[:300], 1.0), atol=1e-8)
    for i in range(300, 600):
        model.learn_row(x[i].copy(), float(y[i]))
    assert model.n_refits >= 5  # the refits re-expand at the estimate: full Newton steps
    optimum = fit_logistic_newton(x, y, 1.0)
    assert np.abs(model.beta - optimum).max() < 0.01 * np.abs(optimum).max()
    # refit_passes (2) passes a refit, more only for damped steps; the warm start is the first
    assert model.n_passes <= 2 * model.n_refits + 1


def test_lean_path_still_rejects_bad_input_by_name():
    env = gym.make("OneSidedLending-v0", dataset="breast_cancer", link="logistic", batch_size=1)
    agent = Adaptive()
    obs, info = env.reset(seed=0)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    bad = obs.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="observation"):
        agent.act(bad)
    action = agent.act(obs)
    with pytest.raises(ValueError, match=r"feedback\['y'\]"):
        agent.update(obs, action, 0.0, {"revealed": np.array([True]), "y": np.array([2.0])})
