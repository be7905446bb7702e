"""RejectOption's part of the RL observation views (see :mod:`osfb_gym.core.views`).

Feedback block: the decision one-hot (3), the query, whether the label was
revealed, the label (0 where hidden) and the step's reward before the
settlement. Features: ``tanh(f(x) - rho)`` and ``tanh(f(x) + rho)`` of a
:class:`~agents.reject.base.RejectLearner`, then labels revealed and steps
over ``T``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.views import FamilyViews


class RejectViews(FamilyViews):
    """The feedback block and the estimator features of a reject-option env."""

    learner = ("agents.reject.base:RejectLearner", "agents.reject:DSOL")

    def __init__(self, env: Any, observation_space: Any) -> None:
        super().__init__(env, observation_space)
        self.query_cost = env.query_cost

    def block_bounds(self) -> tuple[list[float], list[float]]:
        """Return the bounds of the decision, query, revealed, label and reward."""
        return [0.0] * 5 + [-1.0, -(1.0 + self.query_cost)], [1.0] * 5 + [1.0, 0.0]

    def block(self, action: Any, reward: float, feedback: dict[str, Any]) -> list[Any]:
        """Return the decision's one-hot, the query, revealed, label and the step's reward."""
        revealed = np.asarray(feedback["revealed"], dtype=np.float64).ravel()
        decision, query = (int(v) for v in np.asarray(action).ravel())
        label = float(feedback["y"]) if feedback["revealed"] else 0.0
        step_reward = reward + float(feedback.get("settled", 0.0))
        return [np.eye(3)[decision], [float(query)], revealed, [label], [step_reward]]

    def feature_bounds(self, learner: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the bounds of the two margins and the two counts."""
        return np.array([-1.0, -1.0, 0, 0]), np.ones(4)

    def features(
        self, observation: Any, learner: Any, *, t: int, revealed: int, horizon: float
    ) -> np.ndarray:
        """Return ``tanh(f - rho)``, ``tanh(f + rho)``, labels and steps over ``T``."""
        f = learner.score_(np.asarray(observation, dtype=np.float64))
        rho = learner.rho_
        shown = min(revealed / horizon, 1.0)
        return np.array([np.tanh(f - rho), np.tanh(f + rho), shown, min(t / horizon, 1.0)])
