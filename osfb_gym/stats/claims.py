"""What a page says about a paper's claim, read from the claim's verdicts.

A claim ("A beats B", "A beats B and C", "A within 0.02 of B", "A beats B in
most cells") is decided only by :class:`~osfb_gym.stats.verdicts.Verdict`
objects, Holm-adjusted over their page (:class:`~osfb_gym.stats.page.Page`):

- ``"reproduced"``: every verdict names the side the claim says wins;
- ``"not reproduced"``: some verdict names the other side (the test
  rejects in the opposite direction), or the claim fails even if every
  undecided comparison went its way;
- ``"cannot tell at n=5"``: undecided, and the sample is too small for
  the test to ever reject (5 pairs: smallest two-sided p 0.0625);
- ``"tie (within noise)"``: undecided at a sample size where the test
  could have rejected.

Examples
--------
>>> from osfb_gym.stats import paired
>>> clear = paired([1.0] * 8, [2.0] * 8, lower_is_better=True, names=("A", "B"))
>>> read([clear], ["A"]), read([clear], ["B"])
('reproduced', 'not reproduced')
>>> read([paired([1.0] * 5, [2.0] * 5, lower_is_better=True, names=("A", "B"))], ["A"])
'cannot tell at n=5'
"""

from __future__ import annotations

from collections.abc import Sequence

from osfb_gym.stats.page import BestOf
from osfb_gym.stats.verdicts import Verdict

__all__ = [
    "NOT_REPRODUCED",
    "REPRODUCED",
    "TIE",
    "at_least",
    "cannot_tell",
    "ci_text",
    "combine",
    "count",
    "read",
    "read_best",
]

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
TIE = "tie (within noise)"


def cannot_tell(n: int) -> str:
    """Return the reading of a claim whose sample can never reject: ``"cannot tell at n=5"``."""
    return f"cannot tell at n={n}"


def ci_text(verdict: Verdict, shift: float = 0.0) -> str:
    """Return a comparison's mean difference and CI as a claim's measured text shows them.

    ``shift`` is added to both (a claim "A > B + 0.1" tests A - 0.1 against B);
    where the sample cannot reach a ``1 - alpha`` CI, the level reached follows.

    >>> from osfb_gym.stats import paired
    >>> ci_text(paired([1.0, 2, 3, 4, 5], [2.0, 3, 4, 5, 7], lower_is_better=True))
    '-1.200 [-2, -1] (0.9375 CI)'
    """
    low, high = verdict.low + shift, verdict.high + shift
    text = f"{verdict.effect + shift:+.3f} [{low:.3g}, {high:.3g}]"
    full = verdict.level >= 1 - verdict.alpha - 1e-12
    return text if full else f"{text} ({verdict.level:.4g} CI)"


def _undecided(verdicts: Sequence[Verdict]) -> str:
    small = [v for v in verdicts if not v.can_reject]
    return cannot_tell(min(v.n for v in small)) if small else TIE


def read(verdicts: Sequence[Verdict], expected: Sequence[str]) -> str:
    """Read a claim that names a winner in each of ``verdicts``.

    Parameters
    ----------
    verdicts
        The claim's comparisons (from the page, so Holm-adjusted).
    expected
        For each verdict, the side the claim says is better.

    Returns
    -------
    str
        :data:`REPRODUCED`, :data:`NOT_REPRODUCED`, :data:`TIE` or
        ``cannot_tell(n)``.
    """
    if len(verdicts) != len(expected) or not verdicts:
        raise ValueError(
            f"verdicts and expected must be non-empty and as long: {len(verdicts)}, {len(expected)}"
        )
    for verdict, side in zip(verdicts, expected, strict=True):
        if side not in (verdict.a, verdict.b):
            raise ValueError(f"expected side {side!r} is neither {verdict.a!r} nor {verdict.b!r}")
    if any(
        v.winner is not None and v.winner != side
        for v, side in zip(verdicts, expected, strict=True)
    ):
        return NOT_REPRODUCED
    if all(v.winner == side for v, side in zip(verdicts, expected, strict=True)):
        return REPRODUCED
    return _undecided([v for v, side in zip(verdicts, expected, strict=True) if v.winner != side])


def read_best(best: BestOf, expected: str) -> str:
    """Read the claim "``expected`` is the best of the cell" from the cell's :class:`BestOf`.

    Reproduced when the cell names ``expected`` clearly best, not reproduced
    when it names another, else undecided (cannot tell when a comparison
    could never reject).

    >>> from osfb_gym.stats import best_of
    >>> runs = {"A": [1.0, 2, 3, 4, 5, 6, 7, 8], "B": [2.0, 3, 4, 5, 6, 7, 8, 9]}
    >>> read_best(best_of(runs, lower_is_better=True), "A")
    'reproduced'
    """
    if best.clear:
        return REPRODUCED if best.best == expected else NOT_REPRODUCED
    return _undecided(best.comparisons)


def at_least(verdict: Verdict, bound: float) -> str:
    """Read the claim "A - B >= bound" (e.g. "within 0.02 F1": ``bound=-0.02``) from the CI.

    Reproduced when the verdict's CI (the test inverted, at ``1 - alpha``)
    lies at or above ``bound``; not reproduced when it lies below; else
    undecided (cannot tell when the sample cannot reach a ``1 - alpha`` CI).
    The CI is the comparison's own, not adjusted over the page.
    """
    full = verdict.level >= 1 - verdict.alpha - 1e-12
    if not full:
        return cannot_tell(verdict.n)
    if verdict.low >= bound:
        return REPRODUCED
    if verdict.high < bound:
        return NOT_REPRODUCED
    return TIE


def count(readings: Sequence[str], needed: int) -> tuple[str, str]:
    """Read a claim "in at least ``needed`` of the cells" from the cells' readings.

    Returns the reading and the count sentence ``"clearly in a of n, tied in
    b, opposite in c"``: reproduced when ``a >= needed``, not reproduced when
    even ``a + b < needed``, else undecided (cannot tell if any tied cell
    could never reject).
    """
    clear = sum(r == REPRODUCED for r in readings)
    opposite = sum(r == NOT_REPRODUCED for r in readings)
    undecided = [r for r in readings if r not in (REPRODUCED, NOT_REPRODUCED)]
    sentence = (
        f"clearly in {clear} of {len(readings)}, undecided in {len(undecided)}, "
        f"opposite in {opposite}"
    )
    if clear >= needed:
        return REPRODUCED, sentence
    if clear + len(undecided) < needed:
        return NOT_REPRODUCED, sentence
    small = [r for r in undecided if r.startswith("cannot tell")]
    return (small[0] if small else TIE), sentence


def combine(readings: Sequence[str]) -> str:
    """Read a claim made of several parts: not reproduced if any part is, reproduced if all are.

    Otherwise the first undecided part's reading (cannot tell, or tie).

    >>> combine([REPRODUCED, TIE]), combine([REPRODUCED, NOT_REPRODUCED, TIE])
    ('tie (within noise)', 'not reproduced')
    """
    if not readings:
        raise ValueError("readings must not be empty")
    if NOT_REPRODUCED in readings:
        return NOT_REPRODUCED
    undecided = [r for r in readings if r != REPRODUCED]
    return undecided[0] if undecided else REPRODUCED
