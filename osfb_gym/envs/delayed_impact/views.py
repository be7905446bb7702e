"""DelayedImpactLending's part of the RL observation views (see :mod:`osfb_gym.core.views`).

Feedback block: the decisions (N), the revealed mask (N), repaid (N, 0
where hidden) and the reward over N. Features: for each applicant the
estimated expected profit of approving, ``rho_hat gain - (1 - rho_hat) loss``,
over ``max(gain, loss)``, and a :class:`~agents.delayed_impact.base.ThresholdLender`'s
approval probability for the applicant's group and score (1 during its
burn-in), then ``n / (N T)`` and ``t / T``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.views import FamilyViews


class ImpactViews(FamilyViews):
    """The feedback block and the estimator features of a delayed-impact env."""

    learner = ("agents.delayed_impact.base:ThresholdLender", "agents.delayed_impact:MaxProfit")

    def __init__(self, env: Any, observation_space: Any) -> None:
        super().__init__(env, observation_space)
        self.n = env.batch_size
        self.default_loss = env.config.default_loss
        self.loan_gain = env.config.loan_gain

    def block_bounds(self) -> tuple[list[float], list[float]]:
        """Return the bounds of the decisions, mask, repaid and reward."""
        return [0.0] * (3 * self.n) + [-self.default_loss], [1.0] * (3 * self.n) + [self.loan_gain]

    def block(self, action: Any, reward: float, feedback: dict[str, Any]) -> list[Any]:
        """Return the decisions, the revealed mask, repaid and the reward over N."""
        revealed = np.asarray(feedback["revealed"], dtype=np.float64).ravel()
        y = np.asarray(feedback["y"], dtype=np.float64).ravel() * revealed
        return [np.asarray(action, dtype=np.float64).ravel(), revealed, y, [reward / y.size]]

    def feature_bounds(self, learner: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the bounds of the profits, approval probabilities and counts."""
        return np.concatenate([np.tile([-1.0, 0.0], self.n), [0.0, 0.0]]), np.ones(2 * self.n + 2)

    def features(
        self, observation: Any, learner: Any, *, t: int, revealed: int, horizon: float
    ) -> np.ndarray:
        """Return each applicant's profit and approval probability, then the counts."""
        group, bins = learner._applicants(observation, "act")  # the learner's own grid bins
        scale = max(learner.loan_gain_, learner.default_loss_)
        profit = learner._profit()[group, bins] / scale
        approve = np.ones(group.size) if learner.t_ < learner.burnin else learner.tau_[group, bins]
        counts = [min(revealed / (self.n * horizon), 1.0), min(t / horizon, 1.0)]
        return np.concatenate([np.column_stack([profit, approve]).ravel(), counts])
