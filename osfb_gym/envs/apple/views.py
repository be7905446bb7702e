"""AppleTasting's part of the RL observation views (see :mod:`osfb_gym.core.views`).

Feedback block: the decision, whether the label was revealed, the label (0
where hidden) and the reward. Features: ``tanh`` of a
:class:`~agents.apple.base.LinearLearner`'s decision function on ``x``, then
labels revealed, positives revealed and steps, each over ``T``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from osfb_gym.core.views import FamilyViews


class AppleViews(FamilyViews):
    """The feedback block and the estimator features of an apple-tasting env."""

    learner = ("agents.apple.base:LinearLearner", "agents.apple:MarginPerceptron")

    def __init__(self, env: Any, observation_space: Any) -> None:
        super().__init__(env, observation_space)
        self.cost_fp, self.gain = env.cost_fp, env.gain
        self.positives = 0

    def block_bounds(self) -> tuple[list[float], list[float]]:
        """Return the bounds of the decision, revealed, label and reward."""
        return [0.0, 0.0, 0.0, -self.cost_fp], [1.0, 1.0, 1.0, self.gain]

    def block(self, action: Any, reward: float, feedback: dict[str, Any]) -> list[Any]:
        """Return the decision, whether revealed, the label (0 hidden) and the reward."""
        revealed = np.asarray(feedback["revealed"], dtype=np.float64).ravel()
        label = float(feedback["y"]) if feedback["revealed"] else 0.0
        return [[float(int(np.asarray(action)))], revealed, [label], [reward]]

    def feature_bounds(self, learner: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the bounds of the score and the three counts."""
        return np.array([-1.0, 0, 0, 0]), np.ones(4)

    def reset(self) -> None:
        """Zero the count of revealed positives."""
        self.positives = 0

    def update(self, feedback: dict[str, Any], revealed: np.ndarray) -> None:
        """Count a revealed positive."""
        if feedback["revealed"]:
            self.positives += int(feedback["y"] == 1)

    def features(
        self, observation: Any, learner: Any, *, t: int, revealed: int, horizon: float
    ) -> np.ndarray:
        """Return the squashed score, then labels, positives and steps over ``T``."""
        x = np.asarray(observation)
        return np.array(
            [
                np.tanh(learner.decision_function(x)),
                min(revealed / horizon, 1.0),
                min(self.positives / horizon, 1.0),
                min(t / horizon, 1.0),
            ]
        )
