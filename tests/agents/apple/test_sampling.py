"""Sampling strategies: their probabilities, the wrapper contract, and the label savings."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

from agents.apple import (
    AppleTastingSampling,
    LabelEfficient,
    LinearLearner,
    MarginPerceptron,
    OnlineSVM,
    Perceptron,
)
from agents.lending import Greedy
from osfb_gym.runner import run_episode
from tests.agents.apple.streams import DIM, Always, M, mean_metrics, play, spaces_for, stream
from tests.helpers import assert_same


class Fixed(LinearLearner):
    """A base that never learns: f(x) = x[0], so tests can set the score."""

    def __init__(self, threshold: float = 0.0, class_weight: dict | None = None) -> None:
        self.threshold = threshold
        self.class_weight = class_weight

    def reset(self, observation_space, action_space, *, seed=None, feedback=None) -> None:
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.coef_[0] = 1.0

    def learn(self, x, y) -> None:
        self.n_learned_ += 1


def taste_rate(agent, score: float, n: int = 4000) -> float:
    x = np.zeros(2, dtype=np.float32)
    x[0] = score
    return float(np.mean([agent.act(x) for _ in range(n)]))


# ------------------------------------------------------------------ the probabilities
def test_label_efficient_samples_with_b_over_b_plus_abs_f():
    agent = LabelEfficient(Fixed(), beta=1.0)
    agent.reset(*spaces_for(2), seed=0)
    assert taste_rate(agent, 0.5) == 1.0  # predicted positive: always tasted, for free
    assert taste_rate(agent, -2.0) == pytest.approx(1 / 3, abs=0.03)  # b = 1
    agent.n_mistakes_ = 3  # b = 2: b / (b + 2) = 1/2
    assert taste_rate(agent, -2.0) == pytest.approx(0.5, abs=0.03)


def test_label_efficient_counts_every_mistake_found():
    agent = LabelEfficient(Fixed(), beta=1.0)
    agent.reset(*spaces_for(2), seed=0)
    neg, pos = np.array([-1.0, 0.0], np.float32), np.array([1.0, 0.0], np.float32)
    agent.update(pos, 1, -1.0, {"revealed": True, "y": 0})  # predicted 1, was 0
    agent.update(neg, 1, 1.0, {"revealed": True, "y": 1})  # sampled, predicted 0, was 1
    agent.update(neg, 1, -1.0, {"revealed": True, "y": 0})  # sampled, right
    agent.update(pos, 1, 1.0, {"revealed": True, "y": 1})  # right
    agent.update(neg, 0, 0.0, {"revealed": False, "y": 0})  # nothing revealed
    assert agent.n_mistakes_ == 2
    assert agent.base_.n_learned_ == 4  # the base learns from every revealed label


def test_apple_tasting_samples_uniformly_at_sqrt_1_plus_mn_over_t():
    agent = AppleTastingSampling(Fixed())
    agent.reset(*spaces_for(2), seed=0)
    assert agent.sample_probability() == 1.0  # capped at 1 early on
    agent.t_ = 400
    assert agent.sample_probability() == pytest.approx(0.05)
    agent.n_sampled_mistakes_ = 8
    assert agent.sample_probability() == pytest.approx(0.15)
    agent.n_sampled_mistakes_ = 0

    def rate(score: float) -> float:
        hits = 0
        for _ in range(4000):
            agent.t_ = 399  # every draw at step t = 400: p = 0.05
            hits += agent.act(np.array([score, 0.0], np.float32))
        return hits / 4000

    # uniform: how sure the base is plays no part
    assert rate(-0.01) == pytest.approx(0.05, abs=0.015)
    assert rate(-100.0) == pytest.approx(0.05, abs=0.015)


def test_apple_tasting_counts_only_positives_found_by_sampling():
    agent = AppleTastingSampling(Fixed())
    agent.reset(*spaces_for(2), seed=0)
    neg, pos = np.array([-1.0, 0.0], np.float32), np.array([1.0, 0.0], np.float32)
    agent.update(pos, 1, -1.0, {"revealed": True, "y": 0})  # the base's own false positive
    agent.update(neg, 1, -1.0, {"revealed": True, "y": 0})  # sampled, was negative
    agent.update(neg, 1, 1.0, {"revealed": True, "y": 1})  # sampled, was positive: m_n
    assert agent.n_sampled_mistakes_ == 1


def test_sampling_uses_the_base_threshold_shifted_score():
    agent = LabelEfficient(Fixed(threshold=1.0), beta=1.0)
    agent.reset(*spaces_for(2), seed=0)
    assert agent.base_.decision_function(np.array([0.5, 0.0])) == -0.5
    assert taste_rate(agent, 0.5) == pytest.approx(1 / 1.5, abs=0.03)


# ------------------------------------------------------------------ the wrapper contract
def test_wrapper_fits_a_clone_and_leaves_its_base_hyperparameter_untouched():
    base = MarginPerceptron(m=3.0)
    agent = LabelEfficient(base, beta=0.5)
    x, y = stream(200, 4, noise=0.1, seed=1)
    play(agent, x, y)
    assert agent.base is base and vars(base) == {**base.get_params()}
    assert agent.base_ is not base and agent.base_.get_params() == base.get_params()
    assert agent.base_.n_learned_ > 0
    fitted = agent.base_
    play(agent, x[:5], y[:5])  # a new episode: a new, fresh base
    assert agent.base_ is not fitted and agent.base_.n_learned_ <= 5


def test_clone_recreates_the_nested_base():
    agent = AppleTastingSampling(MarginPerceptron(m=3.0, class_weight={1: 2.0}))
    play(agent, *stream(50, 4, seed=2))
    clone = agent.clone()
    assert type(clone.base) is MarginPerceptron and clone.base is not agent.base
    assert clone.base.class_weight is not agent.base.class_weight
    assert repr(clone) == repr(agent)
    # scikit-learn's repr: the hyperparameters that differ from their defaults
    assert (
        repr(agent) == "AppleTastingSampling(base=MarginPerceptron(class_weight={1: 2.0}, m=3.0))"
    )
    assert set(vars(clone)) == {"base"}
    other = agent.clone(base=Perceptron())
    assert type(other.base) is Perceptron


def test_nested_wrapper_runs_reproduce_and_pickle_mid_episode():
    env = gym.make("AppleTasting-v0", horizon=300, noise=0.1)
    agent = LabelEfficient(MarginPerceptron(m=M), beta=0.1)
    first, second = run_episode(env, agent, seed=3), run_episode(env, agent.clone(), seed=3)
    assert_same(first.actions, second.actions)
    assert first.metrics["label_requests"] > 0
    obs, info = env.reset(seed=5)
    agent.reset(env.observation_space, env.action_space, seed=5, feedback=info["feedback"])
    for _ in range(50):
        action = agent.act(obs)
        next_obs, reward, _, _, info = env.step(action)
        agent.update(obs, action, reward, info["feedback"])
        obs = next_obs
    copy = pickle.loads(pickle.dumps(agent))
    assert [agent.act(obs) for _ in range(20)] == [copy.act(obs) for _ in range(20)]


def test_wrappers_take_any_linear_learner_including_the_svm():
    agent = LabelEfficient(OnlineSVM(C=1.0), beta=0.1)
    metrics = mean_metrics(agent, seeds=(0,), horizon=200)
    assert metrics["f1"] > 0.7


@pytest.mark.parametrize(
    ("agent", "error", "name"),
    [
        (LabelEfficient(beta=0.0), ValueError, "beta"),
        (LabelEfficient(beta=None), TypeError, "beta"),
        (LabelEfficient(base=Greedy()), TypeError, "base"),
        (AppleTastingSampling(base="perceptron"), TypeError, "base"),
        (AppleTastingSampling(base=Perceptron(eta=-1.0)), ValueError, "eta"),
    ],
)
def test_bad_hyperparameters_raise_at_reset_naming_them(agent, error, name):
    with pytest.raises(error, match=name):
        agent.reset(*spaces_for(DIM), seed=0)


# ------------------------------------------------------------------ the science, on AppleTasting-v0
def test_both_strategies_fix_the_classical_perceptrons_ratchet():
    """Table 1: sampling predicted negatives undoes the ratchet of the bare perceptron."""
    bare = mean_metrics(Perceptron(), noise=0.1)["recall"]  # measured 0.047
    apple = mean_metrics(AppleTastingSampling(Perceptron()), noise=0.1)
    efficient = mean_metrics(LabelEfficient(Perceptron(), beta=0.3), noise=0.1)
    # measured recall 0.65 and 0.69; label efficient also tastes fewer negatives (285 vs 341)
    assert apple["recall"] > bare + 0.4 and efficient["recall"] > bare + 0.4
    assert efficient["tasted_negatives"] < apple["tasted_negatives"]
    assert efficient["fn"] < apple["fn"]


def test_label_efficient_requests_fewer_labels_than_apple_tasting_for_similar_mistakes():
    """Section 3 and Table 1: uncertainty sampling spends labels where they inform."""
    apple = mean_metrics(AppleTastingSampling(MarginPerceptron(m=M)), noise=0.1)
    efficient = mean_metrics(LabelEfficient(MarginPerceptron(m=M), beta=0.1), noise=0.1)
    # measured: 251 vs 329 tasted negatives, 173 vs 172 false negatives
    assert efficient["tasted_negatives"] < 0.85 * apple["tasted_negatives"]
    assert efficient["fn"] < 1.1 * apple["fn"]


@pytest.mark.parametrize(
    "agent",
    [
        LabelEfficient(),
        AppleTastingSampling(),
        LabelEfficient(MarginPerceptron(m=M), beta=0.1),
        AppleTastingSampling(MarginPerceptron(m=M)),
    ],
    ids=["LabelEfficient", "AppleTastingSampling", "LabelEfficient-margin", "Apple-margin"],
)
def test_strategies_beat_both_trivial_policies(agent):
    trivial = min(
        mean_metrics(Always(1))["cumulative_loss"], mean_metrics(Always(0))["cumulative_loss"]
    )
    assert mean_metrics(agent)["cumulative_loss"] < 0.9 * trivial
