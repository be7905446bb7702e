"""Verdicts in groups: best-of-k cells, Holm's correction over a page, the grader's placement.

- :func:`holm`: Holm's step-down adjusted p-values.
- :func:`best_of` for a cell with several agents: "clearly lowest" when the
  best is significantly better than every other (Holm over the cell), else
  "tied for lowest with X, Y".
- :class:`Page` collects a page's verdicts and applies Holm's correction over
  all of them when they are read, with a sentence for the page saying so.
- :func:`place` is the grader's rule: a submission against each reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from osfb_gym.stats._checks import ALPHA, N_RESAMPLES, direction, sample
from osfb_gym.stats.verdicts import Verdict, paired, unpaired

__all__ = ["BestOf", "Page", "Placement", "best_of", "holm", "place"]


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
    def untestable(self) -> list[str]:
        """The agents the best could never be shown better than: too few runs for the test."""
        return [v.b for v in self.comparisons if v.winner != self.best and not v.can_reject]

    @property
    def text(self) -> str:
        """``"clearly lowest: X"``, ``"tied for lowest: X with Y, Z"`` or ``"cannot tell ..."``.

        An agent the test could never separate from the best (too few runs, or
        too many comparisons on the page, :attr:`Verdict.can_reject`) is not
        called tied: "cannot tell the lowest: X (best mean) against Y; too few
        runs to ever name a winner".
        """
        word = "lowest" if self.lower_is_better else "highest"
        if self.clear:
            return f"clearly {word}: {self.best}"
        untestable = self.untestable
        tied = [name for name in self.tied if name not in untestable]
        few = "too few runs to ever name a winner"
        if not tied:
            return (
                f"cannot tell the {word}: {self.best} (best mean) against "
                f"{', '.join(untestable)}; {few}"
            )
        line = f"tied for {word}: {self.best} with {', '.join(tied)}"
        if untestable:
            line += f"; cannot tell against {', '.join(untestable)} ({few})"
        return line

    def reading(self, agent: str) -> str | None:
        """Return how the cell places ``agent``: clear, tied, cannot tell, or None.

        ``"clear"``: the best, every other significantly worse; ``"cannot tell"``: not
        separated only from agents the test never could separate (:attr:`untestable`);
        ``"tied"``: not separated from one it could; None: significantly worse.
        """
        if agent == self.best:
            if self.clear:
                return "clear"
            return "cannot tell" if len(self.untestable) == len(self.tied) else "tied"
        if agent not in self.tied:
            return None
        return "cannot tell" if agent in self.untestable else "tied"

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
    lower = direction(lower_is_better)
    samples = {str(name): sample(runs, f"values[{name!r}]") for name, runs in values.items()}
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
    floors = holm([v.min_p for v in verdicts])  # the best case: every p at its floor
    return [
        replace(v, p_adjusted=float(p), family_size=len(verdicts), min_p_adjusted=float(f))
        for v, p, f in zip(verdicts, adjusted, floors, strict=True)
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
        self._verdicts.append(replace(verdict, p_adjusted=None, family_size=1, min_p_adjusted=None))
        return len(self._verdicts) - 1

    def add_best(self, best: BestOf) -> int:
        """Add a cell's :class:`BestOf` (its comparisons join the family); return its index."""
        if not isinstance(best, BestOf):
            raise TypeError(f"best must be a BestOf, got {best!r}")
        for verdict in best.comparisons:
            self._check_alpha(verdict)
        fresh = tuple(
            replace(v, p_adjusted=None, family_size=1, min_p_adjusted=None)
            for v in best.comparisons
        )
        self._bests.append(replace(best, comparisons=fresh))
        return len(self._bests) - 1

    def _check_alpha(self, verdict: Verdict) -> None:
        if verdict.alpha != self.alpha:
            raise ValueError(
                f"verdict was made at alpha={verdict.alpha:g}, the page's alpha is {self.alpha:g}"
            )

    def _family(self) -> list[Verdict]:
        """Every comparison of the page, unadjusted: the pairwise ones, then the cells'."""
        return self._verdicts + [v for b in self._bests for v in b.comparisons]

    @property
    def size(self) -> int:
        """The number of comparisons Holm's correction runs over."""
        return len(self._family())

    def _resolve(self) -> tuple[list[Verdict], list[BestOf]]:
        adjusted = iter(_adjusted(self._family()))
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
        """Count ``agent``'s cells: ``"clearly lowest in a of n cells, tied for lowest in b"``.

        A cell where ``agent`` is not separated only from agents the test never could
        separate (:meth:`BestOf.reading`) is not a tie: it adds ", cannot tell in c (too
        few runs)".
        """
        bests = self.bests
        found = [b.reading(agent) for b in bests]
        clear, tied, unknown = (found.count(w) for w in ("clear", "tied", "cannot tell"))
        word = "lowest" if not bests or bests[0].lower_is_better else "highest"
        line = f"clearly {word} in {clear} of {len(bests)} cells, tied for {word} in {tied}"
        return line + (f", cannot tell in {unknown} (too few runs)" if unknown else "")

    @property
    def sentence(self) -> str:
        """What the page says about its verdicts: the tests, the level and Holm's correction."""
        level = f"{1 - self.alpha:.0%}"
        otherwise = "'tie (within noise)'"
        if any(not v.can_reject for v in _adjusted(self._family())):
            otherwise += (
                ", or 'cannot tell' where the runs are too few for the test to ever reject "
                "(even the most one-sided outcome of this many runs would not pass)"
            )
        return (
            f"A winner is named only where a two-sided test rejects 'no difference' at "
            f"{self.alpha:g} after Holm's correction over the page's {self.size} comparisons "
            f"(so the chance of naming any false winner on this page is at most "
            f"{self.alpha:.0%}); otherwise the verdict is {otherwise}. Paired runs "
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
    mine = sample(yours, "yours")
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
