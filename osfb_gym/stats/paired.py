"""Paired tests: both sides ran on the same worlds, splits or test episodes.

- the exact sign-flip test of the mean difference (all ``2^n`` sign patterns
  for ``n <= EXACT_MAX_PAIRS`` pairs, else ``n_resamples`` random patterns
  from a seeded generator); its CI is the test inverted (Hartigan's subset
  means), so the CI excludes 0 exactly when the test rejects;
- Wilcoxon's signed-rank test (zeros split) with the CI of the
  Hodges-Lehmann shift from the Walsh averages.

:func:`~osfb_gym.stats.verdicts.paired` turns either into a verdict.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from osfb_gym.stats import intervals
from osfb_gym.stats._checks import (
    ALPHA,
    N_RESAMPLES,
    alpha_level,
    has_ties,
    resamples,
    sample,
    tolerance,
)

__all__ = [
    "EXACT_MAX_PAIRS",
    "location_interval",
    "min_p_paired",
    "pairs_needed",
    "sign_flip",
    "sign_flip_pvalues",
    "signed_rank",
]

#: up to this many pairs the sign-flip test enumerates all 2^n sign patterns
EXACT_MAX_PAIRS = 20


def _subset_sums(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the sums over every subset of the last axis (2^n of them) and their sizes."""
    sums = np.zeros((*d.shape[:-1], 1))
    sizes = np.zeros(1, dtype=np.int64)
    for i in range(d.shape[-1]):
        sums = np.concatenate([sums, sums + d[..., i : i + 1]], axis=-1)
        sizes = np.concatenate([sizes, sizes + 1])
    return sums, sizes


