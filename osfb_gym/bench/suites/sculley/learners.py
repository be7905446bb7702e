"""The paper's learners as the suite builds them, and its spam streams (examples use them)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.base import Agent
from osfb_gym.bench.suites.sculley.settings import (
    ENV_ID,
    LEARNERS,
    SCULLEY_SUITES,
    WRAPPERS,
    SculleySuite,
)
from osfb_gym.bench.sweep import make_agent


def learner_params(
    learner: str, strategy: str = "none", beta: float | None = None, **extra: Any
) -> tuple[str, dict]:
    """Return (agent name, params) of ``learner``, alone or wrapped by ``strategy``.

    ``beta`` is Label Efficient's (other strategies ignore it).

    >>> learner_params("perceptron", "label_efficient", beta=0.01)[1]["base__fit_intercept"]
    False
    """
    if learner not in LEARNERS:
        raise ValueError(f"learner must be one of {[*LEARNERS]}, got {learner!r}")
    name, params = LEARNERS[learner][0], {**LEARNERS[learner][1], **extra}
    if strategy == "none":
        return name, params
    if strategy not in WRAPPERS:
        raise ValueError(f"strategy must be 'none' or one of {[*WRAPPERS]}, got {strategy!r}")
    wrapped = {"base": name, **{f"base__{key}": value for key, value in params.items()}}
    if strategy == "label_efficient" and beta is None:
        raise ValueError("strategy='label_efficient' needs beta")
    return WRAPPERS[strategy], wrapped | ({"beta": beta} if strategy == "label_efficient" else {})


def make_learner(learner: str, strategy: str = "none", **extra: Any) -> Agent:
    """Build the agent of :func:`learner_params` (examples and benchmarks use it)."""
    return make_agent(*learner_params(learner, strategy, **extra))


def spam_env(dataset: str, feedback: str, suite: SculleySuite, **kwargs: Any) -> dict[str, Any]:
    """Env arguments of a spam stream: ham positive, unit rows (tabular) or the suite's text."""
    features = suite.text if dataset == "sms_spam" else {"features": "unit"}
    return {"dataset": dataset, "positive_class": 0, "feedback": feedback, **features, **kwargs}


def make_spam_env(dataset: str, *, feedback: str = "one_sided", **kwargs: Any) -> gym.Env:
    """Return the AppleTasting stream of a spam dataset as the suite runs it."""
    return gym.make(ENV_ID, **spam_env(dataset, feedback, SCULLEY_SUITES["sculley-spam"], **kwargs))
