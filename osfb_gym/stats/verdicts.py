"""Verdicts: who wins, or "tie (within noise)", from calibrated paired and unpaired tests.

Every "A beats B", "lowest" or "tie" the project prints is a :class:`Verdict`
made here (DESIGN section 8):

- :func:`paired` where both sides ran on the same worlds, splits or test
  episodes: the per-pair differences, an exact sign-flip test (all ``2^n``
  sign patterns for ``n <= EXACT_MAX_PAIRS`` pairs, else ``n_resamples``
  random patterns from a seeded generator, the p-value's Monte-Carlo error
  stated), or Wilcoxon's signed-rank test; the CI of the mean difference is
  the sign-flip test inverted (Hartigan's subset means), so the CI excludes 0
  exactly when the test rejects.
- :func:`unpaired` otherwise: an exact permutation test of the difference
  of means (every split for up to ``EXACT_MAX_SPLITS`` splits, else random
  ones), or Mann-Whitney's U; the CI is again the test inverted.
- :func:`best_of` for a cell with several agents: "clearly lowest" when the
  best is significantly better than every other (Holm over the cell), else
  "tied for lowest with X, Y".
- :class:`Page` collects a page's verdicts and applies Holm's correction over
  all of them when they are read, with a sentence for the page saying so.
- :func:`place` is the grader's rule: a submission against each reference.

A winner is named only when the two-sided p-value (after Holm, on a page)
is at most ``alpha``; the side with the better estimate wins. With too few
pairs the test can never reject (5 pairs: the smallest two-sided p is
``2 / 2^5 = 0.0625 > 0.05``), and the verdict says so instead of naming a
winner. The false-positive rates of these rules at the suites' sample sizes
are measured in ``tests/osfb_gym/stats/test_calibration.py`` (docs/verdicts.md).

Only NumPy and SciPy are imported, so the grader reads this module without
the benchmark engine.

Examples
--------
>>> a = [1.0, 1.2, 0.9, 1.1, 1.3, 1.0, 1.2, 0.8, 1.1, 1.0]
>>> b = [1.5, 1.6, 1.4, 1.3, 1.9, 1.2, 1.5, 1.4, 1.6, 1.3]
>>> v = paired(a, b, lower_is_better=True, names=("A", "B"))
>>> v.winner, v.p_value
('A', 0.001953125)
>>> paired(a[:5], b[:5], lower_is_better=True).winner is None  # 5 pairs cannot reject
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "ALPHA",
    "EXACT_MAX_PAIRS",
    "EXACT_MAX_SPLITS",
    "N_RESAMPLES",
    "BestOf",
    "Page",
    "Placement",
    "Verdict",
    "best_of",
    "holm",
    "location_interval",
    "min_p_paired",
    "min_p_unpaired",
    "paired",
    "permutation_pvalues",
    "place",
    "sign_flip_pvalues",
    "unpaired",
]

#: two-sided level of every verdict (family-wise on a :class:`Page`)
ALPHA = 0.05
#: up to this many pairs the sign-flip test enumerates all 2^n sign patterns
EXACT_MAX_PAIRS = 20
#: up to this many splits of the pooled runs the permutation test enumerates them all
EXACT_MAX_SPLITS = 200_000
#: random sign patterns / permutations beyond the exact sizes: the p-value's
#: Monte-Carlo standard error is at most 0.5 / sqrt(N_RESAMPLES) = 0.0035, and
#: about 0.0015 near p = 0.05
N_RESAMPLES = 20_000

PAIRED_TESTS = ("sign-flip", "wilcoxon")
UNPAIRED_TESTS = ("permutation", "mann-whitney")


# ---------------------------------------------------------------------------- checks
def _sample(values: Any, name: str, minimum: int = 1) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-D sequence of numbers, got {values!r}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per run or pair), got shape {array.shape}")
    if array.size < minimum:
        raise ValueError(f"{name} needs at least {minimum} value(s), got {array.size}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds non-finite values")
    return array


def _alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)):
        raise TypeError(f"alpha must be a float in (0, 1), got {alpha!r}")
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def _direction(lower_is_better: Any) -> bool:
    if not isinstance(lower_is_better, (bool, np.bool_)):
        raise TypeError(f"lower_is_better must be True or False, got {lower_is_better!r}")
    return bool(lower_is_better)


def _names(names: Any) -> tuple[str, str]:
    if (
        not isinstance(names, (tuple, list))
        or len(names) != 2
        or not all(isinstance(name, str) for name in names)
    ):
        raise TypeError(f"names must be two strings (a, b), got {names!r}")
    return str(names[0]), str(names[1])


def _resamples(n_resamples: Any) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise TypeError(f"n_resamples must be an int >= 100, got {n_resamples!r}")
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
    return int(n_resamples)


def _tolerance(values: np.ndarray) -> np.ndarray:
    """Return the tolerance within which two sums count as equal (rounding)."""
    return 1e-9 * np.maximum(np.abs(values).sum(axis=-1, keepdims=True), 1e-300)


# ---------------------------------------------------------------------------- sign-flip
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
    tol = _tolerance(d)
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
        d, exact, _resamples(n_resamples), np.random.default_rng(seed)
    )
    return np.minimum(1.0, 2 * np.minimum(upper, lower) / total)


def _order_bounds(
    shifts: np.ndarray, base: int, total: int, alpha: float
) -> tuple[float, float, float]:
    """Return ``(low, high, level)``: the CI from the critical shifts of a test.

    The one-sided p at shift delta is ``(base + #{shifts <= delta}) / total``
    (and mirrored above); delta is kept while that exceeds alpha / 2. When no
    shift can be rejected at alpha, the widest exact interval the sample
    allows (its level below ``1 - alpha``) instead.
    """
    k = math.floor(alpha * total / 2) - (base - 1)
    level = 1 - alpha
    if k <= 0:
        k, level = 1, 1 - 2 * base / total  # the highest level this sample reaches
    if k > shifts.size or level <= 0:
        return -math.inf, math.inf, 1.0
    ordered = np.partition(shifts, [k - 1, shifts.size - k])
    return float(ordered[k - 1]), float(ordered[shifts.size - k]), level


def _sign_flip_interval(
    d: np.ndarray, alpha: float, exact: bool, n_resamples: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Invert the sign-flip test: the shifts delta it does not reject for ``d - delta``.

    The critical shifts are the means of the subsets (Hartigan 1969): flipping
    F makes the shifted sum tie exactly at delta = mean_F(d).
    """
    if exact:
        sums, sizes = _subset_sums(d)
        return _order_bounds(sums[1:] / sizes[1:], 1, sums.size, alpha)
    subsets = _random_subsets(d.size, n_resamples, rng)
    sizes = subsets.sum(axis=1)
    filled = sizes > 0
    means = (subsets[filled].astype(float) @ d) / sizes[filled]
    return _order_bounds(means, 1 + int((~filled).sum()), n_resamples + 1, alpha)


def min_p_paired(n: int) -> float:
    """Smallest two-sided p-value an exact sign-flip or signed-rank test can give with n pairs.

    >>> min_p_paired(5), min_p_paired(10)
    (0.0625, 0.001953125)
    """
    return min(1.0, 2.0 / 2.0**n)


def min_p_unpaired(n_a: int, n_b: int) -> float:
    """Smallest two-sided p-value of an exact permutation / Mann-Whitney test of n_a and n_b runs.

    >>> min_p_unpaired(5, 5)  # 2 of the 252 splits
    0.007936507936507936
    """
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


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
    x = _sample(values, "values")
    exact = x.size <= EXACT_MAX_PAIRS
    rng = np.random.default_rng(seed)
    low, high, level = _sign_flip_interval(x, _alpha(alpha), exact, _resamples(n_resamples), rng)
    return (low, high) if level >= 1 - alpha else (-math.inf, math.inf)


# ---------------------------------------------------------------------------- permutation
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
    splits, extra, total = _permutation_sums(n_a, n_b, exact, _resamples(n_resamples), rng)
    pooled = np.concatenate([x, y], axis=-1)
    observed = x.sum(axis=-1, keepdims=True)
    tol = _tolerance(pooled)
    sums = pooled[..., splits].sum(axis=-1)  # (..., splits)
    upper = extra + (sums >= observed - tol).sum(-1)
    lower = extra + (sums <= observed + tol).sum(-1)
    return np.minimum(1.0, 2 * np.minimum(upper, lower) / total)


def _permutation_interval(
    x: np.ndarray,
    y: np.ndarray,
    alpha: float,
    exact: bool,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    """Invert the permutation test: the shifts delta it does not reject for (x - delta, y).

    A split putting c of A's runs (sum S) on side A ties with the observed one
    at delta = (sum(x) - S) / (n_a - c); the observed split never changes side.
    """
    n_a = x.size
    splits, extra, total = _permutation_sums(n_a, y.size, exact, n_resamples, rng)
    pooled = np.concatenate([x, y])
    sums, kept = pooled[splits].sum(axis=1), (splits < n_a).sum(axis=1)
    moved = kept < n_a
    shifts = (x.sum() - sums[moved]) / (n_a - kept[moved])
    return _order_bounds(shifts, extra + int((~moved).sum()), total, alpha)


# ---------------------------------------------------------------------------- rank tests
def _invert(
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


def _has_ties(values: np.ndarray) -> bool:
    return bool(np.unique(values).size < values.size)


def _wilcoxon(d: np.ndarray, n_resamples: int, seed: int) -> tuple[float, str]:
    if np.all(d == 0):
        return 1.0, "exact"
    if _has_ties(np.abs(d)) or np.any(d == 0):
        method: Any = stats.PermutationMethod(n_resamples=n_resamples, rng=seed)
        how = "permutation" if 2**d.size > n_resamples else "exact permutation"
    else:
        method, how = "exact", "exact"
    return float(stats.wilcoxon(d, zero_method="zsplit", method=method).pvalue), how


def _mann_whitney(x: np.ndarray, y: np.ndarray, n_resamples: int, seed: int) -> tuple[float, str]:
    if _has_ties(np.concatenate([x, y])):
        method: Any = stats.PermutationMethod(n_resamples=n_resamples, rng=seed)
        how = "permutation"
    else:
        method, how = "exact", "exact"
    return float(stats.mannwhitneyu(x, y, method=method).pvalue), how


# ---------------------------------------------------------------------------- verdicts
@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing A with B: a winner or a tie, the effect, its CI and the test.

    Attributes
    ----------
    a, b
        The two sides' names.
    lower_is_better
        The direction of the compared score.
    effect
        The estimate of A - B: the mean difference (sign-flip, permutation)
        or the Hodges-Lehmann shift (signed-rank, Mann-Whitney); see
        ``estimate``.
    low, high
        The CI of ``effect`` at level ``level``: the test inverted, so it
        excludes 0 exactly when the unadjusted p-value is at most alpha.
    level
        ``1 - alpha``; lower when the sample is too small for a ``1 - alpha``
        interval (5 pairs: 93.75%, the range of the differences), and the
        text then names the level. Rank tests: ``1 - alpha``, and the interval
        may be unbounded.
    p_value
        The two-sided p-value.
    test
        The test used, e.g. ``"paired sign-flip (exact, 1,024 patterns)"``.
    n
        Pairs (paired) or A's runs (unpaired).
    n_b
        B's runs (unpaired), else None.
    min_p
        The smallest p-value the exact test can give at this n: when it
        exceeds alpha no winner can ever be named.
    mc_error
        The Monte-Carlo standard error of ``p_value`` (0 when exact).
    alpha
        The level a p-value is compared with.
    p_adjusted
        Holm's adjusted p-value when the verdict is one of a :class:`Page`'s
        (or a :func:`best_of` cell's), else None.
    family_size
        How many comparisons the Holm correction ran over (1: none).
    estimate
        What ``effect`` estimates.
    """

    a: str
    b: str
    lower_is_better: bool
    effect: float
    low: float
    high: float
    p_value: float
    test: str
    n: int
    n_b: int | None
    min_p: float
    mc_error: float
    alpha: float = ALPHA
    p_adjusted: float | None = None
    family_size: int = 1
    estimate: str = "mean difference"
    level: float = 1 - ALPHA

    @property
    def p(self) -> float:
        """The p-value the decision uses: Holm's adjusted one on a page, else the raw one."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def can_reject(self) -> bool:
        """False when the sample is too small for the test to ever reject at ``alpha``.

        On a page the smallest p-value is multiplied by Holm's largest factor
        (the family's size) in the worst case; this property uses the raw
        smallest p-value against alpha divided by the family size for the
        first step of Holm.
        """
        return self.min_p <= self.alpha / self.family_size

    @property
    def winner(self) -> str | None:
        """The better side's name when the test rejects at ``alpha``, else None (a tie)."""
        if self.p > self.alpha or self.effect == 0:
            return None
        return self.a if (self.effect < 0) == self.lower_is_better else self.b

    @property
    def paired(self) -> bool:
        """True for a paired comparison."""
        return self.n_b is None

    def _sizes(self) -> str:
        if self.n_b is None:
            return f"n={self.n} pairs"
        return f"n={self.n}+{self.n_b} runs"

    def _interval(self) -> str:
        text = f"[{self.low:.3g}, {self.high:.3g}]"
        if self.level < 1 - self.alpha - 1e-12:
            text += f" ({self.level:.4g} CI, the highest level this sample reaches)"
        return text

    @property
    def text(self) -> str:
        """One line for a page.

        ``"A lower than B: -0.12 [-0.2, -0.04], paired sign-flip (exact, ...) p=0.004,
        n=20 pairs"`` or ``"tie (within noise): A - B = ..."``.
        """
        p = f"p={self.p_value:.2g}"
        if self.mc_error > 0:
            p += f" ± {self.mc_error:.1g}"
        if self.p_adjusted is not None and self.family_size > 1:
            p += f" (Holm over {self.family_size}: {self.p_adjusted:.2g})"
        details = f"{self.effect:+.3g} {self._interval()}, {self.test} {p}, {self._sizes()}"
        winner = self.winner
        if winner is not None:
            loser = self.b if winner == self.a else self.a
            word = "lower" if self.lower_is_better else "higher"
            return f"{winner} {word} than {loser}: {self.a} - {self.b} = {details}"
        line = f"tie (within noise): {self.a} - {self.b} = {details}"
        if not self.can_reject:
            line += (
                f"; too few runs to ever name a winner (smallest p {self.min_p:.3g} > "
                f"{self.alpha / self.family_size:.3g})"
            )
        return line

    def __str__(self) -> str:
        return self.text


def _mc_error(p: float, total: int, exact: bool) -> float:
    return 0.0 if exact else math.sqrt(max(p * (1 - p), 1e-12) / total)


def paired(
    a: Any,
    b: Any,
    *,
    lower_is_better: bool,
    names: Sequence[str] = ("A", "B"),
    test: str = "sign-flip",
    alpha: float = ALPHA,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Verdict:
    """Compare A with B where pair i of A and B shared a world, split or test episodes.

    Parameters
    ----------
    a, b
        One score per pair, in the same order (e.g. per seed).
    lower_is_better
        The score's direction (a family's ``lower_is_better``).
    names
        The two sides' names in the verdict.
    test
        ``"sign-flip"`` (default: exact permutation test of the mean
        difference, CI of the mean difference) or ``"wilcoxon"`` (signed-rank,
        zeros split; CI of the Hodges-Lehmann shift from the Walsh averages).
    alpha
        Two-sided level.
    n_resamples
        Random sign patterns beyond ``EXACT_MAX_PAIRS`` pairs (and for the
        signed-rank test with ties).
    seed
        Seeds the random patterns.

    Returns
    -------
    Verdict
    """
    x, y = _sample(a, "a"), _sample(b, "b")
    if x.size != y.size:
        raise ValueError(f"a and b must have one value per pair: {x.size} and {y.size} values")
    if test not in PAIRED_TESTS:
        raise ValueError(f"test must be one of {PAIRED_TESTS}, got {test!r}")
    lower, (name_a, name_b) = _direction(lower_is_better), _names(list(names))
    alpha, n_resamples = _alpha(alpha), _resamples(n_resamples)
    d = x - y
    n = d.size
    if test == "sign-flip":
        exact = n <= EXACT_MAX_PAIRS
        p = float(sign_flip_pvalues(d, exact=exact, n_resamples=n_resamples, seed=seed))
        rng = np.random.default_rng(seed)
        low, high, level = _sign_flip_interval(d, alpha, exact, n_resamples, rng)
        total = 2**n if exact else n_resamples + 1
        how = f"exact, {total:,} patterns" if exact else f"Monte Carlo, {n_resamples:,} patterns"
        return Verdict(
            name_a, name_b, lower, float(d.mean()), low, high, p,
            f"paired sign-flip ({how})", n, None, max(min_p_paired(n), 0 if exact else 2 / total),
            _mc_error(p, total, exact), alpha, level=level,
        )  # fmt: skip
    p, how = _wilcoxon(d, n_resamples, seed)
    walsh = (d[:, None] + d[None, :])[np.triu_indices(n)] / 2
    centre = float(np.median(walsh))
    low, high = _invert(lambda s: _wilcoxon(d - s, n_resamples, seed)[0], walsh, centre, alpha)
    exact = how.startswith("exact")
    return Verdict(
        name_a, name_b, lower, centre, low, high, p, f"paired Wilcoxon signed-rank ({how})",
        n, None, min_p_paired(n), _mc_error(p, n_resamples + 1, exact), alpha,
        estimate="Hodges-Lehmann shift",
    )  # fmt: skip


def unpaired(
    a: Any,
    b: Any,
    *,
    lower_is_better: bool,
    names: Sequence[str] = ("A", "B"),
    test: str = "permutation",
    alpha: float = ALPHA,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Verdict:
    """Compare A with B from independent runs (no run of A shares anything with one of B).

    Parameters
    ----------
    a, b
        Each side's runs (any numbers of them).
    lower_is_better
        The score's direction.
    names
        The two sides' names in the verdict.
    test
        ``"permutation"`` (default: the difference of means, exact over every
        split up to ``EXACT_MAX_SPLITS``; its CI) or ``"mann-whitney"``
        (exact U without ties, else permutation; CI of the Hodges-Lehmann
        shift from the pairwise differences).
    alpha, n_resamples, seed
        As :func:`paired`.

    Returns
    -------
    Verdict
    """
    x, y = _sample(a, "a"), _sample(b, "b")
    if test not in UNPAIRED_TESTS:
        raise ValueError(f"test must be one of {UNPAIRED_TESTS}, got {test!r}")
    lower, (name_a, name_b) = _direction(lower_is_better), _names(list(names))
    alpha, n_resamples = _alpha(alpha), _resamples(n_resamples)
    splits = math.comb(x.size + y.size, x.size)
    if test == "permutation":
        exact = splits <= EXACT_MAX_SPLITS
        p = float(permutation_pvalues(x, y, exact=exact, n_resamples=n_resamples, seed=seed))
        rng = np.random.default_rng(seed)
        low, high, level = _permutation_interval(x, y, alpha, exact, n_resamples, rng)
        total = splits if exact else n_resamples + 1
        how = f"exact, {total:,} splits" if exact else f"Monte Carlo, {n_resamples:,} splits"
        return Verdict(
            name_a, name_b, lower, float(x.mean() - y.mean()), low, high, p,
            f"permutation ({how})", x.size, y.size,
            max(min_p_unpaired(x.size, y.size), 0 if exact else 2 / total),
            _mc_error(p, total, exact), alpha, level=level,
        )  # fmt: skip
    p, how = _mann_whitney(x, y, n_resamples, seed)
    differences = (x[:, None] - y[None, :]).ravel()
    centre = float(np.median(differences))
    low, high = _invert(
        lambda s: _mann_whitney(x - s, y, n_resamples, seed)[0], differences, centre, alpha
    )
    return Verdict(
        name_a, name_b, lower, centre, low, high, p, f"Mann-Whitney U ({how})", x.size, y.size,
        min_p_unpaired(x.size, y.size), _mc_error(p, n_resamples + 1, how == "exact"), alpha,
        estimate="Hodges-Lehmann shift",
    )  # fmt: skip


# ---------------------------------------------------------------------------- Holm
def holm(p_values: Any) -> np.ndarray:
    """Return Holm's step-down adjusted p-values (same order as given).

    The i-th smallest p is multiplied by ``m - i + 1``, made non-decreasing
    and capped at 1; rejecting where the adjusted p is at most alpha keeps
    the chance of any false rejection among the m at most alpha, under any
    dependence between the tests (Holm 1979).

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_values must be a 1-D array of probabilities, got {p_values!r}")
    order = np.argsort(p, kind="stable")
    m = p.size
    steps = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = steps
    return adjusted


# ---------------------------------------------------------------------------- best of k
@dataclass(frozen=True)
class BestOf:
    """A cell's verdict: the best agent, and whether every other is clearly worse.

    Attributes
    ----------
    best
        The agent with the best estimate.
    comparisons
        The best against each other agent, Holm-adjusted over the cell (or
        over the page, read from a :class:`Page`).
    lower_is_better
        The score's direction.
    """

    best: str
    comparisons: tuple[Verdict, ...]
    lower_is_better: bool

    @property
    def tied(self) -> list[str]:
        """The agents the best is not significantly better than."""
        return [v.b for v in self.comparisons if v.winner != self.best]

    @property
    def clear(self) -> bool:
        """True when the best is significantly better than every other agent."""
        return not self.tied

    @property
    def text(self) -> str:
        """``"clearly lowest: X"`` or ``"tied for lowest: X with Y, Z"``."""
        word = "lowest" if self.lower_is_better else "highest"
        if self.clear:
            return f"clearly {word}: {self.best}"
        line = f"tied for {word}: {self.best} with {', '.join(self.tied)}"
        if not all(v.can_reject for v in self.comparisons):
            line += " (too few runs to ever name a winner)"
        return line

    def __str__(self) -> str:
        return self.text


def best_of(
    values: Mapping[str, Any],
    *,
    lower_is_better: bool,
    paired_runs: bool = True,
    test: str | None = None,
    alpha: float = ALPHA,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> BestOf:
    """Return a cell's :class:`BestOf`: the best agent against every other, Holm over the cell.

    Parameters
    ----------
    values
        Agent name -> its runs (paired: the same pairs in the same order for
        every agent).
    lower_is_better
        The score's direction.
    paired_runs
        Compare with :func:`paired` (default) or :func:`unpaired`.
    test
        The test name passed on (default: sign-flip / permutation).
    alpha, n_resamples, seed
        As :func:`paired`.

    Examples
    --------
    >>> runs = {"A": [1, 2, 3, 4, 5, 6, 7], "B": [2, 3, 4, 5, 6, 7, 8], "C": [1, 2, 3, 4, 5, 6, 8]}
    >>> cell = best_of(runs, lower_is_better=True)
    >>> cell.best, cell.tied, cell.text
    ('A', ['C'], 'tied for lowest: A with C')
    """
    if not isinstance(values, Mapping) or len(values) < 2:
        raise ValueError(f"values must map at least two agents to their runs, got {values!r}")
    lower = _direction(lower_is_better)
    samples = {str(name): _sample(runs, f"values[{name!r}]") for name, runs in values.items()}
    means = {name: float(runs.mean()) for name, runs in samples.items()}
    best = (min if lower else max)(means, key=means.__getitem__)
    compare = paired if paired_runs else unpaired
    options: dict[str, Any] = {} if test is None else {"test": test}
    raw = [
        compare(
            samples[best],
            runs,
            lower_is_better=lower,
            names=(best, name),
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
            **options,
        )  # fmt: skip
        for name, runs in samples.items()
        if name != best
    ]
    return BestOf(best, tuple(_adjusted(raw)), lower)


def _adjusted(verdicts: Sequence[Verdict]) -> list[Verdict]:
    if not verdicts:
        return []
    adjusted = holm([v.p_value for v in verdicts])
    return [
        replace(v, p_adjusted=float(p), family_size=len(verdicts))
        for v, p in zip(verdicts, adjusted, strict=True)
    ]


# ---------------------------------------------------------------------------- pages
@dataclass
class Page:
    """A page's verdicts, with Holm's correction over all of them applied when read.

    Add every comparison the page prints (:meth:`add`, :meth:`add_best`), then
    read :attr:`verdicts`, :attr:`bests` and :attr:`sentence`: each p-value
    is adjusted over the page's whole family, so the chance that the page
    names any false winner is at most ``alpha``.

    Examples
    --------
    >>> page = Page()
    >>> first = page.add(paired([1, 2, 3, 4, 5, 6, 7, 8], [2, 3, 4, 5, 6, 7, 8, 9],
    ...                         lower_is_better=True))
    >>> page.verdicts[first].winner, page.verdicts[first].family_size
    ('A', 1)
    """

    alpha: float = ALPHA
    _verdicts: list[Verdict] = field(default_factory=list)
    _bests: list[BestOf] = field(default_factory=list)

    def add(self, verdict: Verdict) -> int:
        """Add a comparison; return its index in :attr:`verdicts`."""
        if not isinstance(verdict, Verdict):
            raise TypeError(f"verdict must be a Verdict, got {verdict!r}")
        self._check_alpha(verdict)
        self._verdicts.append(replace(verdict, p_adjusted=None, family_size=1))
        return len(self._verdicts) - 1

    def add_best(self, best: BestOf) -> int:
        """Add a cell's :class:`BestOf` (its comparisons join the family); return its index."""
        if not isinstance(best, BestOf):
            raise TypeError(f"best must be a BestOf, got {best!r}")
        for verdict in best.comparisons:
            self._check_alpha(verdict)
        fresh = tuple(replace(v, p_adjusted=None, family_size=1) for v in best.comparisons)
        self._bests.append(replace(best, comparisons=fresh))
        return len(self._bests) - 1

    def _check_alpha(self, verdict: Verdict) -> None:
        if verdict.alpha != self.alpha:
            raise ValueError(
                f"verdict was made at alpha={verdict.alpha:g}, the page's alpha is {self.alpha:g}"
            )

    @property
    def size(self) -> int:
        """The number of comparisons Holm's correction runs over."""
        return len(self._verdicts) + sum(len(b.comparisons) for b in self._bests)

    def _resolve(self) -> tuple[list[Verdict], list[BestOf]]:
        flat = self._verdicts + [v for b in self._bests for v in b.comparisons]
        adjusted = iter(_adjusted(flat))
        verdicts = [next(adjusted) for _ in self._verdicts]
        bests = [
            replace(b, comparisons=tuple(next(adjusted) for _ in b.comparisons))
            for b in self._bests
        ]
        return verdicts, bests

    @property
    def verdicts(self) -> list[Verdict]:
        """The pairwise verdicts added, Holm-adjusted over the page."""
        return self._resolve()[0]

    @property
    def bests(self) -> list[BestOf]:
        """The cells' verdicts added, Holm-adjusted over the page."""
        return self._resolve()[1]

    def tally(self, agent: str) -> str:
        """Count ``agent``'s cells: ``"clearly lowest in a of n cells, tied for lowest in b"``."""
        bests = self.bests
        clear = sum(b.best == agent and b.clear for b in bests)
        tied = sum(agent == b.best and not b.clear or agent in b.tied for b in bests)
        word = "lowest" if not bests or bests[0].lower_is_better else "highest"
        return f"clearly {word} in {clear} of {len(bests)} cells, tied for {word} in {tied}"

    @property
    def sentence(self) -> str:
        """What the page says about its verdicts: the tests, the level and Holm's correction."""
        level = f"{1 - self.alpha:.0%}"
        return (
            f"A winner is named only where a two-sided test rejects 'no difference' at "
            f"{self.alpha:g} after Holm's correction over the page's {self.size} comparisons "
            f"(so the chance of naming any false winner on this page is at most "
            f"{self.alpha:.0%}); otherwise the verdict is 'tie (within noise)'. Paired runs "
            f"use exact sign-flip tests, independent runs exact permutation tests; intervals "
            f"are each comparison's own {level} CI (the test inverted, not Holm-adjusted)."
        )


# ---------------------------------------------------------------------------- the grader
@dataclass(frozen=True)
class Placement:
    """A submission placed among references: the verdicts and one sentence.

    Attributes
    ----------
    better, tied, worse
        References the submission is significantly better than, tied with,
        worse than (Holm over the references).
    verdicts
        The submission against each reference.
    """

    better: list[str]
    tied: list[str]
    worse: list[str]
    verdicts: list[Verdict]

    @property
    def sentence(self) -> str:
        """``"better than X; a tie with Y (within noise); worse than Z."`` and the test."""
        parts = []
        if self.better:
            parts.append(f"better than {', '.join(self.better)}")
        if self.tied:
            parts.append(f"a tie with {', '.join(self.tied)} (within noise)")
        if self.worse:
            parts.append(f"worse than {', '.join(self.worse)}")
        first = self.verdicts[0] if self.verdicts else None
        if first is None:
            return "no references to compare with."
        note = (
            f" (paired sign-flip tests over the {first.n} shared seeds, two-sided at "
            f"{first.alpha:g}, Holm over {len(self.verdicts)} references"
        )
        if not first.can_reject:
            note += f"; {first.n} seeds are too few to ever name a winner"
        return "; ".join(parts) + note + ")."


def place(
    yours: Any,
    references: Mapping[str, Any],
    *,
    lower_is_better: bool,
    name: str = "yours",
    alpha: float = ALPHA,
) -> Placement:
    """Place a submission among references from per-seed scores on the same seeds.

    ``yours`` and each reference's values are per seed, in the same seed
    order (the grader runs every agent on the same held-out seeds): each
    comparison is :func:`paired`, Holm-adjusted over the references.

    Examples
    --------
    >>> found = place([1.0, 2, 3, 4, 5, 6, 7, 8], {"Greedy": [2.0, 3, 4, 5, 6, 7, 8, 9],
    ...               "Same": [1.0, 2, 3, 4, 5, 6, 7, 8.5]}, lower_is_better=True)
    >>> found.better, found.tied
    (['Greedy'], ['Same'])
    """
    if not isinstance(references, Mapping):
        raise TypeError(f"references must map names to per-seed scores, got {references!r}")
    mine = _sample(yours, "yours")
    raw = [
        paired(mine, values, lower_is_better=lower_is_better, names=(name, str(ref)), alpha=alpha)
        for ref, values in references.items()
    ]
    verdicts = _adjusted(raw)
    groups: dict[str, list[str]] = {"better": [], "tied": [], "worse": []}
    for verdict in verdicts:
        key = "tied" if verdict.winner is None else "better" if verdict.winner == name else "worse"
        groups[key].append(verdict.b)
    return Placement(groups["better"], groups["tied"], groups["worse"], verdicts)
