"""The lender's threshold policies over a score grid, shared by the delayed-impact env and agents.

Like :mod:`osfb_gym.core.links`, a piece of the model both sides need:
the env's world computes Liu et al.'s outcome curves with it, and the
agents (which never import an env) set their per-group thresholds with it.
"""

from __future__ import annotations

import numpy as np


def expected_profit(rho: np.ndarray, loan_gain: float, default_loss: float) -> np.ndarray:
    """Return the lender's expected profit of approving: ``rho * gain - (1 - rho) * loss``.

    Examples
    --------
    >>> expected_profit(np.array([0.8, 0.9]), 1.0, 4.0).round(6).tolist()
    [0.0, 0.5]
    """
    rho = np.asarray(rho, dtype=float)
    return rho * loan_gain - (1.0 - rho) * default_loss


def break_even(loan_gain: float, default_loss: float) -> float:
    """Return the repayment probability above which approving pays: ``loss / (gain + loss)``.

    Examples
    --------
    >>> break_even(1.0, 4.0)
    0.8
    """
    return default_loss / (loan_gain + default_loss)


def threshold_policies(weights: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Approval probabilities that take the top of a grid until each target share of ``weights``.

    Bins are filled from the highest score down; the bin where the share
    reaches a target is approved with the probability that makes it
    exactly the target (a randomised threshold, as in Liu et al. 2018 and
    Hardt et al. 2016). ``weights`` are, for a selection rate, a group's
    score distribution; for a true-positive rate, its repayers'
    distribution (``pi * rho``).

    Parameters
    ----------
    weights
        ``(B,)`` non-negative weights over the grid, lowest score first.
    targets
        ``(T,)`` shares in [0, 1].

    Returns
    -------
    numpy.ndarray
        ``(T, B)``: one policy per target.

    Examples
    --------
    >>> threshold_policies(np.array([0.25, 0.5, 0.25]), np.array([0.5, 1.0])).tolist()
    [[0.0, 0.5, 1.0], [1.0, 1.0, 1.0]]
    """
    weights = np.asarray(weights, dtype=float)
    targets = np.clip(np.asarray(targets, dtype=float), 0.0, 1.0)
    total = weights.sum()
    if total <= 0:
        return np.zeros((targets.size, weights.size))
    # the weight strictly above each bin, from the top score down
    above = np.cumsum(weights[::-1])[::-1] - weights
    with np.errstate(divide="ignore", invalid="ignore"):
        share = (targets[:, None] * total - above) / weights
    share = np.where(weights > 0, share, (targets[:, None] * total > above).astype(float))
    return np.clip(share, 0.0, 1.0)


def threshold_policy(weights: np.ndarray, target: float) -> np.ndarray:
    """:func:`threshold_policies` of one target: a ``(B,)`` policy.

    Examples
    --------
    >>> threshold_policy(np.array([0.25, 0.5, 0.25]), 0.5).tolist()
    [0.0, 0.5, 1.0]
    """
    return threshold_policies(weights, np.array([target]))[0]
