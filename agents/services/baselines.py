"""The baselines of the AcQUIre paper: uniform, group-balanced uniform and greedy acquisition."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.services.base import ServiceAgent, inverse_group_sizes, reported_losses


class Uniform(ServiceAgent):
    """Acquire users uniformly at random, the paper's main baseline.

    Parameters
    ----------
    allow_repeats
        Whether a user acquired before may be drawn again (the paper's
        sampling with replacement); by default it is not.
    """

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return equal weights."""
        return np.ones(self.n_users_)


class GroupBalancedUniform(ServiceAgent):
    """Acquire user ``i`` with probability proportional to ``1 / |G(i)|``.

    The baseline of the paper's Fair AcQUIre experiment (Appendix E):
    every group gets the same expected number of acquisitions. Needs
    ``reveal_groups=True``.

    Parameters
    ----------
    allow_repeats
        As for :class:`Uniform`.
    """

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return ``1 / |G(i)|``."""
        return inverse_group_sizes(observation, type(self).__name__)


class MaxLossGreedy(ServiceAgent):
    """Acquire the user with the largest reported loss (ties broken at random).

    The paper's extra baseline (Appendix E, Figure 6): good with few
    services, then prone to spending services on outliers. The first user
    (all losses 0) is uniform.

    Parameters
    ----------
    allow_repeats
        As for :class:`Uniform`.
    """

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return 1 for the users of largest loss among the candidates, 0 elsewhere."""
        losses = reported_losses(observation)
        if not self.allow_repeats and not self.acquired_.all():
            losses = np.where(self.acquired_, -np.inf, losses)
        return (losses == losses.max()).astype(float)
