"""A correct submission (the grader's test): ridge least squares plus a confidence bonus."""

from __future__ import annotations

import numpy as np

from agents.base import Agent


class BonusLending(Agent):
    """Approve when x.beta_hat + alpha * sqrt(x^T A^-1 x) beats the cutoff."""

    env_ids = ("OneSidedLending-v0",)

    def __init__(self, alpha: float = 0.5, l2: float = 1.0) -> None:
        self.alpha = alpha
        self.l2 = l2

    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        feedback = feedback or {}
        dim = observation_space.shape[-1]
        self.cutoff_ = float(feedback.get("cutoff", 0.5))
        self.A_ = self.l2 * np.eye(dim)
        self.b_ = np.zeros(dim)
        warm = feedback.get("warm_start", {"X": np.empty((0, dim)), "y": []})
        for x, y in zip(np.asarray(warm["X"]), warm["y"], strict=True):
            self.A_ += np.outer(x, x)
            self.b_ += y * x

    def act(self, observation):
        X = np.asarray(observation, dtype=float)
        A_inv = np.linalg.inv(self.A_)
        width = np.sqrt(np.einsum("ij,jk,ik->i", X, A_inv, X))
        return (X @ (A_inv @ self.b_) + self.alpha * width > self.cutoff_).astype(np.int8)

    def update(self, observation, action, reward, feedback):
        revealed = np.asarray(feedback["revealed"], dtype=bool)
        for x, y in zip(
            np.asarray(observation)[revealed], np.asarray(feedback["y"])[revealed], strict=True
        ):
            self.A_ += np.outer(x, x)
            self.b_ += y * x
