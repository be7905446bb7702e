"""Behaviour of OneSidedLending-v0: the world, the channels, bad input, the science."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import expit
from sklearn.linear_model import LinearRegression, LogisticRegression

import osfb_gym  # noqa: F401
from agents.lending import Adaptive, Greedy
from osfb_gym.core.links import get_link
from osfb_gym.data import from_arrays
from osfb_gym.envs.lending import (
    FEATURE_BOUND,
    bayes_decision,
    build_dataset_world,
    gaussian_score_cutoff,
    one_sided_loss,
    revealed_reward,
    stratified_split,
)
from osfb_gym.runner import evaluate, run_episode
from tests.helpers import assert_close, eps_of_largest, needs_osfb_data
from tests.osfb_gym.envs.cases import DATA_HOME

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
    warm = feedback["warm_start"]
    assert warm["X"].shape == (15, 3) and warm["X"].dtype == np.float32
    assert warm["y"].shape == (15,) and set(np.unique(warm["y"])) <= {0.0, 1.0}
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
        ({"beta_norm": 100.0}, ValueError, "beta_norm"),  # logistic cutoff saturates at 1
        ({"link": "linear", "beta_norm": 1e308}, ValueError, "beta_norm"),
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


# ----------------------------------------------------------------------------- datasets
BC = {"dataset": "breast_cancer"}  # 569 rows, 30 features, ships with scikit-learn
needs_shared_data = needs_osfb_data("adult")


def row_keys(x: np.ndarray) -> list[bytes]:
    return [row.tobytes() for row in np.ascontiguousarray(x, dtype=np.float32)]


@given(
    st.lists(st.integers(0, 2), min_size=1, max_size=60).map(lambda y: np.array(y, float)),
    st.data(),
)
def test_stratified_split_gives_each_class_its_share(y, data):
    n_warm = data.draw(st.integers(0, y.size))
    warm, stream = stratified_split(y, n_warm, np.random.default_rng(data.draw(st.integers(0, 9))))
    assert warm.size == n_warm and warm.size + stream.size == y.size
    assert np.union1d(warm, stream).size == y.size
    for label in np.unique(y):
        share = np.sum(y == label) * n_warm / y.size
        assert np.floor(share) <= np.sum(y[warm] == label) <= np.ceil(share)


def test_dataset_features_are_standardised_with_an_intercept_last():
    env = gym.make(ID, **BC).unwrapped
    X = env._data.X.astype(float)
    assert env.dim == 31 and env.feature_names[-1] == "intercept"
    np.testing.assert_array_equal(X[:, -1], 1.0)
    np.testing.assert_allclose(X[:, :-1].mean(axis=0), 0.0, atol=1e-5)
    np.testing.assert_allclose(X[:, :-1].std(axis=0), 1.0, atol=1e-5)
    bound = env.observation_space.high.max()
    assert bound == np.abs(X).max() and bound > FEATURE_BOUND  # 12.07: beyond the synthetic 10
    assert env.observation_space.contains(env._data.X[:1])


def test_dataset_stream_shows_every_row_once_then_terminates():
    env = gym.make(ID, batch_size=50, **BC)
    unwrapped = env.unwrapped
    obs, info = env.reset(seed=4)
    # 541 streamed rows: 10 full batches and a last one of 41 real rows + 9 padding
    assert (unwrapped.warm_start, unwrapped.n_steps, unwrapped.n_padded) == (28, 11, 9)
    assert unwrapped.n_dropped == 0 and unwrapped.horizon == 11
    seen = row_keys(info["feedback"]["warm_start"]["X"])
    flags, valid = [], []
    while True:
        shown = obs
        obs, _, terminated, truncated, info = env.step(np.ones(50, dtype=np.int8))
        seen += row_keys(shown[info["feedback"]["valid"]])
        valid.append(info["feedback"]["valid"])
        flags.append((terminated, truncated))
        if terminated or truncated:
            break
    assert flags == [(False, False)] * 10 + [(True, False)]
    assert len(seen) == len(set(seen)) == 569  # every row once, the warm start included
    assert int(np.sum(valid)) == 569 - 28  # an episode decides rows - warm_start rows
    assert valid[-1].tolist() == [True] * 41 + [False] * 9
    assert not shown[41:].any()  # padding: zero rows, inside the space
    assert not obs.any() and env.observation_space.contains(obs)
    with pytest.raises(RuntimeError, match="exhausted"):
        unwrapped.step(np.ones(50, dtype=np.int8))


def test_last_batch_drop_leaves_the_remainder_out_as_before():
    env = gym.make(ID, batch_size=50, last_batch="drop", **BC)
    unwrapped = env.unwrapped
    obs, info = env.reset(seed=4)
    assert (unwrapped.n_steps, unwrapped.n_dropped, unwrapped.n_padded) == (10, 41, 0)
    seen = row_keys(info["feedback"]["warm_start"]["X"])
    for _ in range(10):
        seen += row_keys(obs)
        obs, _, terminated, _, info = env.step(np.ones(50, dtype=np.int8))
        assert info["feedback"]["valid"].all()
    assert terminated and len(seen) == len(set(seen)) == 569 - 41
    # the same stream as the padded default's, up to its last batch
    padded = gym.make(ID, batch_size=50, **BC)
    obs_pad, _ = padded.reset(seed=4)
    obs_drop, _ = env.reset(seed=4)
    for _ in range(10):
        np.testing.assert_array_equal(obs_pad, obs_drop)
        obs_pad = padded.step(np.ones(50, dtype=np.int8))[0]
        obs_drop = env.step(np.ones(50, dtype=np.int8))[0]


@pytest.mark.parametrize("feedback", ["one_sided", "full"])
def test_the_last_partial_batch_is_decided_and_scored_and_padding_never(feedback):
    env = gym.make(ID, batch_size=50, link="linear", feedback=feedback, **BC)
    unwrapped = env.unwrapped
    results = {}
    for padding_action in (0, 1):
        env.reset(seed=2)
        for _ in range(10):
            env.step(np.zeros(50, dtype=np.int8))
        action = np.r_[np.tile([1, 0], 20), [1], np.full(9, padding_action)].astype(np.int8)
        results[padding_action] = env.step(action)
    obs, reward, terminated, _, info = results[1]
    fb, oracle, cutoff = info["feedback"], info["oracle"], unwrapped.cutoff
    real = np.arange(50) < 41
    np.testing.assert_array_equal(fb["valid"], real)
    expected_revealed = (action == 1) & real if feedback == "one_sided" else real
    np.testing.assert_array_equal(fb["revealed"], expected_revealed)
    np.testing.assert_array_equal(fb["y"][~real], 0.0)
    np.testing.assert_array_equal(oracle["bayes_action"][~real], 0)
    a = action[:41]
    assert reward == pytest.approx(float(revealed_reward(oracle["y"][:41], cutoff, a == 1)))
    assert oracle["loss"] == pytest.approx(float(one_sided_loss(oracle["mu"][:41], cutoff, a)))
    assert oracle["loss"] > 0 and terminated
    # what the padding is asked changes nothing anyone sees or scores
    other = results[0]
    np.testing.assert_array_equal(other[0], obs)
    assert other[1] == reward and other[4]["oracle"]["loss"] == oracle["loss"]
    for key in ("revealed", "y", "valid"):
        np.testing.assert_array_equal(other[4]["feedback"][key], fb[key])


def test_padding_counts_in_no_metric_and_agents_learn_only_real_rows():
    env = gym.make(ID, batch_size=50, **BC)
    agent = Greedy()
    trajectory = run_episode(env, agent, seed=3)
    assert len(trajectory.rewards) == 11
    metrics = trajectory.metrics
    # decisions are the real rows; approvals and mistakes among them only
    approvals = metrics["approval_rate"] * (569 - 28)
    assert approvals == pytest.approx(round(approvals))
    assert agent.model_.n == 28 + int(trajectory.n_revealed.sum())
    always = run_episode(env, _ApproveAll(), seed=3).metrics
    assert always["approval_rate"] == 1.0 and always["n_revealed"] == 569 - 28


class _ApproveAll(Greedy):
    """Approves every row, padding included (the env must not count the padding)."""

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)


def test_horizon_truncates_a_dataset_stream_early_and_is_capped_by_it():
    env = gym.make(ID, batch_size=10, horizon=3, **BC)
    env.reset(seed=0)
    flags = [env.step(np.zeros(10, dtype=np.int8))[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    long = gym.make(ID, batch_size=100, horizon=2000, **BC).unwrapped
    assert long.horizon == long.n_steps == 6  # 541 rows: 5 batches of 100 and one of 41


@pytest.mark.parametrize(("warm_start", "size"), [(None, 28), (0.2, 113), (40, 40), (0, 0)])
def test_warm_start_is_a_stratified_split_of_the_dataset(warm_start, size):
    env = gym.make(ID, warm_start=warm_start, **BC)
    _, info = env.reset(seed=1)
    y = env.unwrapped._data.y
    warm_y = info["feedback"]["warm_start"]["y"]
    assert info["feedback"]["warm_start"]["X"].shape == (size, 31) and warm_y.shape == (size,)
    assert abs(warm_y.sum() - size * y.mean()) <= 1  # the class shares of the whole dataset
    assert env.unwrapped.n_steps == 569 - size


@pytest.mark.parametrize("link", ["linear", "logistic"])
@pytest.mark.parametrize("quantile", [0.5, 0.7])
def test_dataset_cutoff_is_the_quantile_of_mu_over_all_rows(link, quantile):
    env = gym.make(ID, link=link, cutoff_quantile=quantile, **BC).unwrapped
    assert np.mean(env._data.mu <= env.cutoff) == pytest.approx(quantile, abs=2 / 569)
    _, info = env.reset(seed=0)
    assert info["feedback"]["cutoff"] == env.cutoff
    explicit = gym.make(ID, link=link, cutoff=0.4, **BC).unwrapped
    assert explicit.cutoff == 0.4


def test_dataset_beta_is_the_ols_fit_of_the_labels():
    env = gym.make(ID, link="linear", **BC).unwrapped
    X, y = env._data.X.astype(float), env._data.y
    fit = LinearRegression().fit(X[:, :-1], y)
    np.testing.assert_allclose(env._data.beta, np.append(fit.coef_, fit.intercept_), atol=1e-9)
    np.testing.assert_allclose(env._data.mu, X @ env._data.beta)


def test_dataset_beta_is_scikit_learns_logistic_fit_and_solves_its_equations():
    env = gym.make(ID, link="logistic", **BC).unwrapped
    X, y, beta = env._data.X.astype(float), env._data.y, env._data.beta
    # first-order conditions of the L2 (C = 1) likelihood, intercept unpenalised
    gradient = X.T @ (y - expit(X @ beta)) - np.append(beta[:-1], 0.0)
    assert np.abs(gradient).max() < 1e-3
    fit = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(X[:, :-1], y)
    np.testing.assert_allclose(beta, np.append(fit.coef_[0], fit.intercept_[0]), atol=1e-3)
    np.testing.assert_allclose(env._data.mu, expit(X @ beta))


def test_linear_link_with_collinear_one_hot_columns_gives_the_min_norm_fit():
    rng = np.random.default_rng(0)
    category = rng.integers(0, 3, 200)
    X = np.column_stack([np.eye(3)[category], rng.standard_normal(200)])  # one-hots sum to 1
    y = (X[:, 3] + category > 1.5).astype(float)
    world = build_dataset_world(from_arrays(X, y), get_link("linear"))
    design = world.X.astype(float)
    assert np.linalg.matrix_rank(design) == 4  # 5 columns, intercept = sum of the one-hots
    np.testing.assert_allclose(world.beta, np.linalg.pinv(design) @ y, atol=1e-8)


def test_logistic_link_needs_binary_outcomes():
    data = from_arrays(np.arange(10.0)[:, None], np.linspace(0, 3, 10), task="regression")
    with pytest.raises(ValueError, match="link='logistic'"):
        build_dataset_world(data, get_link("logistic"))
    world = build_dataset_world(data, get_link("linear"))
    assert not world.binary  # the warm split of a regression target is not stratified


def test_dataset_seeds_change_the_split_and_order_but_not_the_world():
    env = gym.make(ID, batch_size=5, **BC)
    obs_0, info_0 = env.reset(seed=0)
    obs_1, info_1 = env.reset(seed=1)
    np.testing.assert_array_equal(info_0["oracle"]["beta"], info_1["oracle"]["beta"])
    assert not np.array_equal(obs_0, obs_1)
    warm_0, warm_1 = info_0["feedback"]["warm_start"], info_1["feedback"]["warm_start"]
    assert set(row_keys(warm_0["X"])) != set(row_keys(warm_1["X"]))
    again, info_again = env.reset(seed=0)
    np.testing.assert_array_equal(again, obs_0)
    np.testing.assert_array_equal(info_again["feedback"]["warm_start"]["X"], warm_0["X"])
    other = gym.make(ID, batch_size=5, **BC).unwrapped
    assert other.cutoff == env.unwrapped.cutoff  # fixed by the data when the env is made


def test_dataset_outcomes_are_the_labels_and_the_loss_is_definition_1():
    env = gym.make(ID, batch_size=20, **BC)
    obs, _ = env.reset(seed=3)
    data = env.unwrapped._data
    index = {key: i for i, key in enumerate(row_keys(data.X))}
    rows = [index[key] for key in row_keys(obs)]
    action = np.tile([1, 0], 10)
    _, reward, _, _, info = env.step(action)
    oracle, cutoff = info["oracle"], env.unwrapped.cutoff
    np.testing.assert_array_equal(oracle["y"], data.y[rows])
    np.testing.assert_array_equal(oracle["mu"], data.mu[rows])
    assert reward == pytest.approx(np.sum(data.y[rows][action == 1] - cutoff))
    assert oracle["loss"] == pytest.approx(one_sided_loss(data.mu[rows], cutoff, action))


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"dim": 5}, ValueError, "dim"),
        ({"link": "linear", "noise_std": 0.5}, ValueError, "noise_std"),
        ({"beta_norm": 3.0}, ValueError, "beta_norm"),
        ({"scenario": "greedy_trap"}, ValueError, "scenario"),
        ({"tau": 0.2}, ValueError, "tau"),
        ({"trap_probability": 0.2}, ValueError, "trap_probability"),
        ({"world_seed": 0}, ValueError, "world_seed"),
        ({"warm_start": 1.5}, ValueError, "warm_start"),
        ({"warm_start": 0.0}, ValueError, "warm_start"),
        ({"warm_start": 569}, ValueError, "warm_start"),
        ({"warm_start": 560, "batch_size": 10, "last_batch": "drop"}, ValueError, "warm_start"),
        ({"last_batch": "keep"}, ValueError, "last_batch"),
        ({"warm_start": "5%"}, TypeError, "warm_start"),
        ({"cutoff": 1.0}, ValueError, "cutoff"),
        ({"dataset": 3}, TypeError, "dataset"),
        ({"dataset": "no_such_data"}, ValueError, "no_such_data"),
    ],
)
def test_bad_dataset_arguments_name_the_parameter(kwargs, error, name):
    with pytest.raises(error, match=name):
        gym.make(ID, **{**BC, **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"warm_start": 0.05}, "warm_start"),
        ({"data_home": "/tmp"}, "data_home"),
        ({"last_batch": "drop"}, "last_batch"),
    ],
)
def test_dataset_only_arguments_need_a_dataset(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gym.make(ID, **kwargs)


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_dataset_env_renders(mode):
    env = gym.make(ID, render_mode=mode, batch_size=10, **BC)
    env.reset(seed=0)
    env.step(np.ones(10, dtype=np.int8))
    frame = env.render()
    assert "approved  10/10" in frame if mode == "ansi" else frame.ndim == 3


def test_greedy_learns_a_dataset_world_from_its_warm_start():
    """An agent fits the real data: far below approving or denying everyone."""
    kwargs = {"link": "linear", "batch_size": 10, **BC}
    trajectory = run_episode(gym.make(ID, **kwargs), Greedy(), seed=0)
    assert trajectory.metrics["steps"] == 55  # 541 rows: 54 batches of 10 and one of 1
    env = gym.make(ID, **kwargs)
    baselines = []
    for decision in (0, 1):
        env.reset(seed=0)
        oracle = [env.step(np.full(10, decision))[4]["oracle"] for _ in range(55)]
        baselines.append(sum(o["loss"] for o in oracle))
    assert trajectory.metrics["cumulative_loss"] < 0.6 * min(baselines)


@pytest.mark.slow
@needs_shared_data
def test_adult_streams_the_papers_split():
    env = gym.make(ID, dataset="adult", data_home=DATA_HOME, batch_size=1000).unwrapped
    assert (env.warm_start, env.n_steps, env.n_padded) == (2442, 47, 600)
    assert env.observation_space.high.max() > FEATURE_BOUND  # rare one-hot categories
    _, info = env.reset(seed=0)
    share = info["feedback"]["warm_start"]["y"].mean()
    assert share == pytest.approx(env._data.y.mean(), abs=1 / 2442)


def test_a_dataset_record_of_ones_own_is_accepted_like_a_name():
    from osfb_gym.data import load

    record = load("breast_cancer")
    by_name = gym.make(ID, batch_size=5, **BC)
    by_record = gym.make(ID, batch_size=5, dataset=record)
    assert by_record.unwrapped.dataset == "breast_cancer"
    np.testing.assert_array_equal(by_name.reset(seed=3)[0], by_record.reset(seed=3)[0])
    with pytest.raises(TypeError, match="dataset"):
        gym.make(ID, dataset=3.5)


@pytest.mark.parametrize("batch_size", [1, 3])
@pytest.mark.parametrize("feedback", ["one_sided", "full"])
@pytest.mark.crossimpl
def test_the_step_scores_with_the_module_helpers(batch_size, feedback):
    """The step's inlined reward, loss and Bayes action are the helpers' own.

    Two codes of sums of at most 3 terms: within 4 ULPs or 16 EPS of the terms
    (another SIMD width may add them in another order); the Bayes action where mu
    is farther from the cutoff than that; the data shown, exactly.
    """
    env = gym.make(ID, batch_size=batch_size, feedback=feedback, horizon=300, link="logistic")
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(300):
        action = rng.integers(0, 2, batch_size).astype(np.int8)
        _, reward, terminated, truncated, info = env.step(action)
        oracle = info["oracle"]
        cutoff = env.unwrapped.cutoff
        terms = eps_of_largest(np.abs(oracle["y"]) + abs(cutoff) + np.abs(oracle["mu"]))
        assert_close(reward, float(revealed_reward(oracle["y"], cutoff, action == 1)), atol=terms)
        want = float(one_sided_loss(oracle["mu"], cutoff, action))
        assert_close(oracle["loss"], want, atol=terms)
        decided = np.abs(oracle["mu"] - cutoff) > terms
        np.testing.assert_array_equal(
            oracle["bayes_action"][decided], bayes_decision(oracle["mu"], cutoff)[decided]
        )
        assert oracle["bayes_action"].dtype == np.int8 and oracle["bayes_action"].shape == (
            batch_size,
        )
        shown = np.where(info["feedback"]["revealed"], oracle["y"], 0.0)
        np.testing.assert_array_equal(info["feedback"]["y"], shown)
        if terminated or truncated:
            break


@pytest.mark.parametrize(
    "action",
    [np.array([2]), np.array([-1], dtype=np.int8), np.array([255], dtype=np.uint8), [0.5]],
)
def test_the_fast_action_check_rejects_what_the_full_check_rejects(action):
    env = gym.make(ID, horizon=5).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    env3 = gym.make(ID, horizon=5, batch_size=3).unwrapped
    env3.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env3.step(np.array([1, 0, 2]))
    assert env3.step(np.array([True, False, True]))[4]["feedback"]["revealed"].tolist() == [
        True,
        False,
        True,
    ]
