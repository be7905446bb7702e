"""Behaviour of AppleTasting-v0: the channels, the metrics, the worlds, bad input."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.seeding import np_random
from scipy.stats import norm

import osfb_gym  # noqa: F401
from agents.base import Agent
from osfb_gym.data import from_arrays
from osfb_gym.envs.apple import (
    FALSE_NEGATIVE,
    FALSE_POSITIVE,
    NO_MISTAKE,
    AppleMetrics,
    adversarial_order,
    check_action,
    draw_world,
    move_first_positive_first,
    outcome,
)
from osfb_gym.runner import run_episode
from tests.helpers import needs_osfb_data
from tests.osfb_gym.envs.cases import DATA_HOME

ID = "AppleTasting-v0"


def run(env: gym.Env, seed: int, policy=None, steps: int | None = None) -> list[tuple]:
    """Step to the end of the episode (or ``steps``); return (action, reward, info) triples."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    record = []
    while steps is None or len(record) < steps:
        action = int(rng.integers(2)) if policy is None else policy(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        record.append((action, reward, info))
        if terminated or truncated:
            break
    return record


@pytest.mark.parametrize("gain, cost_fp", [(1.0, 1.0), (2.5, 0.5), (0.0, 3.0)])
def test_outcome_reward_is_gain_times_label_minus_loss(gain, cost_fp):
    for action in (0, 1):
        for y in (0, 1):
            reward, mistake, loss = outcome(action, y, gain, cost_fp)
            assert reward == pytest.approx(gain * y - loss)
            assert loss >= 0
            expected = {(1, 0): FALSE_POSITIVE, (0, 1): FALSE_NEGATIVE}.get((action, y), NO_MISTAKE)
            assert mistake == expected


def test_channels_reward_and_the_return_identity():
    env = gym.make(ID, gain=2.0, cost_fp=0.5, horizon=300)
    _, info = env.reset(seed=0)
    assert info["feedback"] == {"gain": 2.0, "cost_fp": 0.5}
    record = run(env, seed=0)
    assert len(record) == 300
    positives = 0
    for action, reward, info in record:
        feedback, oracle = info["feedback"], info["oracle"]
        assert type(feedback["revealed"]) is bool and type(feedback["y"]) is int
        assert feedback["revealed"] == (action == 1)
        assert feedback["y"] == (oracle["y"] if action == 1 else 0)
        assert reward == {(1, 1): 2.0, (1, 0): -0.5}.get((action, oracle["y"]), 0.0)
        positives += oracle["y"]
    total_return = sum(reward for _, reward, _ in record)
    total_loss = sum(info["oracle"]["loss"] for _, _, info in record)
    assert total_return == pytest.approx(2.0 * positives - total_loss)


def test_full_feedback_reveals_every_label():
    env = gym.make(ID, feedback="full", horizon=50)
    for _, _, info in run(env, seed=1):
        assert info["feedback"]["revealed"] and info["feedback"]["y"] == info["oracle"]["y"]


def test_metrics_count_the_confusion_matrix():
    env = gym.make(ID, horizon=400, gain=1.5, cost_fp=2.0)
    metrics = AppleMetrics()
    record = run(env, seed=2)
    for action, reward, info in record:
        metrics.update(action, reward, info["feedback"], info["oracle"])
    m = metrics.get()
    assert m["tp"] + m["fp"] + m["tn"] + m["fn"] == m["steps"] == 400
    assert m["label_requests"] == m["tp"] + m["fp"] == m["n_revealed"]
    assert m["tasted_negatives"] == m["fp"]
    assert m["cumulative_loss"] == pytest.approx(2.0 * m["fp"] + 1.5 * m["fn"])
    assert m["precision"] == pytest.approx(m["tp"] / (m["tp"] + m["fp"]))
    assert m["recall"] == pytest.approx(m["tp"] / (m["tp"] + m["fn"]))
    p, r = m["precision"], m["recall"]
    assert m["f1"] == pytest.approx(2 * p * r / (p + r))
    assert m["return"] == pytest.approx(1.5 * (m["tp"] + m["fn"]) - m["cumulative_loss"])


def test_metrics_are_zero_where_undefined():
    metrics = AppleMetrics()
    metrics.update(0, 0.0, {"revealed": False}, {"y": 0, "loss": 0.0})
    m = metrics.get()
    assert m["precision"] == m["recall"] == m["f1"] == 0.0


@pytest.mark.parametrize("action", [2, -1, 0.5, 1.0, "1", [1], np.array([1]), np.array(0.0), None])
def test_check_action_rejects_everything_but_0_and_1(action):
    with pytest.raises((TypeError, ValueError), match="action"):
        check_action(action)


def test_check_action_accepts_numpy_integers():
    assert check_action(np.int64(1)) == 1 and check_action(np.array(0)) == 0
    assert check_action(True) == 1 and check_action(np.bool_(False)) == 0


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"gain": -1.0}, "gain"),
        ({"cost_fp": -0.1}, "cost_fp"),
        ({"noise": 0.6}, "noise"),
        ({"noise": -0.1}, "noise"),
        ({"scenario": "minority", "positive_rate": 1.0}, "positive_rate"),
        ({"scenario": "minority", "positive_rate": 0.0}, "positive_rate"),
        ({"scenario": "nope"}, "scenario"),
        ({"order": "sorted"}, "order"),
        ({"feedback": "partial"}, "feedback"),
        ({"dim": 0}, "dim"),
        ({"horizon": 0}, "horizon"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises((TypeError, ValueError), match=name):
        gym.make(ID, **kwargs)


# --------------------------------------------------------------------------- synthetic worlds
def stream(env: gym.Env, seed: int, steps: int | None = None) -> tuple[np.ndarray, np.ndarray, Any]:
    """Reject everything; return the observed features, the true labels and ``w*``."""
    obs, info = env.reset(seed=seed)
    xs, ys = [], []
    while steps is None or len(ys) < steps:
        xs.append(obs)
        obs, _, terminated, truncated, info_step = env.step(0)
        ys.append(info_step["oracle"]["y"])
        if terminated or truncated:
            break
    return np.array(xs), np.array(ys), info["oracle"].get("w")


def test_separable_labels_are_the_side_of_w_and_noise_flips_its_share():
    x, y, w = stream(gym.make(ID, dim=5, horizon=4000), seed=0)
    score = x.astype(np.float64) @ w
    assert np.array_equal(y, (score > 0).astype(int))
    assert np.linalg.norm(w) == pytest.approx(1.0)
    x, y, w = stream(gym.make(ID, dim=5, noise=0.2, horizon=4000), seed=1)
    flipped = y != (x.astype(np.float64) @ w > 0)
    assert flipped.mean() == pytest.approx(0.2, abs=0.02)


def test_world_seed_fixes_w_not_the_stream():
    env = gym.make(ID, world_seed=3, horizon=10)
    obs_a, info_a = env.reset(seed=0)
    obs_b, info_b = env.reset(seed=1)
    np.testing.assert_array_equal(info_a["oracle"]["w"], info_b["oracle"]["w"])
    assert not np.array_equal(obs_a, obs_b)
    _, info_c = gym.make(ID, horizon=10).reset(seed=0)
    assert not np.array_equal(info_a["oracle"]["w"], info_c["oracle"]["w"])


@pytest.mark.parametrize("rate", [0.05, 0.2])
def test_minority_rate_holds(rate):
    world = draw_world(10, "minority", np.random.default_rng(0), positive_rate=rate)
    _, y, score = world.sample(100_000, np.random.default_rng(1))
    assert y.mean() == pytest.approx(rate, rel=0.05)
    assert world.threshold == pytest.approx(norm.ppf(1 - rate))
    assert np.array_equal(y, score > world.threshold)
    _, y, _ = stream(gym.make(ID, scenario="minority", horizon=4000), seed=2)
    assert y.mean() == pytest.approx(0.05, abs=0.012)


def test_gappy_has_no_example_in_the_gap_and_stays_separable():
    env = gym.make(ID, scenario="gappy", gap_offset=0.3, gap_width=1.2, horizon=5000)
    x, y, w = stream(env, seed=0)
    score = x.astype(np.float64) @ w
    assert not np.any((score > 0.3 + 1e-5) & (score < 1.5 - 1e-5))
    assert np.any((score > 0) & (score < 0.3)) and np.any((score > 1.5) & (score < 1.6))
    assert np.array_equal(y, (score > 0).astype(int))
    # the gap moves scores, not classes: the positive share is still a half
    assert y.mean() == pytest.approx(0.5, abs=0.03)
    assert np.all(np.abs(x) <= env.observation_space.high)


def test_striped_has_a_stripe_of_negatives_inside_the_positives():
    x, y, w = stream(gym.make(ID, scenario="striped", horizon=5000), seed=0)
    score = x.astype(np.float64) @ w
    stripe = (score > 0.5) & (score < 1.0)
    assert stripe.mean() == pytest.approx(norm.cdf(1.0) - norm.cdf(0.5), abs=0.02)
    assert np.all(y[stripe] == 0)
    assert np.all(y[(score > 0) & ~stripe] == 1) and np.all(y[score <= 0] == 0)
    # the best hyperplane is still s = 0: the stripe costs less than the slab before it
    assert stripe.sum() < ((score > 0) & (score <= 0.5)).sum()


@pytest.mark.parametrize("scenario", ["separable", "minority", "striped"])
def test_adversarial_order_puts_negatives_first_hardest_first(scenario):
    env = gym.make(ID, scenario=scenario, order="adversarial", noise=0.1, horizon=600)
    x, y, w = stream(env, seed=4)
    assert len(y) == 600
    score = x.astype(np.float64) @ w
    n_neg = int(np.sum(y == 0))
    assert np.all(y[:n_neg] == 0) and np.all(y[n_neg:] == 1)
    assert np.all(np.diff(score[:n_neg]) <= 0) and np.all(np.diff(score[n_neg:]) >= 0)


def test_adversarial_order_of_a_dataset_and_first_positive_helpers():
    y = np.array([1, 0, 0, 1, 0, 1])
    order = adversarial_order(y, None, np.random.default_rng(0))
    assert sorted(order.tolist()) == list(range(6)) and y[order].tolist() == [0, 0, 0, 1, 1, 1]
    moved = move_first_positive_first(np.array([1, 2, 5, 0, 3, 4]), y)
    assert moved.tolist() == [5, 1, 2, 0, 3, 4]
    env = gym.make(ID, dataset="breast_cancer", order="adversarial")
    _, labels, _ = stream(env, seed=0)
    assert np.all(np.diff(labels) >= 0) and len(labels) == 569


# --------------------------------------------------------------------------- datasets
def small_record(n: int = 12):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]
    return from_arrays(X, (np.arange(n) % 3 == 0).astype(float), name="small")


