"""OneSidedLending's part of the RL observation views (see :mod:`osfb_gym.core.views`).

Feedback block: the decisions (N), the revealed mask (N), the revealed
outcomes (N, 0 where hidden) and the reward over N, the linear link's
outcomes and reward squashed. Features: for each applicant ``mu(x . beta) - c``
(squashed for the linear link) and the width ``sqrt(x^T A^-1 x)`` of a
:class:`~agents.lending.CutoffAgent`, then ``n / (N T)`` and ``t / T``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.spaces import squash
from osfb_gym.core.views import FamilyViews


class LendingViews(FamilyViews):
    """The feedback block and the estimator features of a lending env."""

    learner = ("agents.lending:CutoffAgent", "agents.lending:Greedy")

    def __init__(self, env: Any, observation_space: Any) -> None:
        super().__init__(env, observation_space)
        self.n = env.batch_size
        self.linear = env.link.name == "linear"
        self.cutoff = float(env.cutoff)

    def block_bounds(self) -> tuple[list[float], list[float]]:
        """Return the bounds of the decisions, mask, outcomes and reward."""
        n = self.n
        y_low, y_high = (-1.0, 1.0) if self.linear else (0.0, 1.0)
        r_low, r_high = (-1.0, 1.0) if self.linear else (-self.cutoff, 1.0 - self.cutoff)
        return [0.0] * n + [0.0] * n + [y_low] * n + [r_low], [1.0] * n + [1.0] * n + [
            y_high
        ] * n + [r_high]

    def block(self, action: Any, reward: float, feedback: dict[str, Any]) -> list[Any]:
        """Return the decisions, the revealed mask and outcomes, and the reward over N."""
        revealed = np.asarray(feedback["revealed"], dtype=np.float64).ravel()
        y = np.asarray(feedback["y"], dtype=np.float64).ravel() * revealed
        r = reward / revealed.size
        if self.linear:
            y, r = squash(y), float(squash(r))
        return [np.asarray(action, dtype=np.float64).ravel(), revealed, y, [r]]

    def feature_bounds(self, learner: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the bounds of the scores, the widths and the two counts."""
        space = self.observation_space
        reach = np.maximum(np.abs(space.low), np.abs(space.high))
        # sqrt(x^T A^-1 x) <= ||x|| / sqrt(lambda_min(A)) and A >= l2 I
        width = float(np.sqrt(np.sum(reach[0].astype(np.float64) ** 2) / learner.l2))
        s_low, s_high = (-1.0, 1.0) if self.linear else (-self.cutoff, 1.0 - self.cutoff)
        low = np.concatenate([np.tile([s_low, 0.0], self.n), [0.0, 0.0]])
        high = np.concatenate([np.tile([s_high, width], self.n), [1.0, 1.0]])
        return low, high

    def features(
        self, observation: Any, learner: Any, *, t: int, revealed: int, horizon: float
    ) -> np.ndarray:
        """Return each applicant's score and width, then ``n / (N T)`` and ``t / T``."""
        x = np.asarray(observation, dtype=np.float64)
        score = np.asarray(learner.link_.mean(x @ learner.beta_), dtype=np.float64)
        score = score - learner.cutoff_
        if self.linear:
            score = squash(score)
        width = learner.model_.widths(x)
        counts = [min(revealed / (self.n * horizon), 1.0), min(t / horizon, 1.0)]
        return np.concatenate([np.column_stack([score, width]).ravel(), counts])
