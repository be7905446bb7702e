"""The lending policies the delayed-impact literature compares, learned from one-sided data.

Liu, Dean, Rolf, Simchowitz and Hardt (2018) compare three threshold
policies per group: maximum profit, demographic parity and equal
opportunity; ml-fairness-gym's lending experiment (D'Amour et al. 2020)
runs the first and the last over time. Here each sets its thresholds from
the estimates of :class:`~agents.delayed_impact.base.ThresholdLender`,
learned from the outcomes of approved loans only.
"""

from __future__ import annotations

import numpy as np

from agents.delayed_impact.base import TARGETS, ThresholdLender
from osfb_gym.core.thresholds import threshold_policies


class MaxProfit(ThresholdLender):
    """Approve where the estimated expected profit is positive: Liu et al.'s max-profit policy.

    With ``rho_`` the estimated repayment probability, approve group ``g``
    at score ``x`` exactly when ``rho_[g, x] > loss / (gain + loss)`` (0.8
    with the env's defaults). With ``monotone=True`` the estimates rise
    with the score, so this is a threshold per group (Liu et al.'s
    ``tau^MaxUtil``), each group's own.

    Parameters
    ----------
    prior_mean, prior_strength
        The Beta prior of each (group, score) repayment probability: its
        mean and its weight in pseudo-outcomes. Default: optimistic, halfway
        between the break-even probability and 1 (0.9 with the env's
        defaults), worth 2 outcomes: each score is approved until its own
        outcomes pull it below the break-even (see
        :class:`~agents.delayed_impact.base.ThresholdLender`).
    burnin
        Steps of approving everyone before the policy applies (50, as
        ml-fairness-gym's lending experiment).
    monotone
        Make the estimates non-decreasing in the score (isotonic regression).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("DelayedImpactLending-v0", horizon=200, batch_size=5)
    >>> trajectory = run_episode(env, MaxProfit(burnin=20), seed=0)
    >>> trajectory.rewards.shape, 0 < trajectory.metrics["approval_rate"] < 1
    ((200,), True)

    References
    ----------
    Lydia T. Liu, Sarah Dean, Esther Rolf, Max Simchowitz, Moritz Hardt.
    Delayed Impact of Fair Machine Learning. ICML 2018, Section 2.
    """

    def _policy(self) -> np.ndarray:
        return (self._profit() > 0).astype(float)


class DemographicParity(ThresholdLender):
    """Equal approval rates across groups, the most profitable such rate (Liu et al.'s DP policy).

    For each common selection rate ``beta`` (201 rates from 0 to 1) each
    group approves the top ``beta`` of its applicants by score
    (randomised at the boundary score), using the empirical score
    distribution of the applicants seen, which the observation shows for
    every applicant. The rate chosen maximises the estimated profit
    ``sum_g share_g sum_x pi_g(x) tau_g(x) (rho_g(x) gain - (1 - rho_g(x)) loss)``,
    with ``rho_`` learned from the approved loans' outcomes. Parameters as
    :class:`MaxProfit`.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("DelayedImpactLending-v0", horizon=300, batch_size=10)
    >>> metrics = run_episode(env, DemographicParity(burnin=20), seed=0).metrics
    >>> abs(metrics["approval_rate_0"] - metrics["approval_rate_1"]) < 0.2
    True

    References
    ----------
    Liu et al. (2018), Section 2 (demographic parity); Hardt, Price and
    Srebro (2016) on randomised group thresholds.
    """

    def _policy(self) -> np.ndarray:
        policies = np.stack([threshold_policies(pi, TARGETS) for pi in self.pi_], axis=1)
        return self._best_common(policies)


class EqualOpportunity(ThresholdLender):
    """Equal true-positive rates across groups, the most profitable such rate (Liu et al.'s EO).

    A group's true-positive rate is the share of its would-be repayers
    that are approved. Who would repay among the *denied* is never seen,
    so it is estimated: the repayers' distribution of group ``g`` is
    ``pi_g(x) rho_g(x)`` with ``pi_`` the empirical distribution of all
    applicants seen and ``rho_`` the repayment probability learned from
    approved loans (prior, then the outcomes, monotone in the score), and
    the policy that reaches a target rate ``t`` approves the top of that
    distribution until its share is ``t``. The common rate chosen (201
    rates from 0 to 1) maximises the estimated profit, as in ml-fairness-gym's
    ``equality_of_opportunity_thresholds``. Where the estimates are wrong
    (scores rarely approved), so are the estimated rates: the metric
    ``tpr_gap`` of the env measures the true gap. Parameters as
    :class:`MaxProfit`.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("DelayedImpactLending-v0", horizon=200, batch_size=5)
    >>> run_episode(env, EqualOpportunity(burnin=20), seed=0).metrics["tpr_gap"] < 1
    True

    References
    ----------
    Liu et al. (2018), Section 2 (equal opportunity); Hardt, Price and
    Srebro (2016); D'Amour et al. (2020), ml-fairness-gym's
    ``agents/threshold_policies.py``.
    """

    def _policy(self) -> np.ndarray:
        repayers = self.pi_ * self.rho_
        policies = np.stack([threshold_policies(w, TARGETS) for w in repayers], axis=1)
        return self._best_common(policies)