def test_dataset_rows_stream_once_standardised_then_terminate():
    record = small_record()
    env = gym.make(ID, dataset=record)
    unwrapped = env.unwrapped
    assert unwrapped.n_steps == unwrapped.horizon == 12 and unwrapped.dim == 4
    assert unwrapped.feature_names == ("x0", "x1", "x2", "intercept")
    x, y, w = stream(env, seed=0)
    assert w is None and len(y) == 12
    standard = (record.X - record.X.mean(0)) / record.X.std(0)
    expected = np.hstack([standard, np.ones((12, 1))]).astype(np.float32)
    rows = {tuple(row) for row in expected}
    assert {tuple(row) for row in x} == rows
    lookup = {tuple(row): label for row, label in zip(expected, record.y, strict=True)}
    assert [lookup[tuple(row)] for row in x] == y.tolist()
    env.reset(seed=0)
    for _ in range(11):
        assert env.step(1)[2:4] == (False, False)
    obs, _, terminated, truncated, _ = env.step(1)
    assert terminated and not truncated and not obs.any()
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(1)
    env = gym.make(ID, dataset=record, horizon=5)
    assert len(stream(env, seed=0)[1]) == 5
    assert gym.make(ID, dataset=record, horizon=50).unwrapped.horizon == 12


def test_a_dataset_order_follows_the_reset_seed():
    env = gym.make(ID, dataset="breast_cancer")
    env.reset(seed=7)
    expected = np_random(7)[0].permutation(569)
    np.testing.assert_array_equal(env.unwrapped._order, expected)


