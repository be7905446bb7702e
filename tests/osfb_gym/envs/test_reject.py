"""Behaviour of RejectOption-v0: the settlement, the channels, the worlds, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy.special import logit
from scipy.stats import norm

import osfb_gym  # noqa: F401
from osfb_gym.data import from_arrays
from osfb_gym.envs.reject import (
    PREDICT_NEGATIVE,
    PREDICT_POSITIVE,
    REJECT,
    RejectMetrics,
    check_action,
    chow_risk,
    decision_loss,
    draw_world,
)
from osfb_gym.runner import run_episode
from tests.helpers import assert_same, needs_osfb_data
from tests.osfb_gym.envs.cases import DATA_HOME
from tests.osfb_gym.envs.hidden import override_hidden

ID = "RejectOption-v0"


def run(env: gym.Env, seed: int, probe: str | None = None) -> list[tuple]:
    """Random actions to the end of the episode; (action, reward, feedback, oracle) per step."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    record = []
    while True:
        action = np.array([rng.integers(3), rng.integers(2)])
        if probe is not None:
            override_hidden(env.unwrapped, action, probe)
        _, reward, terminated, truncated, info = env.step(action)
        record.append((action, reward, info["feedback"], info["oracle"]))
        if terminated or truncated:
            return record


@pytest.mark.parametrize("query_cost", [0.0, 0.1])
def test_the_return_is_minus_the_true_objective_and_no_step_shows_a_hidden_loss(query_cost):
    env = gym.make(ID, d=0.3, query_cost=query_cost, horizon=400)
    record = run(env, seed=1)
    rewards = np.array([step[1] for step in record])
    losses = np.array([step[3]["loss"] for step in record])
    revealed = np.array([step[2]["revealed"] for step in record])
    queried = np.array([step[0][1] for step in record])
    np.testing.assert_array_equal(revealed, queried == 1)
    np.testing.assert_allclose(losses, [s[3]["risk"] + query_cost * s[0][1] for s in record])
    # every step but the last: minus the loss where the label was asked for, else 0
    np.testing.assert_allclose(rewards[:-1], np.where(revealed, -losses, 0.0)[:-1])
    settled = record[-1][2]["settled"]
    assert settled == pytest.approx(losses[~revealed].sum()) and settled > 0
    assert all(step[2]["settled"] == 0.0 for step in record[:-1])
    assert rewards.sum() == pytest.approx(-losses.sum())


def test_settle_never_leaves_the_hidden_losses_out():
    record = run(gym.make(ID, settle="never", horizon=300), seed=2)
    rewards = np.array([step[1] for step in record])
    revealed = np.array([step[2]["revealed"] for step in record])
    losses = np.array([step[3]["loss"] for step in record])
    assert rewards.sum() == pytest.approx(-losses[revealed].sum())
    assert record[-1][2]["settled"] == 0.0


def test_only_the_settled_lump_depends_on_the_hidden_labels():
    env = gym.make(ID, horizon=200)
    low, high = run(env, seed=3, probe="low"), run(env, seed=3, probe="high")
    for a, b in zip(low[:-1], high[:-1], strict=True):
        assert_same(a[:3], b[:3])  # action, reward, feedback
    hidden = lambda record: sum(s[3]["loss"] for s in record if not s[2]["revealed"])  # noqa: E731
    assert hidden(low) != hidden(high)
    for record in (low, high):
        assert record[-1][2]["settled"] == pytest.approx(hidden(record))


def test_full_feedback_reveals_every_label_and_settles_nothing():
    record = run(gym.make(ID, feedback="full", horizon=100), seed=0)
    assert all(step[2]["revealed"] and step[2]["y"] == step[3]["y"] for step in record)
    assert all(step[1] == pytest.approx(-step[3]["loss"]) for step in record)
    assert record[-1][2]["settled"] == 0.0


def test_decision_loss_and_the_action_check():
    d = 0.2
    assert decision_loss(REJECT, -1, d) == d
    assert decision_loss(PREDICT_POSITIVE, 1, d) == decision_loss(PREDICT_NEGATIVE, -1, d) == 0
    assert decision_loss(PREDICT_POSITIVE, -1, d) == decision_loss(PREDICT_NEGATIVE, 1, d) == 1
    assert check_action((np.int8(2), True)) == (2, 1)
    for bad, error in [
        ([0.0, 1.0], TypeError),
        (["2", "1"], TypeError),
        ([1, 2], ValueError),
        ([-1, 0], ValueError),
        ([1, 0, 0], ValueError),
        (1, ValueError),
    ]:
        with pytest.raises(error, match="action"):
            check_action(bad)


def test_metrics_add_up_and_their_curves_end_at_the_summary():
    env = gym.make(ID, d=0.4, horizon=500)
    trajectory_metrics = run_episode(env, _RandomAgent(), seed=0).metrics
    m = trajectory_metrics
    assert m["average_risk"] == pytest.approx(
        m["misclassification_rate"] + 0.4 * m["rejection_rate"]
    )
    metrics = RejectMetrics()
    for action, reward, feedback, oracle in run(gym.make(ID, horizon=50), seed=5):
        metrics.update(action, reward, feedback, oracle)
    summary, curves = metrics.get(), metrics.curves()
    for key in ("risk", "query_rate", "misclassification_rate", "rejection_rate"):
        assert curves[key].shape == (50,)
    assert curves["risk"][-1] == pytest.approx(summary["average_risk"])
    assert curves["n_queries"][-1] == summary["n_queries"]