def _count_at_most(d: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Count the subsets F of each row's values with ``sum_F d <= tol`` (all 2^n of them).

    Meet in the middle: with L the subset sums of the first half and R of the
    second, count the pairs with ``R_j <= tol - L_i``: one stable sort of R
    and the queries together per row (R first, so a tie counts), 2^(n/2 + 1)
    values instead of 2^n.
    """
    half = d.shape[-1] // 2
    left, _ = _subset_sums(d[..., :half])
    right, _ = _subset_sums(d[..., half:])
    merged = np.concatenate([right, tol - left], axis=-1)
    is_right = np.argsort(merged, axis=-1, kind="stable") < right.shape[-1]
    below = np.cumsum(is_right, axis=-1)  # right sums at or before each position
    return np.where(is_right, 0, below).sum(axis=-1)


def _random_subsets(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random((n_resamples, n)) < 0.5


def _sign_flip_counts(
    d: np.ndarray, exact: bool, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, int]:
    """Count flipped sums at least / at most the observed one; return the counts and total.

    Flipping the signs of a subset F changes the sum by ``-2 sum_F d``, so a
    flipped sum is at least the observed one exactly when ``sum_F d <= 0``:
    ``upper / total`` is the one-sided p-value against "d is centred above 0".
    Exact: all 2^n subsets (the empty one is the observed pattern). Monte
    Carlo: the observed pattern plus ``n_resamples`` random subsets
    (Phipson & Smyth's +1, which keeps the test valid at any count).
    """
    tol = tolerance(d)
    if exact:
        return _count_at_most(d, tol), _count_at_most(-d, tol), 2 ** d.shape[-1]
    subsets = _random_subsets(d.shape[-1], n_resamples, rng).astype(float)
    sums = d @ subsets.T
    return 1 + (sums <= tol).sum(-1), 1 + (sums >= -tol).sum(-1), n_resamples + 1


def sign_flip_pvalues(
    differences: Any,
    *,
    exact: bool | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Return two-sided sign-flip p-values of the mean of each row of ``differences``.

    The null hypothesis is that each row's differences are symmetric about
    0 (the two sides exchangeable within each pair). The p-value is twice the
    smaller one-sided p-value, capped at 1. Vectorised over rows (the
    calibration tests pass thousands of simulated samples at once).

    Parameters
    ----------
    differences
        ``(..., n)`` per-pair differences.
    exact
        Enumerate all ``2^n`` sign patterns; None (default): when
        ``n <= EXACT_MAX_PAIRS``.
    n_resamples
        Random sign patterns when not exact (one set, shared by all rows).
    seed
        Seeds the random patterns.

    Examples
    --------
    >>> float(sign_flip_pvalues([1.0, 2.0, 3.0, 4.0, 5.0]))  # 2 of 32 patterns
    0.0625
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim < 1 or d.shape[-1] < 1 or not np.all(np.isfinite(d)):
        raise ValueError("differences must be (..., n) finite values with n >= 1")
    exact = d.shape[-1] <= EXACT_MAX_PAIRS if exact is None else bool(exact)
    upper, lower, total = _sign_flip_counts(
        d, exact, resamples(n_resamples), np.random.default_rng(seed)
    )
    return np.minimum(1.0, 2 * np.minimum(upper, lower) / total)


def _critical_shifts(
    d: np.ndarray, exact: bool, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, int, int]:
    """Return the sign-flip test's critical shifts, the patterns that never move, the total.

    Flipping F makes the shifted sum tie exactly at delta = mean_F(d)
    (Hartigan 1969); the empty pattern never moves.
    """
    if exact:
        sums, sizes = _subset_sums(d)
        return sums[1:] / sizes[1:], 1, sums.size
    subsets = _random_subsets(d.size, n_resamples, rng)
    sizes = subsets.sum(axis=1)
    filled = sizes > 0
    means = (subsets[filled].astype(float) @ d) / sizes[filled]
    return means, 1 + int((~filled).sum()), n_resamples + 1


def min_p_paired(n: int) -> float:
    """Smallest two-sided p-value an exact sign-flip or signed-rank test can give with n pairs.

    >>> min_p_paired(5), min_p_paired(10)
    (0.0625, 0.001953125)
    """
    return min(1.0, 2.0 / 2.0**n)


def pairs_needed(comparisons: int, alpha: float = ALPHA) -> int:
    """Return the fewest pairs at which one of ``comparisons`` paired tests can pass Holm.

    Holm multiplies the smallest p-value by the family's size, and the exact
    sign-flip test's smallest two-sided p with n pairs is ``2 / 2^n``
    (:func:`min_p_paired`): every difference of one sign.

    >>> pairs_needed(120), pairs_needed(1)
    (13, 6)
    """
    return math.ceil(math.log2(2 * max(comparisons, 1) / alpha))


def location_interval(
    values: Any,
    *,
    alpha: float = ALPHA,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Return the exact sign-flip CI of the centre of one sample (symmetric about it).

    ``(-inf, inf)`` when the sample is too small for a ``1 - alpha`` interval
    (five values at 95%).

    Examples
    --------
    >>> location_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    (-inf, inf)
    >>> location_interval([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])  # six values: the range, level 62/64
    (1.0, 6.0)
    """
    x = sample(values, "values")
    exact = x.size <= EXACT_MAX_PAIRS
    rng = np.random.default_rng(seed)
    critical = _critical_shifts(x, exact, resamples(n_resamples), rng)
    low, high, level = intervals.from_critical_shifts(*critical, alpha_level(alpha))
    return (low, high) if level >= 1 - alpha else (-np.inf, np.inf)


def sign_flip(d: np.ndarray, alpha: float, n_resamples: int, seed: int) -> intervals.Outcome:
    """Run the sign-flip test of the mean of the differences ``d`` and its CI."""
    exact = d.size <= EXACT_MAX_PAIRS
    p = float(sign_flip_pvalues(d, exact=exact, n_resamples=n_resamples, seed=seed))
    critical = _critical_shifts(d, exact, n_resamples, np.random.default_rng(seed))
    return intervals.randomisation(
        "paired sign-flip", "patterns", float(d.mean()), p, critical, exact,
        min_p_paired(d.size), alpha,
    )  # fmt: skip


def _wilcoxon(d: np.ndarray, n_resamples: int, seed: int) -> tuple[float, str]:
    if np.all(d == 0):
        return 1.0, "exact"
    if has_ties(np.abs(d)) or np.any(d == 0):
        method: Any = stats.PermutationMethod(n_resamples=n_resamples, rng=seed)
        how = "permutation" if 2**d.size > n_resamples else "exact permutation"
    else:
        method, how = "exact", "exact"
    return float(stats.wilcoxon(d, zero_method="zsplit", method=method).pvalue), how


def signed_rank(d: np.ndarray, alpha: float, n_resamples: int, seed: int) -> intervals.Outcome:
    """Run Wilcoxon's signed-rank test of ``d``; the CI of the Hodges-Lehmann shift."""
    walsh = (d[:, None] + d[None, :])[np.triu_indices(d.size)] / 2
    return intervals.rank(
        "paired Wilcoxon signed-rank", lambda s: _wilcoxon(d - s, n_resamples, seed), walsh,
        min_p_paired(d.size), n_resamples, alpha,
    )  # fmt: skip
