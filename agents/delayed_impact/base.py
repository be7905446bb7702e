"""What every delayed-impact threshold lender shares: the estimates, learned from one side."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from scipy.optimize import isotonic_regression

from agents.base import Agent, Integral, Interval, Real, check_finite, float_array
from osfb_gym.core.thresholds import break_even, expected_profit

#: the targets (selection rates or true-positive rates) the fair policies choose among
TARGETS = np.linspace(0.0, 1.0, 201)

ESTIMATE_CONSTRAINTS: dict[str, list[Any]] = {
    "prior_mean": [Interval(Real, 0, 1, closed="neither"), None],
    "prior_strength": [Interval(Real, 0, None, closed="neither")],
    "burnin": [Interval(Integral, 0, None, closed="left")],
    "monotone": ["boolean"],
}


class ThresholdLender(Agent):
    """Per-group thresholds on the score, set from estimates learned from approved loans only.

    Each lender keeps, per group ``g`` and score ``x`` of the grid (the
    reset feedback's ``"scores"``):

    - ``pi_[g, x]``, the share of group ``g``'s applicants at ``x``: every
      applicant's group and score are in the observation, approved or not,
      so this is the empirical distribution of all applicants seen (no
      one-sidedness here);
    - ``rho_[g, x]``, the estimated repayment probability: the posterior
      mean of a Beta prior (mean ``prior_mean``, ``prior_strength``
      pseudo-outcomes) updated with the outcomes revealed, which are those
      of *approved* applicants only. The prior is optimistic by default
      (``prior_mean=None``: halfway between the break-even probability and
      1, so 0.9 with the env's defaults): a lender that denies a score
      never learns about it, so each score is approved until its own
      outcomes pull its estimate below the break-even (a pessimistic prior
      would deny every score it has not seen repay, and never see one);
      with ``monotone=True`` the estimates
      of a group are then made non-decreasing in the score (weighted
      isotonic regression, each score weighted by its outcomes plus the
      prior's), which is what lets outcomes seen at high scores inform the
      scores the lender stopped approving.

    For the first ``burnin`` steps the lender approves everyone (ml-fairness-gym's
    agents approve during a burn-in of 50 steps), so the estimates start
    from outcomes at every score it meets; after that, each step, it
    approves applicant ``(g, x)`` with probability ``tau_[g, x]``, the
    policy its subclass computes from the estimates (randomised only at a
    group's boundary score, as Liu et al.'s and Hardt et al.'s thresholds
    are). A score never seen keeps the prior.
    """

    env_ids: ClassVar[tuple[str, ...]] = ("DelayedImpactLending-v0",)
    abstract = True
    _parameter_constraints: ClassVar[dict[str, Any]] = ESTIMATE_CONSTRAINTS

    def __init__(
        self,
        prior_mean: float | None = None,
        prior_strength: float = 2.0,
        burnin: int = 50,
        monotone: bool = True,
    ) -> None:
        self.prior_mean = prior_mean
        self.prior_strength = prior_strength
        self.burnin = burnin
        self.monotone = monotone

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Read the task's terms from the reset feedback; start from the prior."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        needed = ("scores", "n_groups", "loan_gain", "default_loss")
        if not feedback or any(key not in feedback for key in needed):
            raise ValueError(
                f"{type(self).__name__}.reset needs feedback with the task's terms "
                f"{', '.join(needed)} (the reset info['feedback'] of DelayedImpactLending), "
                f"got {None if feedback is None else sorted(feedback)}"
            )
        scores = np.asarray(feedback["scores"], dtype=float)
        if scores.ndim != 1 or scores.size < 1 or np.any(np.diff(scores) <= 0):
            raise ValueError(
                f"{type(self).__name__}.reset: feedback['scores'] must be a strictly "
                f"increasing grid, got {feedback['scores']!r}"
            )
        check_finite(scores, "feedback['scores']", type(self).__name__)
        shape = getattr(observation_space, "shape", None)
        if not isinstance(observation_space, gym.spaces.Box) or shape is None or len(shape) != 2:
            raise ValueError(
                f"{type(self).__name__}.reset: observation_space must be DelayedImpactLending's "
                f"Box of shape (batch, 2) (group, score), got {observation_space}"
            )
        if not isinstance(action_space, gym.spaces.MultiBinary):
            raise ValueError(
                f"{type(self).__name__}.reset: action_space must be DelayedImpactLending's "
                f"MultiBinary(batch), got {action_space}"
            )
        self.scores_ = scores
        self.n_groups_ = int(feedback["n_groups"])
        self.loan_gain_ = float(feedback["loan_gain"])
        self.default_loss_ = float(feedback["default_loss"])
        self.break_even_ = break_even(self.loan_gain_, self.default_loss_)
        shape = (self.n_groups_, scores.size)
        self.seen_ = np.zeros(shape)
        self.outcomes_ = np.zeros(shape)
        self.repaid_ = np.zeros(shape)
        self.t_ = 0
        self._estimate()

    # ------------------------------------------------------------------ estimates
    def _estimate(self) -> None:
        """Refresh ``rho_``, ``pi_``, ``shares_`` and the policy ``tau_`` from the counts."""
        mean = (1.0 + self.break_even_) / 2 if self.prior_mean is None else self.prior_mean
        a = self.prior_strength * mean
        weight = self.outcomes_ + self.prior_strength
        rho = (self.repaid_ + a) / weight
        if self.monotone:
            rho = np.stack(
                [isotonic_regression(row, weights=w).x for row, w in zip(rho, weight, strict=True)]
            )
        self.rho_ = rho
        seen = self.seen_.sum(axis=1, keepdims=True)
        # a group not seen yet: uniform over the grid (it changes no decision until seen)
        self.pi_ = np.where(seen > 0, self.seen_ / np.maximum(seen, 1.0), 1.0 / self.scores_.size)
        total = seen.sum()
        self.shares_ = (
            seen[:, 0] / total if total > 0 else np.full(self.n_groups_, 1.0 / self.n_groups_)
        )
        self.tau_ = self._policy()

    def _profit(self) -> np.ndarray:
        """``(G, B)``: the estimated expected profit of approving each group at each score."""
        return expected_profit(self.rho_, self.loan_gain_, self.default_loss_)

    def _policy(self) -> np.ndarray:
        """Return ``(G, B)`` approval probabilities from the current estimates."""
        raise NotImplementedError

    def _best_common(self, policies: np.ndarray) -> np.ndarray:
        """Among ``(T, G, B)`` policies (one per common target), the most profitable one.

        The estimated profit of a policy is ``sum_g share_g sum_x pi_g(x)
        tau_g(x) profit_g(x)``; ties go to the first target (the lowest).
        """
        value = np.einsum("tgb,gb->t", policies, self.shares_[:, None] * self.pi_ * self._profit())
        return policies[int(np.argmax(value))]

    # ------------------------------------------------------------------ acting
    def _applicants(self, observation: Any, method: str) -> tuple[np.ndarray, np.ndarray]:
        """Return the groups and grid bins of an observation's applicants."""
        self._require_reset(method)
        obs = float_array(observation, "observation", f"{type(self).__name__}.{method}")
        if obs.ndim != 2 or obs.shape[1] != 2:
            raise ValueError(
                f"{type(self).__name__}.{method}: observation must have shape (batch, 2) "
                f"(group, score), got {obs.shape}"
            )
        check_finite(obs, "observation", type(self).__name__)
        group = obs[:, 0].astype(np.intp)
        if np.any(group != obs[:, 0]) or np.any(group < 0) or np.any(group >= self.n_groups_):
            raise ValueError(
                f"{type(self).__name__}.{method}: observation[:, 0] must hold group ids in "
                f"0..{self.n_groups_ - 1}, got {obs[:, 0].tolist()}"
            )
        if self.scores_.size == 1:
            return group, np.zeros(group.size, dtype=np.intp)
        # the grid point nearest to each score (the observation is float32)
        right = np.clip(np.searchsorted(self.scores_, obs[:, 1]), 1, self.scores_.size - 1)
        left = right - 1
        nearer_left = obs[:, 1] - self.scores_[left] <= self.scores_[right] - obs[:, 1]
        return group, np.where(nearer_left, left, right)

    def act(self, observation: Any) -> np.ndarray:
        """Approve everyone during the burn-in, then each applicant with probability ``tau_``."""
        group, bins = self._applicants(observation, "act")
        if self.t_ < self.burnin:
            return np.ones(group.size, dtype=np.int8)
        return (self.rng_.random(group.size) < self.tau_[group, bins]).astype(np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Count the applicants seen and the outcomes revealed; refresh the estimates."""
        self._check_update(action, reward, feedback)
        group, bins = self._applicants(observation, "update")
        owner = f"{type(self).__name__}.update"
        revealed = np.asarray(feedback["revealed"], dtype=bool).reshape(-1)
        y = float_array(feedback["y"], "feedback['y']", owner).reshape(-1)
        if revealed.shape != group.shape or y.shape != group.shape:
            raise ValueError(
                f"{type(self).__name__}.update: feedback['revealed'] and ['y'] must have one "
                f"entry per applicant ({group.size}), got {revealed.shape} and {y.shape}"
            )
        if np.any((y[revealed] != 0.0) & (y[revealed] != 1.0)):
            raise ValueError(
                f"{type(self).__name__}.update: revealed outcomes feedback['y'] must be 0 or 1, "
                f"got {y[revealed].tolist()}"
            )
        np.add.at(self.seen_, (group, bins), 1.0)
        np.add.at(self.outcomes_, (group[revealed], bins[revealed]), 1.0)
        np.add.at(self.repaid_, (group[revealed], bins[revealed]), y[revealed])
        self.t_ += 1
        self._estimate()
