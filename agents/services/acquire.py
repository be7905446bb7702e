"""AcQUIre (Algorithm 1) and Fair AcQUIre (Algorithm 2): acquire users by their loss."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.services.base import ServiceAgent, reported_losses


class AcQUIre(ServiceAgent):
    """Acquire each next user with probability proportional to its reported loss.

    Algorithm 1 of the AcQUIre paper: the first user uniformly at random
    (every reported loss is 0 before the first service), then user ``j``
    with probability ``l_j / sum_i l_i``, where ``l_i`` is user ``i``'s
    loss at the service it chose. Poorly served users are likely picked, so
    a cluster no service covers yet soon gets one: k-means++ seeding with
    each user's own loss in place of the squared distance, whose expected
    total loss is within ``O(log k)`` of the optimum (Theorem 1).

    Parameters
    ----------
    allow_repeats
        Whether a user acquired before may be drawn again. With a loss
        that is 0 at the user's own preference (every synthetic family)
        that never happens anyway; a linear-predictor subpopulation keeps
        its OLS residual, and a repeat would only duplicate its service.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-v0", n_users=100, n_services=5)
    >>> trajectory = run_episode(env, AcQUIre(), seed=0)
    >>> len(trajectory.rewards), trajectory.metrics["total_loss"] > 0
    (5, True)

    References
    ----------
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users" (NeurIPS 2024),
    Algorithm 1 and Theorem 1.
    """

    fresh_weights = True

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return the reported losses (a new float64 array)."""
        return reported_losses(observation)


class FairAcQUIre(ServiceAgent):
    """Acquire users in proportion to their loss divided by the size of their group.

    Algorithm 2 of the AcQUIre paper, for known groups: user ``i`` with
    probability proportional to ``l_i / |G(i)|`` (the first one to
    ``1 / |G(i)|``), so every group gets the same chance of the first
    service and a small group's losses weigh as much as a large one's.
    Needs the group ids in the observation (``reveal_groups=True``).

    Parameters
    ----------
    allow_repeats
        As for :class:`AcQUIre`.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-v0", n_users=60, n_groups=3, reveal_groups=True)
    >>> metrics = run_episode(env, FairAcQUIre(), seed=0).metrics
    >>> metrics["fairness"] >= metrics["total_loss"] / 60  # the worst group is at least the mean
    True

    References
    ----------
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users" (NeurIPS 2024),
    Algorithm 2 and the fairness objective (3).
    """

    fresh_weights = True

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return ``l_i / |G(i)|``, or ``1 / |G(i)|`` before the first service."""
        scale = self.inverse_group_sizes(observation)
        if int(observation["n_services"]) == 0:
            return scale
        scale *= reported_losses(observation)  # l_i * (1 / |G(i)|), the same product
        return scale
