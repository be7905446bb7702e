"""Step 1 of examples/assignments/lending.md followed literally, from template_agent.py.

Ridge least squares on the revealed outcomes, approve when the fitted score
beats the cutoff. ``intercept=False`` is the fit on the bare observation
that the assignment warns about (the observation has no constant column).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent


def with_intercept(rows: Any) -> np.ndarray:
    """Return the rows with a 1 appended (template_agent.py's helper)."""
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    return np.column_stack([rows, np.ones(len(rows))])


class StepOne(Agent):
    """Greedy least squares: approve when ``z . beta_hat > c``, z the row (with its intercept)."""

    env_ids = ("OneSidedLending-v0",)

    def __init__(self, l2: float = 1.0, intercept: bool = True) -> None:
        self.l2 = l2
        self.intercept = intercept

    def _rows(self, observation: Any) -> np.ndarray:
        rows = with_intercept(observation)
        return rows if self.intercept else rows[:, :-1]

    def reset(self, observation_space, action_space, *, seed=None, feedback=None) -> None:
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        feedback = feedback or {}
        self.cutoff_ = float(feedback.get("cutoff", 0.5))
        size = observation_space.shape[1] + (1 if self.intercept else 0)
        self.A_ = self.l2 * np.eye(size)
        self.b_ = np.zeros(size)
        warm = feedback.get("warm_start")
        if warm is not None and len(warm["y"]):
            rows = self._rows(warm["X"])
            self.A_ += rows.T @ rows
            self.b_ += rows.T @ np.asarray(warm["y"], dtype=float)

    def act(self, observation: Any) -> np.ndarray:
        beta_hat = np.linalg.solve(self.A_, self.b_)
        return (self._rows(observation) @ beta_hat > self.cutoff_).astype(np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        revealed = np.atleast_1d(np.asarray(feedback["revealed"], dtype=bool))
        rows = self._rows(observation)[revealed]
        outcomes = np.atleast_1d(np.asarray(feedback["y"], dtype=float))[revealed]
        self.A_ += rows.T @ rows
        self.b_ += rows.T @ outcomes
