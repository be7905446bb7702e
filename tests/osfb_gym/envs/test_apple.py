"""Behaviour of AppleTasting-v0: the channels, the metrics, the worlds, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from osfb_gym.envs.apple import (
    FALSE_NEGATIVE,
    FALSE_POSITIVE,
    NO_MISTAKE,
    AppleMetrics,
    check_action,
    outcome,
)

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


@pytest.mark.parametrize("action", [2, -1, 0.5, 1.0, True, "1", [1], np.array([1]), None])
def test_check_action_rejects_everything_but_0_and_1(action):
    with pytest.raises((TypeError, ValueError), match="action"):
        check_action(action)


def test_check_action_accepts_numpy_integers():
    assert check_action(np.int64(1)) == 1 and check_action(np.array(0)) == 0


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
