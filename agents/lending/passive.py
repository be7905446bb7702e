"""Passive: explore by approving everyone for a while, then freeze the best rule (Algorithm 1)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Integral, Interval
from agents.lending.base import FIT_CONSTRAINTS, CutoffAgent
from agents.lending.glm import GLMEstimator


class Passive(CutoffAgent):
    """Approve the first ``K + S`` applicants, then play one fixed threshold rule.

    Algorithm 1 of Jiang, Jiang and Pacchiano (2021): observe every
    outcome of an exploration phase, pick from a finite class of threshold
    rules ``1{mu(x . beta) >= c}`` the one with the smallest empirical
    utility loss ``sum |y - c| 1{1{y > c} != a}`` on the ``K + S``
    observed pairs, and never update again. The paper's class holds one
    rule per labelling of the first ``K`` points that the GLM class can
    produce, a covering argument whose size grows like ``K^d``; here the
    class is the GLM fit on all observed pairs plus ``n_candidates - 1``
    fits on bootstrap resamples of them, a finite class built from the
    same data (the choice by empirical utility is the paper's). With the
    paper's ``K ~ T^{1/3}`` and ``S ~ T^{2/3}`` its one-sided loss grows
    like ``T^{2/3}`` (Proposition 1), against ``sqrt(T)`` for
    :class:`~agents.lending.Adaptive`.

    The warm-start sample counts towards the exploration phase.

    Parameters
    ----------
    horizon
        ``T`` in applicants, for the default ``K`` and ``S``.
    n_discretize
        ``K``; None takes ``ceil(T^{1/3})``.
    n_explore
        ``S``; None takes ``ceil(T^{2/3})``.
    n_candidates
        Size of the finite rule class.
    l2
        Ridge strength of the fits.
    solver
        ``"incremental"`` or ``"exact"``; the fits here are exact either
        way, the choice only affects the bookkeeping of ``model_``.

    Attributes
    ----------
    frozen_
        Whether the exploration phase is over.
    candidates_
        The rule class, one ``beta`` per row, once frozen.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> agent = Passive(horizon=200)
    >>> trajectory = run_episode(gym.make("OneSidedLending-v0", horizon=200), agent, seed=0)
    >>> agent.frozen_, agent.n_explore_
    (True, 35)

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021, Algorithm 1 and Proposition 1.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **FIT_CONSTRAINTS,
        "horizon": [Interval(Integral, 1, None, closed="left")],
        "n_discretize": [Interval(Integral, 0, None, closed="left"), None],
        "n_explore": [Interval(Integral, 0, None, closed="left"), None],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        horizon: int = 2000,
        n_discretize: int | None = None,
        n_explore: int | None = None,
        n_candidates: int = 32,
        l2: float = 1.0,
        solver: str = "incremental",
    ) -> None:
        self.horizon = horizon
        self.n_discretize = n_discretize
        self.n_explore = n_explore
        self.n_candidates = n_candidates
        self.l2 = l2
        self.solver = solver

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Start exploring; a warm start of ``K + S`` examples or more freezes at once."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        horizon, k, s = int(self.horizon), self.n_discretize, self.n_explore
        self.n_discretize_ = math.ceil(horizon ** (1 / 3)) if k is None else int(k)
        self.n_explore_ = math.ceil(horizon ** (2 / 3)) if s is None else int(s)
        self.frozen_ = False
        if self.model_.n >= self.n_discretize_ + self.n_explore_:
            self._freeze()

    def act(self, observation: Any) -> np.ndarray:
        """Approve everyone while exploring; afterwards apply the frozen rule."""
        x = self._check_observation(observation, "act")
        if not self.frozen_:
            self.t_ += 1
            return np.ones(len(x), dtype=np.int8)
        return super().act(x)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Collect outcomes until ``K + S`` are in, then choose the rule and stop learning."""
        self._check_update(action, reward, feedback)
        x, y = self._revealed(observation, feedback)
        if self.frozen_:
            return
        self.model_.add(x, y)
        if self.model_.n >= self.n_discretize_ + self.n_explore_:
            self._freeze()

    def _freeze(self) -> None:
        x, y = self.model_.X, self.model_.y
        samples = [np.arange(len(x))] + [
            self.rng_.integers(0, len(x), len(x)) for _ in range(self.n_candidates - 1)
        ]
        candidates = []
        for rows in samples:
            fit = GLMEstimator(self.link_, self.model_.dim, self.l2, solver="exact")
            fit.add(x[rows], y[rows])
            candidates.append(fit.fit())
        self.candidates_ = np.array(candidates)
        decisions = self.link_.mean(x @ self.candidates_.T) >= self.cutoff_
        wrong = decisions != (y > self.cutoff_)[:, None]
        utility_loss = np.abs(y - self.cutoff_) @ wrong
        self.beta_ = self.candidates_[int(np.argmin(utility_loss))]
        self.frozen_ = True
