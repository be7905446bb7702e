"""The baselines of the AcQUIre paper: uniform, group-balanced uniform and greedy acquisition."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.services.base import ServiceAgent, reported_losses


class Uniform(ServiceAgent):
    """Acquire users uniformly at random, the paper's main baseline.

    Parameters
    ----------
    allow_repeats
        Whether a user acquired before may be drawn again (the paper's
        sampling with replacement); by default it is not.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-v0", n_users=40, n_services=5)
    >>> trajectory = run_episode(env, Uniform(), seed=0)
    >>> len(set(trajectory.actions.tolist()))  # five different users asked
    5

    References
    ----------
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users" (NeurIPS 2024)
    (AcQUIre), Section 5: the uniform baseline.
    """

    fresh_weights = True

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

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-v0", n_users=40, n_groups=2, reveal_groups=True)
    >>> run_episode(env, GroupBalancedUniform(), seed=0).metrics["steps"]
    10.0

    References
    ----------
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users" (NeurIPS 2024)
    (AcQUIre), Appendix E: the baseline of Fair AcQUIre.
    """

    fresh_weights = True

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return ``1 / |G(i)|``."""
        return self.inverse_group_sizes(observation)


class MaxLossGreedy(ServiceAgent):
    """Acquire the user with the largest reported loss (ties broken at random).

    The paper's extra baseline (Appendix E, Figure 6): good with few
    services, then prone to spending services on outliers. The first user
    (all losses 0) is uniform.

    Parameters
    ----------
    allow_repeats
        As for :class:`Uniform`.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("MultiServiceChoice-v0", n_users=40, n_services=5)
    >>> metrics = run_episode(env, MaxLossGreedy(), seed=0).metrics
    >>> round(metrics["total_loss"], 1)
    124.7

    References
    ----------
    Bose, Curmei, Jiang, Morgenstern, Dean, Ratliff, Fazel. "Initializing
    Services in Interactive ML Systems for Diverse Users" (NeurIPS 2024)
    (AcQUIre), Appendix E, Figure 6: the greedy baseline.
    """

    fresh_weights = True

    def weights(self, observation: dict[str, Any]) -> np.ndarray:
        """Return 1 for the users of largest loss among the candidates, 0 elsewhere."""
        losses = reported_losses(observation)
        if not self.allow_repeats and not self.acquired_.all():
            losses = np.where(self.acquired_, -np.inf, losses)
        return (losses == losses.max()).astype(float)
