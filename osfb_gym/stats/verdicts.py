"""Verdicts: who wins, or "tie (within noise)", from calibrated paired and unpaired tests.

Every "A beats B", "lowest" or "tie" the project prints is a :class:`Verdict`
made here (DESIGN section 8):

- :func:`paired` where both sides ran on the same worlds, splits or test
  episodes: the exact sign-flip test of the mean difference or Wilcoxon's
  signed-rank test (:mod:`osfb_gym.stats.paired`);
- :func:`unpaired` otherwise: the exact permutation test of the difference
  of means or Mann-Whitney's U (:mod:`osfb_gym.stats.unpaired`).

Each CI is its test inverted (:mod:`osfb_gym.stats.intervals`), so it
excludes 0 exactly when the test rejects. Best-of-k cells, Holm's correction
over a page and the grader's placement are in :mod:`osfb_gym.stats.page`.

A winner is named only when the two-sided p-value (after Holm, on a page)
is at most ``alpha``; the side with the better estimate wins. With too few
pairs the test can never reject (5 pairs: the smallest two-sided p is
``2 / 2^5 = 0.0625 > 0.05``), and the verdict says "cannot tell" and why,
not "tie", which is kept for a test that could have rejected and did not.
The false-positive rates of these rules at the suites' sample sizes are
measured in ``tests/osfb_gym/stats/test_calibration.py`` (docs/verdicts.md).

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from osfb_gym.stats import paired as paired_tests
from osfb_gym.stats import unpaired as unpaired_tests
from osfb_gym.stats._checks import (
    ALPHA,
    N_RESAMPLES,
    alpha_level,
    direction,
    resamples,
    sample,
    two_names,
)
from osfb_gym.stats.intervals import Outcome

__all__ = [
    "ALPHA",
    "N_RESAMPLES",
    "PAIRED_TESTS",
    "UNPAIRED_TESTS",
    "Verdict",
    "paired",
    "unpaired",
]

_Test = Callable[..., Outcome]
#: the paired tests by name: differences, alpha, n_resamples, seed -> Outcome
PAIRED_TESTS: dict[str, _Test] = {
    "sign-flip": paired_tests.sign_flip,
    "wilcoxon": paired_tests.signed_rank,
}
#: the unpaired tests by name: a, b, alpha, n_resamples, seed -> Outcome
UNPAIRED_TESTS: dict[str, _Test] = {
    "permutation": unpaired_tests.permutation,
    "mann-whitney": unpaired_tests.rank_sum,
}


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
    min_p_adjusted
        The smallest adjusted p-value this comparison can reach on its page:
        Holm's correction applied to every comparison's ``min_p`` at once (Holm's
        adjusted p-values never fall when a raw one rises, so this is the best
        case). None off a page.
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
    min_p_adjusted: float | None = None
    estimate: str = "mean difference"
    level: float = 1 - ALPHA

    @property
    def p(self) -> float:
        """The p-value the decision uses: Holm's adjusted one on a page, else the raw one."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def floor(self) -> float:
        """The smallest p-value the decision can ever see: ``min_p``, Holm-adjusted on a page."""
        return self.min_p if self.min_p_adjusted is None else self.min_p_adjusted

    @property
    def can_reject(self) -> bool:
        """False when the sample is too small for the decision to ever reject at ``alpha``.

        On a page this counts the page's correction: 130 comparisons of 10 pairs
        each (smallest p 2/1024) can never pass Holm, although each alone could.
        """
        return self.floor <= self.alpha

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
        n=20 pairs"``, ``"tie (within noise): A - B = ..."``, or ``"cannot tell: A - B =
        ...; too few runs to ever name a winner (smallest p 0.0625 > 0.05)"`` where the
        sample could never reject (:attr:`can_reject`).
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
        if self.can_reject:
            return f"tie (within noise): {self.a} - {self.b} = {details}"
        # not a tie: the test could not have said otherwise (claims read it "cannot tell")
        return (
            f"cannot tell: {self.a} - {self.b} = {details}; too few runs to ever name a winner "
            f"(smallest p {self._floor_text()} > {self.alpha:.3g})"
        )

    def _floor_text(self) -> str:
        if self.min_p_adjusted is None or self.family_size == 1:
            return f"{self.min_p:.3g}"
        return f"{self.min_p:.3g}, {self.min_p_adjusted:.3g} after Holm over {self.family_size}"

    def __str__(self) -> str:
        return self.text


def _verdict(
    names: tuple[str, str], lower: bool, outcome: Outcome, n: int, n_b: int | None, alpha: float
) -> Verdict:
    return Verdict(
        *names, lower, outcome.effect, outcome.low, outcome.high,
        outcome.p_value, outcome.test, n, n_b, outcome.min_p, outcome.mc_error, alpha,
        estimate=outcome.estimate, level=outcome.level,
    )  # fmt: skip


def _choose(test: Any, tests: dict[str, _Test]) -> _Test:
    if not isinstance(test, str) or test not in tests:
        raise ValueError(f"test must be one of {tuple(tests)}, got {test!r}")
    return tests[test]


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
    x, y = sample(a, "a"), sample(b, "b")
    if x.size != y.size:
        raise ValueError(f"a and b must have one value per pair: {x.size} and {y.size} values")
    run = _choose(test, PAIRED_TESTS)
    lower, sides = direction(lower_is_better), two_names(list(names))
    alpha, n_resamples = alpha_level(alpha), resamples(n_resamples)
    outcome = run(x - y, alpha, n_resamples, seed)
    return _verdict(sides, lower, outcome, x.size, None, alpha)


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
    x, y = sample(a, "a"), sample(b, "b")
    run = _choose(test, UNPAIRED_TESTS)
    lower, sides = direction(lower_is_better), two_names(list(names))
    alpha, n_resamples = alpha_level(alpha), resamples(n_resamples)
    outcome = run(x, y, alpha, n_resamples, seed)
    return _verdict(sides, lower, outcome, x.size, y.size, alpha)