def test_vector_env_autoresets_a_finished_dataset():
    vec = gym.vector.SyncVectorEnv([lambda: gym.make(ID, dataset=small_record(5))] * 2)
    vec.reset(seed=[0, 1])
    done = np.zeros(2, dtype=bool)
    for _ in range(5):
        _, _, terminated, _, info = vec.step(np.array([1, 0]))
        done |= terminated
        assert info["feedback"]["revealed"].dtype == bool
    assert done.all()
    vec.close()


def test_dataset_arguments_are_checked():
    with pytest.raises(ValueError, match="dataset 'real'.*labels in"):
        gym.make(
            ID, dataset=from_arrays([[0.0], [1.0]], [0.5, 2.0], name="real", task="regression")
        )
    for name, value in [
        ("scenario", "gappy"),
        ("noise", 0.1),
        ("positive_rate", 0.1),
        ("world_seed", 1),
        ("gap_width", 1.0),
    ]:
        with pytest.raises(ValueError, match=name):
            gym.make(ID, dataset="breast_cancer", **{name: value})
    with pytest.raises(ValueError, match="dim"):
        gym.make(ID, dataset="breast_cancer", dim=10)
    with pytest.raises(ValueError, match="topic"):
        gym.make(ID, dataset="breast_cancer", topic="earn")
    with pytest.raises(ValueError, match="topic"):
        gym.make(ID, topic="earn")
    with pytest.raises(ValueError, match="first_positive_first"):
        gym.make(ID, first_positive_first=True)
    with pytest.raises(ValueError, match="first_positive_first"):
        gym.make(ID, dataset="breast_cancer", order="adversarial", first_positive_first=True)
    with pytest.raises(ValueError, match="data_home"):
        gym.make(ID, data_home="/tmp")
    with pytest.raises(TypeError, match="dataset"):
        gym.make(ID, dataset=3)
    with pytest.raises(ValueError, match="unknown dataset"):
        gym.make(ID, dataset="no_such_data")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"scenario": "gappy", "positive_rate": 0.2}, "positive_rate"),
        ({"scenario": "separable", "gap_width": 1.0}, "gap_width"),
        ({"scenario": "gappy", "stripe_offset": 1.0}, "stripe_offset"),
        ({"scenario": "gappy", "gap_width": 0.0}, "gap_width"),
        ({"scenario": "gappy", "gap_offset": -0.1}, "gap_offset"),
        ({"scenario": "striped", "stripe_offset": 3.0, "stripe_width": 1.5}, "stripe_width"),
    ],
)
def test_scenario_arguments_belong_to_their_scenario(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gym.make(ID, **kwargs)


# --------------------------------------------------------------------------- text
needs_data = needs_osfb_data("sms_spam")


@needs_data
def test_sms_spam_rows_are_the_papers_binary_case_preserving_4grams():
    env = gym.make(ID, dataset="sms_spam", data_home=DATA_HOME)
    unwrapped = env.unwrapped
    X = unwrapped._data.X
    assert X.shape == (5574, 2**18) and X.format == "csr" and X.dtype == np.float32
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).ravel()
    assert np.allclose(norms[X.getnnz(axis=1) > 0], 1.0, atol=1e-5)
    # binary before the normalisation: every nonzero of a row is 1 / sqrt(nnz)
    row = X[0]
    np.testing.assert_allclose(row.data, 1.0 / np.sqrt(row.nnz), rtol=1e-6)
    assert env.observation_space.shape == (2**18,) and env.observation_space.high[0] == 1.0
    obs, _ = env.reset(seed=0)
    first = unwrapped._order[0]
    np.testing.assert_array_equal(obs, X[first].toarray().ravel())
    assert unwrapped._data.y.mean() == pytest.approx(747 / 5574)
    assert not unwrapped.first_positive_first
    # one vectorisation per (texts, dim, features), shared by every env
    assert gym.make(ID, dataset="sms_spam", data_home=DATA_HOME).unwrapped._data.X is X
    counts = gym.make(ID, dataset="sms_spam", data_home=DATA_HOME, features="counts").unwrapped
    assert counts._data.X.shape == (5574, 4096)  # the earlier featurisation, kept as an option
    assert counts._data.X.getnnz(axis=1).max() < 1000


