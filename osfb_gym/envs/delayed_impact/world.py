"""DelayedImpactLending's worlds and the pure functions of Liu et al.'s model.

A world is a score grid, each group's distribution over it, each group's
repayment probability at each score and the groups' shares of applicants.
The functions here are pure (arrays in, arrays out), so a reproduction can
compute Liu et al.'s outcome curves without an env: :func:`expected_score_change`
(the expected move of one approved applicant), :func:`threshold_policy`
(approve the top share of a group, randomised at the boundary score) and
:func:`outcome_curve` (the change of a group's mean score against its
selection rate, Liu et al.'s Delta mu).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from osfb_gym.core.thresholds import (
    break_even,
    expected_profit,
    threshold_policies,
    threshold_policy,
)

__all__ = [
    "ImpactWorld",
    "break_even",
    "expected_profit",
    "expected_score_change",
    "fico_world",
    "move_targets",
    "outcome_curve",
    "shift_world",
    "synthetic_world",
    "threshold_policies",
    "threshold_policy",
]

if TYPE_CHECKING:
    from osfb_gym.data.fico import FicoTables

#: the synthetic world's score grid: FICO's range in steps of 25 points, so that
#: Liu et al.'s +75 / -150 are whole steps (3 and 6)
SYNTHETIC_SCORES = np.arange(300.0, 851.0, 25.0)
# ml-fairness-gym's DelayedImpactParams (environments/lending_params.py): seven
# credit clusters, each group's share of them, and the repayment probability of each
SHIFT_CLUSTER_PROBS = (
    (0.0, 0.1, 0.1, 0.2, 0.3, 0.3, 0.0),
    (0.1, 0.1, 0.2, 0.3, 0.3, 0.0, 0.0),
)
SHIFT_SUCCESS_PROBS = (0.1, 0.2, 0.45, 0.6, 0.65, 0.7, 0.7)


@dataclass(frozen=True)
class ImpactWorld:
    """The initial truth of a delayed-impact episode (the env moves a copy of ``pi``).

    Attributes
    ----------
    scores
        The score grid, ``(B,)`` strictly increasing.
    pi
        ``(G, B)``: each group's distribution over the grid (rows sum to 1).
    rho
        ``(G, B)``: the probability that a member of the group at that score repays.
    proportions
        ``(G,)``: each group's share of the applicants (sums to 1).
    group_names
        One name per group.
    """

    scores: np.ndarray
    pi: np.ndarray
    rho: np.ndarray
    proportions: np.ndarray
    group_names: tuple[str, ...]

    @property
    def n_groups(self) -> int:
        """The number of groups ``G``."""
        return int(self.pi.shape[0])


def synthetic_world() -> ImpactWorld:
    """Two groups on a FICO-like grid: what the FICO tables show, without the data.

    Modelled on Liu et al.'s Black and White groups of the TransRisk tables
    (mapped to 300-850): repayment rises with the score along one logistic
    curve for both groups, ``rho(s) = expit((s - 560) / 30)`` (the tables
    have ``rho = 0.5`` near 550-570 and ``rho = 0.8`` near 610-645), and the
    scores are normal, discretised on the grid: group 0 around 520 and
    group 1 around 650, both with standard deviation 120 (the tables: means
    516 and 651, standard deviations 124 and 127). The groups are of equal
    size (the tables' are 12% and 88%), so that short episodes see both.

    Examples
    --------
    >>> world = synthetic_world()
    >>> world.pi.shape, world.group_names, (world.pi @ world.scores).round().tolist()
    ((2, 23), ('low', 'high'), [521.0, 648.0])
    """
    scores = SYNTHETIC_SCORES
    pi = np.stack([_discrete_normal(scores, mean, 120.0) for mean in (520.0, 650.0)])
    rho = np.tile(expit((scores - 560.0) / 30.0), (2, 1))
    return ImpactWorld(scores, pi, rho, np.array([0.5, 0.5]), ("low", "high"))


def _discrete_normal(grid: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Return the normal's mass of the cells around each grid point (tails in the end cells)."""
    edges = np.concatenate([[-np.inf], (grid[1:] + grid[:-1]) / 2, [np.inf]])
    mass = np.diff(norm.cdf(edges, loc=mean, scale=std))
    return mass / mass.sum()


def shift_world() -> ImpactWorld:
    """ml-fairness-gym's DelayedImpactEnv world: seven credit clusters, two groups of equal size.

    The clusters' scores are their indices 0-6; group 1's distribution
    sits one to two clusters below group 0's, and both share the
    repayment probabilities (0.1, 0.2, 0.45, 0.6, 0.65, 0.7, 0.7).

    Examples
    --------
    >>> world = shift_world()
    >>> world.scores.tolist(), (world.pi @ world.scores).round(2).tolist()
    ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [3.6, 2.6])
    """
    pi = np.array(SHIFT_CLUSTER_PROBS, dtype=float)
    rho = np.tile(np.array(SHIFT_SUCCESS_PROBS), (2, 1))
    return ImpactWorld(
        np.arange(7.0), pi / pi.sum(axis=1, keepdims=True), rho, np.array([0.5, 0.5]), ("0", "1")
    )


def fico_world(tables: FicoTables, groups: tuple[str, ...]) -> ImpactWorld:
    """Return the TransRisk tables' ``groups``, scores mapped to 300-850 as Liu et al. do.

    The groups' shares of the applicants are their shares of the tables'
    totals (Black 12%, White 88% for Liu et al.'s pair).
    """
    from osfb_gym.data.fico import transrisk_to_fico

    rows = tables.index(groups)
    totals = tables.totals[rows].astype(float)
    return ImpactWorld(
        transrisk_to_fico(tables.scores),
        tables.pmf()[rows],
        np.asarray(tables.repay[rows], dtype=float),
        totals / totals.sum(),
        tuple(groups),
    )


# ----------------------------------------------------------------------------- pure model
def move_targets(scores: np.ndarray, change: float, dynamics: str) -> np.ndarray:
    """Return, for each bin, the bin an applicant there moves to after a change of ``change``.

    ``dynamics="score_change"`` (Liu et al.): the bin whose score is nearest
    to the score plus ``change``, clipped to the grid's range (ties go to
    the lower bin). ``"bin_shift"`` (ml-fairness-gym): ``change`` bins up or
    down, clipped to the grid.

    Examples
    --------
    >>> move_targets(np.array([300.0, 375.0, 450.0, 525.0]), 75.0, "score_change").tolist()
    [1, 2, 3, 3]
    >>> move_targets(np.arange(4.0), -1, "bin_shift").tolist()
    [0, 0, 1, 2]
    """
    scores = np.asarray(scores, dtype=float)
    bins = np.arange(scores.size)
    if dynamics == "bin_shift":
        return np.clip(bins + int(change), 0, scores.size - 1)
    moved = np.clip(scores + change, scores[0], scores[-1])
    right = np.clip(np.searchsorted(scores, moved), 0, scores.size - 1)
    left = np.clip(right - 1, 0, scores.size - 1)
    closer_left = np.abs(moved - scores[left]) <= np.abs(scores[right] - moved)
    return np.where(closer_left, left, right)


def expected_score_change(
    scores: np.ndarray,
    rho: np.ndarray,
    repay_change: float,
    default_change: float,
    dynamics: str = "score_change",
) -> np.ndarray:
    """Return an approved applicant's expected score change per bin (Liu et al.'s ``Delta(x)``).

    ``rho * c_plus + (1 - rho) * c_minus``, each move measured on the grid
    (:func:`move_targets`), so a move past either end of the range counts
    only up to that end, as in Liu et al.'s code (bounds 300 and 850).
    With ``"bin_shift"`` the changes are in bins and the result in score units.

    Examples
    --------
    >>> grid = np.arange(300.0, 851.0, 25.0)
    >>> change = expected_score_change(grid, np.full(grid.size, 0.8), 75.0, -150.0)
    >>> change[[0, 8, 22]].round(6).tolist()
    [60.0, 30.0, -30.0]
    """
    scores = np.asarray(scores, dtype=float)
    up = scores[move_targets(scores, repay_change, dynamics)] - scores
    down = scores[move_targets(scores, default_change, dynamics)] - scores
    rho = np.asarray(rho, dtype=float)
    return rho * up + (1.0 - rho) * down


def outcome_curve(
    scores: np.ndarray,
    pi: np.ndarray,
    rho: np.ndarray,
    repay_change: float = 75.0,
    default_change: float = -150.0,
    rates: np.ndarray | None = None,
    dynamics: str = "score_change",
) -> tuple[np.ndarray, np.ndarray]:
    """Liu et al.'s outcome curve of one group: ``Delta mu`` against the selection rate.

    ``Delta mu(tau) = sum_x pi(x) tau(x) [rho(x) c_plus + (1 - rho(x)) c_minus]``
    for the threshold policy ``tau`` (:func:`threshold_policy`) that selects
    each rate of ``rates`` (default: 101 rates from 0 to 1). The curve is
    0 at rate 0; where it is negative the policy does the group *active
    harm* (its mean score falls); its maximum is the rate that helps the
    group most. Defaults: Liu et al.'s FICO experiment, +75 on repayment,
    -150 on default.

    Returns
    -------
    rates, delta_mu
        The selection rates and the expected change of the group's mean score.

    Examples
    --------
    >>> world = synthetic_world()
    >>> rates, delta = outcome_curve(world.scores, world.pi[0], world.rho[0])
    >>> float(delta[0]), bool(delta[-1] < 0 < delta.max())
    (0.0, True)
    """
    rates = np.linspace(0.0, 1.0, 101) if rates is None else np.asarray(rates, dtype=float)
    pi = np.asarray(pi, dtype=float)
    move = expected_score_change(scores, rho, repay_change, default_change, dynamics)
    delta = threshold_policies(pi, rates) @ (pi * move)
    return rates, delta
