"""Confidence intervals by test inversion: the one routine each kind of test uses.

A CI of the shift delta is the set of shifts the test does not reject for
``A - delta`` against ``B``, so it excludes 0 exactly when the test rejects.
Two kinds of test, one inversion each:

- randomisation tests (sign-flip, permutation): the p-value at delta is a
  count of *critical shifts* below delta, so the CI's ends are order
  statistics of them (:func:`from_critical_shifts`);
- rank tests (signed-rank, Mann-Whitney): the p-value is constant between
  sorted critical shifts and is computed by SciPy, so the ends are found by
  bisection over them (:func:`by_bisection`).

:class:`Outcome` is what every test returns to
:func:`~osfb_gym.stats.verdicts.paired` and
:func:`~osfb_gym.stats.verdicts.unpaired`: the estimate, its CI and the test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Outcome", "by_bisection", "from_critical_shifts", "randomisation", "rank"]


@dataclass(frozen=True)
class Outcome:
    """One test's result: the estimate of A - B, its CI, the p-value and how it was got.

    Attributes
    ----------
    effect
        The estimate (see ``estimate``).
    low, high, level
        The CI and its level (below ``1 - alpha`` when the sample cannot reach it).
    p_value
        Two-sided.
    test
        The test's name and how it was computed.
    min_p
        The smallest p-value the test can give at this sample size.
    mc_error
        The Monte-Carlo standard error of ``p_value`` (0 when exact).
    estimate
        What ``effect`` estimates.
    """

    effect: float
    low: float
    high: float
    level: float
    p_value: float
    test: str
    min_p: float
    mc_error: float
    estimate: str = "mean difference"


def mc_error(p: float, total: int, exact: bool) -> float:
    """Return the Monte-Carlo standard error of a p-value from ``total`` draws (0 when exact)."""
    return 0.0 if exact else math.sqrt(max(p * (1 - p), 1e-12) / total)


def from_critical_shifts(
    shifts: np.ndarray, base: int, total: int, alpha: float
) -> tuple[float, float, float]:
    """Return ``(low, high, level)``: the CI from the critical shifts of a randomisation test.

    The one-sided p at shift delta is ``(base + #{shifts <= delta}) / total``
    (and mirrored above), ``base`` counting the patterns that never move;
    delta is kept while that exceeds alpha / 2. When no shift can be
    rejected at alpha, the widest exact interval the sample allows (its level
    below ``1 - alpha``) instead.
    """
    k = math.floor(alpha * total / 2) - (base - 1)
    level = 1 - alpha
    if k <= 0:
        k, level = 1, 1 - 2 * base / total  # the highest level this sample reaches
    if k > shifts.size or level <= 0:
        return -math.inf, math.inf, 1.0
    ordered = np.partition(shifts, [k - 1, shifts.size - k])
    return float(ordered[k - 1]), float(ordered[shifts.size - k]), level


def by_bisection(
    p_at: Callable[[float], float], critical: np.ndarray, centre: float, alpha: float
) -> tuple[float, float]:
    """Invert a test whose p-value is constant between sorted critical shifts.

    The CI's ends are the critical shifts where the p-value (evaluated at the
    midpoints between them) first exceeds alpha, searched by bisection from
    the outside in on each side of ``centre``.
    """
    points = np.unique(critical)
    mids = np.concatenate([[points[0] - 1.0], (points[:-1] + points[1:]) / 2, [points[-1] + 1.0]])
    middle = int(np.searchsorted(mids, centre))
    middle = min(max(middle, 0), mids.size - 1)
    if p_at(mids[middle]) <= alpha:
        return centre, centre
    lo, hi = 0, middle  # smallest index with p > alpha
    while lo < hi:
        mid = (lo + hi) // 2
        if p_at(mids[mid]) > alpha:
            hi = mid
        else:
            lo = mid + 1
    low = -math.inf if lo == 0 else float(points[lo - 1])
    lo, hi = middle, mids.size - 1  # largest index with p > alpha
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if p_at(mids[mid]) > alpha:
            lo = mid
        else:
            hi = mid - 1
    high = math.inf if lo == mids.size - 1 else float(points[lo])
    return low, high


def randomisation(
    name: str,
    unit: str,
    effect: float,
    p: float,
    critical: tuple[np.ndarray, int, int],
    exact: bool,
    min_p: float,
    alpha: float,
) -> Outcome:
    """Return a sign-flip or permutation test's :class:`Outcome`.

    Parameters
    ----------
    name, unit
        The test's name and what it enumerates ("patterns", "splits").
    effect
        The difference of means.
    p
        The two-sided p-value.
    critical
        ``(shifts, base, total)`` for :func:`from_critical_shifts`; ``total``
        is the p-value's denominator.
    exact
        Whether every pattern / split was enumerated.
    min_p
        The smallest p-value of the exact test at this size.
    alpha
        The level of the CI.
    """
    shifts, base, total = critical
    low, high, level = from_critical_shifts(shifts, base, total, alpha)
    how = f"exact, {total:,} {unit}" if exact else f"Monte Carlo, {total - 1:,} {unit}"
    return Outcome(
        effect, low, high, level, p, f"{name} ({how})",
        max(min_p, 0 if exact else 2 / total), mc_error(p, total, exact),
    )  # fmt: skip


def rank(
    name: str,
    p_at: Callable[[float], tuple[float, str]],
    critical: np.ndarray,
    min_p: float,
    n_resamples: int,
    alpha: float,
) -> Outcome:
    """Return a rank test's :class:`Outcome`: the Hodges-Lehmann shift and the test inverted.

    Parameters
    ----------
    name
        The test's name.
    p_at
        Shift -> (two-sided p-value of the test of A - shift against B, how).
    critical
        The shifts where the test statistic changes (Walsh averages, pairwise
        differences); their median is the Hodges-Lehmann estimate.
    min_p
        The smallest p-value of the exact test at this size.
    n_resamples
        The permutations SciPy draws where it cannot be exact.
    alpha
        The level of the CI.
    """
    p, how = p_at(0.0)
    centre = float(np.median(critical))
    low, high = by_bisection(lambda s: p_at(s)[0], critical, centre, alpha)
    exact = how.startswith("exact")
    return Outcome(
        centre, low, high, 1 - alpha, p, f"{name} ({how})", min_p,
        mc_error(p, n_resamples + 1, exact), estimate="Hodges-Lehmann shift",
    )  # fmt: skip
