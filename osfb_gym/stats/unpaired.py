"""Unpaired tests: no run of A shares anything with one of B.

- the exact permutation test of the difference of means (every split of
  the pooled runs up to ``EXACT_MAX_SPLITS`` splits, else random ones); its
  CI is the test inverted;
- Mann-Whitney's U (exact without ties, else permutation) with the CI of
  the Hodges-Lehmann shift from the pairwise differences.

:func:`~osfb_gym.stats.verdicts.unpaired` turns either into a verdict.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from scipy import stats

from osfb_gym.stats import intervals
from osfb_gym.stats._checks import N_RESAMPLES, has_ties, resamples, tolerance

__all__ = [
    "EXACT_MAX_SPLITS",
    "min_p_unpaired",
    "permutation",
    "permutation_pvalues",
    "rank_sum",
]

#: up to this many splits of the pooled runs the permutation test enumerates them all
EXACT_MAX_SPLITS = 200_000


def _splits(n_a: int, n_b: int) -> np.ndarray:
    """Every way to pick the n_a indices of side A among n_a + n_b (the first: the observed)."""
    count = math.comb(n_a + n_b, n_a)
    flat = itertools.chain.from_iterable(itertools.combinations(range(n_a + n_b), n_a))
    return np.fromiter(flat, dtype=np.int64, count=count * n_a).reshape(count, n_a)


def _random_splits(n_a: int, n_b: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    order = rng.permuted(np.tile(np.arange(n_a + n_b), (n_resamples, 1)), axis=1)
    return order[:, :n_a]


def _permutation_sums(
    n_a: int, n_b: int, exact: bool, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, int, int]:
    """Index sets of side A, how many leading rows are the observed split, the p's denominator."""
    if exact:
        splits = _splits(n_a, n_b)
        return splits, 0, splits.shape[0]
    return _random_splits(n_a, n_b, n_resamples, rng), 1, n_resamples + 1


def permutation_pvalues(
    a: Any,
    b: Any,
    *,
    exact: bool | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Return two-sided permutation p-values of the difference of means of rows of a and b.

    ``a`` is ``(..., n_a)``, ``b`` ``(..., n_b)``; the null hypothesis is that
    the pooled runs are exchangeable. Twice the smaller one-sided p-value,
    capped at 1; exact (every split) when there are at most
    ``EXACT_MAX_SPLITS`` splits, unless ``exact`` says otherwise.

    Examples
    --------
    >>> float(permutation_pvalues([3.0, 4.0, 5.0], [0.0, 1.0, 2.0]))  # 2 of 20 splits
    0.1
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape[:-1] != y.shape[:-1] or x.shape[-1] < 1 or y.shape[-1] < 1:
        raise ValueError(
            f"a and b must be (..., n) with the same leading shape: {x.shape}, {y.shape}"
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("a and b must hold finite values")
    n_a, n_b = x.shape[-1], y.shape[-1]
    exact = math.comb(n_a + n_b, n_a) <= EXACT_MAX_SPLITS if exact is None else bool(exact)
    rng = np.random.default_rng(seed)
    splits, extra, total = _permutation_sums(n_a, n_b, exact, resamples(n_resamples), rng)
    pooled = np.concatenate([x, y], axis=-1)
    observed = x.sum(axis=-1, keepdims=True)
    tol = tolerance(pooled)
    sums = pooled[..., splits].sum(axis=-1)  # (..., splits)
    upper = extra + (sums >= observed - tol).sum(-1)
    lower = extra + (sums <= observed + tol).sum(-1)
    return np.minimum(1.0, 2 * np.minimum(upper, lower) / total)


def _critical_shifts(
    x: np.ndarray, y: np.ndarray, exact: bool, n_resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, int, int]:
    """Return the permutation test's critical shifts, the splits that never move, the total.

    A split putting c of A's runs (sum S) on side A ties with the observed one
    at delta = (sum(x) - S) / (n_a - c); the observed split never changes side.
    """
    n_a = x.size
    splits, extra, total = _permutation_sums(n_a, y.size, exact, n_resamples, rng)
    pooled = np.concatenate([x, y])
    sums, kept = pooled[splits].sum(axis=1), (splits < n_a).sum(axis=1)
    moved = kept < n_a
    shifts = (x.sum() - sums[moved]) / (n_a - kept[moved])
    return shifts, extra + int((~moved).sum()), total


def min_p_unpaired(n_a: int, n_b: int) -> float:
    """Smallest two-sided p-value of an exact permutation / Mann-Whitney test of n_a and n_b runs.

    >>> min_p_unpaired(5, 5)  # 2 of the 252 splits
    0.007936507936507936
    """
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def permutation(
    x: np.ndarray, y: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> intervals.Outcome:
    """Run the permutation test of the difference of means of ``x`` and ``y`` and its CI."""
    exact = math.comb(x.size + y.size, x.size) <= EXACT_MAX_SPLITS
    p = float(permutation_pvalues(x, y, exact=exact, n_resamples=n_resamples, seed=seed))
    critical = _critical_shifts(x, y, exact, n_resamples, np.random.default_rng(seed))
    return intervals.randomisation(
        "permutation", "splits", float(x.mean() - y.mean()), p, critical, exact,
        min_p_unpaired(x.size, y.size), alpha,
    )  # fmt: skip


def _mann_whitney(x: np.ndarray, y: np.ndarray, n_resamples: int, seed: int) -> tuple[float, str]:
    if has_ties(np.concatenate([x, y])):
        method: Any = stats.PermutationMethod(n_resamples=n_resamples, rng=seed)
        how = "permutation"
    else:
        method, how = "exact", "exact"
    return float(stats.mannwhitneyu(x, y, method=method).pvalue), how


def rank_sum(
    x: np.ndarray, y: np.ndarray, alpha: float, n_resamples: int, seed: int
) -> intervals.Outcome:
    """Run Mann-Whitney's U test of ``x`` against ``y``, the CI of the Hodges-Lehmann shift."""
    return intervals.rank(
        "Mann-Whitney U", lambda s: _mann_whitney(x - s, y, n_resamples, seed),
        (x[:, None] - y[None, :]).ravel(), min_p_unpaired(x.size, y.size), n_resamples, alpha,
    )  # fmt: skip
