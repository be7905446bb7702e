"""Streaming episode metrics: they may read the oracle, agents never can.

Each environment family names its metrics class (``metrics_class`` on the
env); the runner builds one per episode, feeds it every step with
``update`` and reads the summary with ``get``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class EpisodeMetrics:
    """Metrics every family shares: steps, return, the oracle loss, reveals.

    ``oracle["loss"]`` is the family's per-step loss or regret term, and
    ``feedback["revealed"]`` the mask of outcomes the step revealed.

    Examples
    --------
    >>> m = EpisodeMetrics()
    >>> m.update([1], 0.5, {"revealed": np.array([True])}, {"loss": 0.25})
    >>> m.get()["cumulative_loss"]
    0.25
    """

    def __init__(self) -> None:
        self.steps = 0
        self.episode_return = 0.0
        self.cumulative_loss = 0.0
        self.n_revealed = 0

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one step."""
        self.steps += 1
        self.episode_return += float(reward)
        self.cumulative_loss += float(oracle["loss"])
        self.n_revealed += int(np.count_nonzero(feedback["revealed"]))

    def curves(self) -> dict[str, np.ndarray]:
        """Return per-step curves of the episode (a family may keep some; none here)."""
        return {}

    def get(self) -> dict[str, float]:
        """Return the episode summary."""
        steps = max(self.steps, 1)
        return {
            "steps": float(self.steps),
            "return": self.episode_return,
            "cumulative_loss": self.cumulative_loss,
            "average_loss": self.cumulative_loss / steps,
            "n_revealed": float(self.n_revealed),
        }
