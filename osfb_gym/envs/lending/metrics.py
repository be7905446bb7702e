"""OneSidedLending's scoring: the Bayes decision, the one-sided loss, the episode metrics."""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.metrics import EpisodeMetrics


def bayes_decision(mu: np.ndarray, cutoff: float) -> np.ndarray:
    """Return the Bayes-optimal decisions ``1{mu > c}`` as ``int8``.

    Examples
    --------
    >>> bayes_decision(np.array([0.2, 0.8]), 0.5)
    array([0, 1], dtype=int8)
    """
    return (np.asarray(mu) > cutoff).astype(np.int8)


def one_sided_loss(mu: np.ndarray, cutoff: float, action: np.ndarray) -> Any:
    """One-sided loss of a batch, Definition 1 of Jiang, Jiang and Pacchiano (2021).

    ``r_t = sum_i |mu_i - c| * 1{1{mu_i > c} != a_i}``: each decision that
    disagrees with the Bayes rule costs the distance of its expected
    outcome to the cutoff. Its expectation is the regret of the reward.
    Summed over the last axis: one loss per batch of a vector env's sub-envs.

    Examples
    --------
    >>> round(float(one_sided_loss(np.array([0.2, 0.8, 0.9]), 0.5, np.array([1, 0, 1]))), 6)
    0.6
    """
    mu = np.asarray(mu, dtype=float)
    wrong = bayes_decision(mu, cutoff) != np.asarray(action)
    return np.sum(np.abs(mu - cutoff) * wrong, axis=-1)


def revealed_reward(y: np.ndarray, cutoff: float, approved: np.ndarray) -> Any:
    """Sum of ``y - c`` over the approved applicants (per batch: the last axis).

    Examples
    --------
    >>> float(revealed_reward(np.array([1.0, 0.0, 1.0]), 0.5, np.array([True, False, False])))
    0.5
    """
    return np.where(approved, np.asarray(y) - cutoff, 0.0).sum(axis=-1)


class LendingMetrics(EpisodeMetrics):
    """Episode metrics of lending: approvals and agreement with the Bayes rule."""

    def __init__(self, num_envs: int | None = None) -> None:
        super().__init__(num_envs)
        self.decisions = 0
        self.approvals = self._zeros()
        self.wrongly_approved = self._zeros()
        self.wrongly_denied = self._zeros()

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one batch of decisions (one per env of a vector env)."""
        super().update(action, reward, feedback, oracle)
        action = np.asarray(action)
        bayes = oracle["bayes_action"]
        self.decisions += action.size // (self.num_envs or 1)
        self.approvals += self._count(action == 1)
        self.wrongly_approved += self._count((action == 1) & (bayes == 0))
        self.wrongly_denied += self._count((action == 0) & (bayes == 1))

    def get(self) -> dict[str, Any]:
        """Return the episode summary."""
        summary = super().get()
        decisions = max(self.decisions, 1)
        wrong = self._value(self.wrongly_approved + self.wrongly_denied)
        summary.update(
            approval_rate=self._value(self.approvals) / decisions,
            bayes_agreement=1.0 - wrong / decisions,
            wrongly_approved=self._value(self.wrongly_approved),
            wrongly_denied=self._value(self.wrongly_denied),
        )
        return summary
