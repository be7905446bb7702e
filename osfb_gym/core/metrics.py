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

    With ``num_envs`` the metrics follow that many lockstep episodes of a
    vector env at once: every step's values carry a leading axis of that
    length and :meth:`get` returns an array per metric (:meth:`split`
    turns it into one summary per episode).

    Examples
    --------
    >>> m = EpisodeMetrics()
    >>> m.update([1], 0.5, {"revealed": np.array([True])}, {"loss": 0.25})
    >>> m.get()["cumulative_loss"]
    0.25
    >>> v = EpisodeMetrics(num_envs=2)
    >>> v.update([[1], [0]], np.array([0.5, 0.0]), {"revealed": np.array([[True], [False]])},
    ...          {"loss": np.array([0.0, 0.25])})
    >>> [summary["n_revealed"] for summary in EpisodeMetrics.split(v.get())]
    [1.0, 0.0]
    """

    def __init__(self, num_envs: int | None = None) -> None:
        self.num_envs = num_envs
        self.steps = 0
        self.episode_return = self._zeros()
        self.cumulative_loss = self._zeros()
        self.n_revealed = self._zeros()

    def _zeros(self) -> Any:
        return 0.0 if self.num_envs is None else np.zeros(self.num_envs)

    def _count(self, mask: Any) -> Any:
        """Count the true entries of ``mask``: in all, or per env of a vector env."""
        mask = np.asarray(mask)
        if self.num_envs is None:
            return int(np.count_nonzero(mask))
        return np.count_nonzero(mask.reshape(self.num_envs, -1), axis=1)

    def _value(self, value: Any) -> Any:
        """``value`` as a float, or as a float array over the envs of a vector env."""
        return float(value) if self.num_envs is None else np.asarray(value, dtype=float)

    def update(
        self, action: Any, reward: float, feedback: dict[str, Any], oracle: dict[str, Any]
    ) -> None:
        """Account for one step."""
        self.steps += 1
        self.episode_return += self._value(reward)
        self.cumulative_loss += self._value(oracle["loss"])
        self.n_revealed += self._count(feedback["revealed"])

    def curves(self) -> dict[str, np.ndarray]:
        """Return per-step curves of the episode (a family may keep some; none here)."""
        return {}

    def get(self) -> dict[str, Any]:
        """Return the episode summary (arrays over the envs with ``num_envs``)."""
        steps = max(self.steps, 1)
        return {
            "steps": float(self.steps),
            "return": self._value(self.episode_return),
            "cumulative_loss": self._value(self.cumulative_loss),
            "average_loss": self._value(self.cumulative_loss) / steps,
            "n_revealed": self._value(self.n_revealed),
        }

    @staticmethod
    def split(summary: dict[str, Any]) -> list[dict[str, float]]:
        """Turn a vector summary (arrays over the envs) into one summary per env."""
        size = max((np.size(value) for value in summary.values() if np.ndim(value)), default=1)
        return [
            {
                name: float(value[index]) if np.ndim(value) else float(value)
                for name, value in summary.items()
            }
            for index in range(size)
        ]