def test_binary_features_preserve_case_and_ignore_repeats():
    from osfb_gym.envs._text import hash_char_4grams

    binary = hash_char_4grams(("spam spam", "spam spam spam"), 2**18, binary=True, lowercase=False)
    np.testing.assert_array_equal(binary[0].toarray(), binary[1].toarray())  # same 4-gram set
    counts = hash_char_4grams(("spam spam", "spam spam spam"), 2**18)
    assert not np.array_equal(counts[0].toarray(), counts[1].toarray())  # counts differ
    upper = hash_char_4grams(("SPAM",), 2**18, binary=True, lowercase=False)
    lower = hash_char_4grams(("spam",), 2**18, binary=True, lowercase=False)
    assert upper.indices.tolist() != lower.indices.tolist()


@needs_data
@pytest.mark.slow
def test_reuters_moves_the_first_positive_to_the_front():
    kwargs = {"dataset": "reuters_r8", "data_home": DATA_HOME, "topic": "ship", "dim": 128}
    env = gym.make(ID, **kwargs)
    assert env.unwrapped.first_positive_first
    y = env.unwrapped._data.y
    for seed in range(3):
        env.reset(seed=seed)
        assert env.step(0)[4]["oracle"]["y"] == 1
        permutation = np_random(seed)[0].permutation(y.size)
        expected = move_first_positive_first(permutation, y)
        np.testing.assert_array_equal(env.unwrapped._order, expected)
    plain = gym.make(ID, **kwargs, first_positive_first=False)
    firsts = [plain.reset(seed=s) and plain.step(0)[4]["oracle"]["y"] for s in range(5)]
    assert sum(firsts) < 5