class _RandomAgent:
    """Uniformly random actions, through the runner (no learning)."""

    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        self.space = action_space
        self.space.seed(seed)

    def act(self, observation):
        return self.space.sample()

    def update(self, observation, action, reward, feedback):
        pass


@pytest.mark.parametrize("separation", [1.0, 2.0, 4.0])
def test_overlap_posterior_is_calibrated_and_chow_risk_matches_the_normal_formula(separation):
    world = draw_world(5, "overlap", np.random.default_rng(0), separation=separation, noise=0.0)
    _, y, posterior = world.sample(200_000, np.random.default_rng(1))
    bins = np.digitize(posterior, np.linspace(0.1, 0.9, 9))
    for b in np.unique(bins):
        inside = bins == b
        if inside.sum() > 2000:
            assert np.mean(y[inside] == 1) == pytest.approx(posterior[inside].mean(), abs=0.02)
    d = 0.25
    m = separation / 2
    t = logit(1 - d) / separation  # Chow rejects |s| < t
    rejected = norm.cdf(t - m) - norm.cdf(-t - m)
    expected = norm.cdf(-t - m) + d * rejected
    assert chow_risk(posterior, d).mean() == pytest.approx(expected, abs=0.003)


def test_separable_world_noise_flips_its_share_and_bayes_risk_is_the_noise():
    world = draw_world(4, "separable", np.random.default_rng(0), separation=0.0, noise=0.1)
    x, y, posterior = world.sample(50_000, np.random.default_rng(2))
    clean = np.where(x.astype(float) @ world.w > 0, 1, -1)
    assert np.mean(y != clean) == pytest.approx(0.1, abs=0.005)
    np.testing.assert_allclose(chow_risk(posterior, 0.25), 0.1)


def test_world_seed_fixes_w_not_the_stream():
    env = gym.make(ID, world_seed=3)
    obs_a, info_a = env.reset(seed=0)
    obs_b, info_b = env.reset(seed=1)
    np.testing.assert_array_equal(info_a["oracle"]["w"], info_b["oracle"]["w"])
    assert not np.array_equal(obs_a, obs_b)


def test_dataset_labels_become_plus_minus_one_and_rows_stream_once():
    X = np.array([[float(i), float(i % 2)] for i in range(12)])
    y = np.array([i % 2 for i in range(12)])
    env = gym.make(ID, dataset=from_arrays(X, y, name="toy"))
    obs, _ = env.reset(seed=0)
    assert env.unwrapped.n_steps == 12 and env.unwrapped.feature_names[-1] == "intercept"
    seen = []
    for t in range(12):
        parity_feature = obs[1]
        obs, _, terminated, truncated, info = env.step([1, 1])
        assert info["feedback"]["y"] == (1 if parity_feature > 0 else -1)
        seen.append(float(obs[0]))
        assert terminated == (t == 11) and not truncated
    np.testing.assert_array_equal(obs, np.zeros(3, dtype=np.float32))
    with pytest.raises(RuntimeError, match="reset"):
        env.step([1, 0])


def test_replacement_draws_rows_independently_up_to_the_horizon():
    X = np.arange(10.0)[:, None]
    env = gym.make(ID, dataset=from_arrays(X, np.arange(10) % 2), replacement=True, horizon=60)
    obs, _ = env.reset(seed=0)
    rows = [float(obs[0])]
    for t in range(60):
        obs, _, terminated, truncated, _ = env.step([1, 0])
        rows.append(float(obs[0]))
        assert not terminated and truncated == (t == 59)
    assert len(set(rows)) == 10 and len(rows) > len(set(rows))  # repeats: drawn with replacement


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"d": 0.5}, "d"),
        ({"d": 0.0}, "d"),
        ({"d": -0.2}, "d"),
        ({"query_cost": -0.1}, "query_cost"),
        ({"settle": "monthly"}, "settle"),
        ({"scenario": "gappy"}, "scenario"),
        ({"noise": 0.6}, "noise"),
        ({"separation": 0.0}, "separation"),
        ({"separation": 9.0}, "separation"),
        ({"scenario": "separable", "separation": 2.0}, "separation"),
        ({"horizon": 0}, "horizon"),
        ({"replacement": True}, "replacement"),
        ({"replacement": 1}, "replacement"),
        ({"topic": "earn"}, "topic"),
        ({"dataset": "breast_cancer", "noise": 0.1}, "noise"),
        ({"dataset": "breast_cancer", "world_seed": 1}, "world_seed"),
        ({"dataset": "breast_cancer", "dim": 5}, "dim"),
        ({"dataset": 3}, "dataset"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        gym.make(ID, **kwargs)


def test_a_dataset_without_binary_labels_is_refused():
    data = from_arrays(np.ones((4, 1)), [0, 1, 2, 3], task="regression")
    with pytest.raises(ValueError, match="labels in \\{0, 1\\} for reject option"):
        gym.make(ID, dataset=data)


@needs_osfb_data("phishing", "svmguide1")
@pytest.mark.parametrize(("name", "rows", "dim"), [("phishing", 11_055, 31), ("guide", 7_089, 5)])
def test_the_papers_datasets_stream_with_their_sizes(name, rows, dim):
    env = gym.make(ID, dataset=name, data_home=DATA_HOME)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (dim,) and env.unwrapped.n_steps == rows
