"""What every cutoff-lending agent shares: the task's terms and the GLM fit."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Agent
from agents.lending.glm import SOLVERS, GLMEstimator
from osfb_gym.core.links import get_link
from osfb_gym.core.validation import check_choice, check_float


class CutoffAgent(Agent):
    """Approve an applicant when its score is positive; learn from revealed outcomes.

    The score is ``mu(x . beta_) - c`` plus whatever exploration term
    a subclass adds in :meth:`exploration`. The estimate ``beta_hat`` is
    refit on every revealed example (the warm-start sample included) after
    each batch, as the paper's learners do; ``beta_`` is the parameter
    decisions use, ``beta_hat`` itself unless :meth:`decision_beta` says
    otherwise (Adaptive's projection step).
    """

    env_ids: ClassVar[tuple[str, ...]] = ("OneSidedLending-v0",)
    abstract = True
    l2: float
    solver: str

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Read the cutoff and link from the reset feedback; fit the warm start."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        if not feedback or "cutoff" not in feedback or "link" not in feedback:
            raise ValueError(
                f"{type(self).__name__}.reset needs feedback with the task's 'cutoff' and "
                "'link' (the reset info['feedback'] of OneSidedLending), got "
                f"{None if feedback is None else sorted(feedback)}"
            )
        self._check_params()
        self.cutoff_ = float(feedback["cutoff"])
        self.link_ = get_link(feedback["link"])
        shape = observation_space.shape
        if shape is None or len(shape) != 2:
            raise ValueError(
                f"{type(self).__name__} needs a (batch, features) observation space, got {shape}"
            )
        self.model_ = GLMEstimator(self.link_, shape[1], self.l2, self.solver)
        warm = feedback.get("warm_start")
        if warm is not None and len(warm["X"]):
            self.model_.add(warm["X"], warm["y"])
            self.model_.fit()
        self.beta_ = self.decision_beta()
        self.t_ = 0

    def _check_params(self) -> None:
        """Validate hyperparameters once per episode (subclasses extend it)."""
        check_float(self.l2, "l2", low=0.0, low_inclusive=False)
        check_choice(self.solver, "solver", SOLVERS)

    def decision_beta(self) -> np.ndarray:
        """Return the parameter decisions use after a fit (default: the estimate itself)."""
        return self.model_.beta

    def exploration(self, x: np.ndarray) -> np.ndarray | float:
        """Term added to ``mu(x . beta_hat) - c`` before thresholding at 0."""
        return 0.0

    def act(self, observation: Any) -> np.ndarray:
        """Approve the applicants whose score is positive."""
        x = np.asarray(observation, dtype=float)
        self.t_ += 1
        mu = np.asarray(self.link_.mean(x @ self.beta_), dtype=float)
        score = mu - self.cutoff_ + self.exploration(x)
        return (score > 0).astype(np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Add the revealed outcomes to the fit and refit."""
        revealed = np.asarray(feedback["revealed"], dtype=bool)
        if revealed.any():
            x = np.asarray(observation, dtype=float)
            self.learn(x[revealed], np.asarray(feedback["y"], dtype=float)[revealed])

    def learn(self, x: np.ndarray, y: np.ndarray) -> None:
        """Add revealed examples ``(x, y)`` to the fit, refit, refresh ``beta_``."""
        self.model_.add(x, y)
        self.model_.fit()
        self.beta_ = self.decision_beta()