def test_positive_class_rows_and_unit_features_derive_a_tabular_stream():
    # breast_cancer ships with scikit-learn: no data folder needed
    plain = gym.make(ID, dataset="breast_cancer").unwrapped._data
    env = gym.make(ID, dataset="breast_cancer", positive_class=0, rows="test", features="unit")
    data = env.unwrapped._data
    test = np.arange(plain.n_rows) % 4 == 3  # every fourth row, spread over the file
    np.testing.assert_array_equal(data.y, 1 - plain.y[test])
    assert env.observation_space.shape == (plain.dim - 1,)  # the intercept dropped
    assert data.feature_names == plain.feature_names[:-1]
    norms = np.linalg.norm(data.X.astype(np.float64), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-6)
    direction = plain.X[test][:, :-1] / np.linalg.norm(plain.X[test][:, :-1], axis=1)[:, None]
    np.testing.assert_allclose(data.X, direction, atol=1e-6)
    train = gym.make(ID, dataset="breast_cancer", rows="train").unwrapped._data
    assert train.n_rows + data.n_rows == plain.n_rows


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"positive_class": 0}, "positive_class"),
        ({"rows": "test"}, "rows"),
        ({"features": "unit"}, "features"),
        ({"dataset": "breast_cancer", "positive_class": 2}, "positive_class"),
        ({"dataset": "breast_cancer", "rows": "half"}, "rows"),
        ({"dataset": "breast_cancer", "features": "binary"}, "features"),
    ],
)
def test_dataset_arguments_are_checked_and_refused_for_synthetic_worlds(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gym.make(ID, **kwargs)


# --------------------------------------------------------------------------- runner
class _TasteAbove(Agent):
    env_ids = ("AppleTasting-v0",)

    def __init__(self, threshold: float = 0.0):
        self.threshold = threshold

    def act(self, observation):
        return int(observation[0] > self.threshold)


def test_runner_scores_an_episode_with_the_apple_metrics():
    trajectory = run_episode(gym.make(ID, horizon=200), _TasteAbove(), seed=0)
    m = trajectory.metrics
    assert m["steps"] == 200 and {"tp", "fp", "tn", "fn", "f1", "label_requests"} <= set(m)
    assert m["label_requests"] == trajectory.n_revealed.sum() == trajectory.actions.sum()
    assert m["cumulative_loss"] == pytest.approx(trajectory.oracle_loss.sum())


def _recall(scenario: str, feedback: str, bias: bool, seeds: range) -> float:
    """Mean recall of the Perceptron with margins (m = 2) on 2000-step synthetic worlds."""
    from agents.apple import MarginPerceptron

    return float(
        np.mean(
            [
                run_episode(
                    gym.make(
                        ID, scenario=scenario, feedback=feedback, horizon=2000, world_seed=seed
                    ),
                    MarginPerceptron(m=2.0, eta=1.0, fit_intercept=bias),
                    seed,
                ).metrics["recall"]
                for seed in seeds
            ]
        )
    )


def test_gappy_and_striped_worlds_stall_a_one_sided_margin_learner_with_a_bias():
    seeds = range(3)
    # with a bias the hyperplane can sit at the gap's far edge: one-sided, it stops there
    # and never tastes the slab (0, 0.5] (38% of the positives); full feedback moves it back
    assert _recall("gappy", "one_sided", True, seeds) < 0.8
    assert _recall("gappy", "full", True, seeds) > 0.85
    # the stripe's negatives pull an exploring hyperplane back: far below full feedback
    assert _recall("striped", "one_sided", True, seeds) < 0.3
    assert _recall("striped", "full", True, seeds) > 0.5
    # without a bias (Figure 5) the hyperplane is pinned through s = 0, the true boundary
    assert _recall("gappy", "one_sided", False, seeds) > 0.85


# ---------------------------------------------------------------------------- the Bayes reference
@pytest.mark.parametrize(("noise", "gain", "cost_fp"), [(0.2, 1.0, 1.0), (0.2, 1.0, 10.0)])
def test_the_bayes_loss_is_the_expected_loss_of_the_better_decision(noise, gain, cost_fp):
    world = draw_world(3, "separable", np.random.default_rng(0), noise=noise)
    score = np.array([-2.0, -0.1, 0.1, 2.0])
    positive = np.where(score > world.threshold, 1 - noise, noise)
    taste, reject = (1 - positive) * cost_fp, positive * gain
    np.testing.assert_allclose(world.bayes_loss(score, gain, cost_fp), np.minimum(taste, reject))
    # with cost_fp 10 even a clean positive (P(y=1) = 0.8) is not worth tasting: loss 0.8
    assert cost_fp == 1.0 or np.allclose(world.bayes_loss(score, gain, cost_fp)[score > 0], 0.8)


@pytest.mark.parametrize("order", ["random", "adversarial"])
def test_the_oracle_gives_the_bayes_loss_of_the_shown_example(order):
    env = gym.make(ID, dim=4, horizon=300, noise=0.25, cost_fp=3.0, order=order)
    obs, info = env.reset(seed=5)
    world = env.unwrapped._world
    total = 0.0
    np.testing.assert_array_equal(info["oracle"]["w"], world.w)
    for _ in range(300):  # past a chunk of 256 examples in random order
        # the score of the float32 features shown, as the world scores them
        expected = world.bayes_loss(np.array([obs.astype(np.float64) @ world.w]), 1.0, 3.0)[0]
        obs, _, _, _, info = env.step(1)
        assert info["oracle"]["bayes_loss"] == expected
        total += expected
    metrics = run_episode(env, _Taster(), seed=5).metrics
    assert metrics["bayes_loss"] == pytest.approx(total)
    assert 0 < metrics["bayes_loss"] < metrics["cumulative_loss"]


def test_a_noise_free_world_has_bayes_loss_0_and_a_dataset_none():
    metrics = run_episode(gym.make(ID, dim=3, horizon=40), _Taster(), seed=1).metrics
    assert metrics["bayes_loss"] == 0.0
    record = from_arrays(np.eye(6), np.array([0, 1, 0, 1, 1, 0.0]), name="tiny")
    env = gym.make(ID, dataset=record)
    env.reset(seed=0)
    assert "bayes_loss" not in env.step(1)[4]["oracle"]
    assert np.isnan(run_episode(env, _Taster(), seed=0).metrics["bayes_loss"])


class _Taster(Agent):
    """Tastes everything."""

    def act(self, observation: Any) -> int:
        return 1

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        pass
