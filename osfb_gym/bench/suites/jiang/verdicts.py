"""Jiang Tables 1-2 read with the verdict module: each cell "clearly lowest" or "tied".

Each method at its tuned alpha has one cumulative loss per split; split s of
every method reads the same stream (the same seeded split of the data), so a
cell is a paired best-of-k (:func:`osfb_gym.stats.best_of`): the lowest mean
against every other method by exact sign-flip tests over the splits, with
Holm's correction over every comparison of the page (:class:`osfb_gym.stats.Page`).
A cell says "clearly lowest: X" only when X is significantly lower than
every other method, else "tied (within noise)" with the methods it cannot be
told from, and the paired CI of the lowest against its closest competitor; with
splits too few for the test to ever reject, "cannot tell" rather than "tied".

Also here: the statement that the published scale is not recoverable, the
check that every method's grid reaches no exploration, and the sensitivity
table of the unstated choices (:mod:`osfb_gym.bench.suites.jiang.sensitivity`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from osfb_gym.bench.suites.claims import by_seed
from osfb_gym.stats import ALPHA, BestOf, Page, best_of
from osfb_gym.stats.paired import min_p_paired, pairs_needed

__all__ = [
    "NO_EXPLORATION",
    "CellVerdicts",
    "cell_text",
    "cell_verdicts",
    "grid_note",
    "grid_text",
    "scale_note",
    "tally",
]

#: the alpha (Adaptive's rho) at which every jiang method is greedy: no exploration
NO_EXPLORATION = 0.0
#: the methods' names on the pages
LABELS = {
    "greedy": "Greedy",
    "eps-greedy": "eps-greedy",
    "os-eps-greedy": "one-sided eps-greedy",
    "noise": "Noise",
    "os-noise": "one-sided Noise",
    "margin": "Margin",
    "ours": "Adaptive (ours)",
}


def per_split(best: pd.DataFrame, metric: str = "cumulative_loss") -> dict[str, pd.Series]:
    """Return each method's ``metric`` per split (seed) at its tuned alpha, for one cell."""
    return {
        str(method): rows.set_index("seed")[metric].sort_index()
        for method, rows in best.groupby("method", sort=False)
    }


class CellVerdicts:
    """The page's cells: each a paired best-of-k, Holm over all of the page's comparisons."""

    def __init__(self) -> None:
        self.page = Page()
        self.cells: list[tuple[str, float]] = []

    def add(self, dataset: str, cutoff: float, runs: Mapping[str, pd.Series]) -> int | None:
        """Add a cell from each method's per-split losses; None when fewer than two methods."""
        aligned = dict(zip(runs, by_seed(*runs.values()), strict=True))
        if len(aligned) < 2 or not len(next(iter(aligned.values()))):
            return None
        self.cells.append((dataset, cutoff))
        return self.page.add_best(best_of(aligned, lower_is_better=True))

    @property
    def bests(self) -> list[BestOf]:
        """The cells' verdicts, Holm-adjusted over the page."""
        return self.page.bests


def cell_verdicts(best: pd.DataFrame) -> tuple[CellVerdicts, dict[tuple[str, float], int]]:
    """Return the page of cell verdicts of tuned rows and each (dataset, cutoff)'s index in it.

    ``best`` holds the rows of each method at its tuned alpha (columns
    ``dataset``, ``cutoff``, ``method``, ``seed``, ``cumulative_loss``).
    """
    verdicts, index = CellVerdicts(), {}
    for (dataset, cutoff), part in best.groupby(["dataset", "cutoff"], sort=False):
        found = verdicts.add(str(dataset), float(cutoff), per_split(part))
        if found is not None:
            index[str(dataset), float(cutoff)] = found
    return verdicts, index


def cell_text(cell: BestOf) -> str:
    """Return a cell's verdict: "clearly lowest: ours" or "tied (within noise): ours with ...".

    With the paired CI of the lowest against its closest competitor (the
    comparison with the largest Holm-adjusted p-value).
    """
    closest = max(cell.comparisons, key=lambda v: (v.p, -abs(v.effect)))
    ci = (
        f"{closest.a} - {closest.b} {closest.effect:+.3g} [{closest.low:.3g}, "
        f"{closest.high:.3g}] ({closest.level:.4g} CI of this pair alone), Holm p={closest.p:.2g}"
    )
    if cell.clear:
        return f"clearly lowest: {cell.best} ({ci})"
    if cell.reading(cell.best) == "cannot tell":
        return (
            f"cannot tell (too few splits to ever name a winner): {cell.best} (lowest mean) "
            f"against {', '.join(cell.tied)} ({ci})"
        )
    return f"tied (within noise): {cell.best} with {', '.join(cell.tied)} ({ci})"


def tally(verdicts: CellVerdicts, methods: Sequence[str]) -> str:
    """Count the cells per method: clearly lowest, tied for lowest; and the cells with no winner."""
    bests = verdicts.bests
    parts = []
    for method in methods:
        found = [b.reading(method) for b in bests]
        clear, tied, unknown = (found.count(w) for w in ("clear", "tied", "cannot tell"))
        if clear or tied or unknown:
            parts.append(
                f"{LABELS.get(method, method)} clearly lowest in {clear}, tied for lowest in {tied}"
                + (f", cannot tell in {unknown}" if unknown else "")
            )
    readings = [b.reading(b.best) for b in bests]
    ties, unknown = readings.count("tied"), readings.count("cannot tell")
    never = f", {unknown} cannot be told (too few splits to ever name a winner)" if unknown else ""
    return (
        f"Of {len(bests)} cells, {readings.count('clear')} have a clearly lowest method and "
        f"{ties} are ties (within noise){never}: " + "; ".join(parts) + "."
    )


def power_note(verdicts: CellVerdicts) -> str:
    """Say what the page's splits and Holm family allow, and the test."""
    bests = verdicts.bests
    if not bests:
        return ""
    n = bests[0].comparisons[0].n
    m = verdicts.page.size
    needed = pairs_needed(m)
    can = "can" if min_p_paired(n) * m <= ALPHA else "cannot"
    return (
        f"Each cell compares the lowest mean with every other method over the {n} splits, "
        f"paired by split (split s of every method reads the same stream), by exact sign-flip "
        f"tests; Holm's correction runs over the page's {m} comparisons. With {n} splits the "
        f"smallest two-sided p is {min_p_paired(n):.3g}, so a cell {can} be clearly lowest "
        f"on this page (the fewest splits that can: {needed}). Alpha is tuned on the same "
        f"splits (the paper's protocol), which favours the tuned methods over greedy. A "
        f"cell's interval is of its one comparison, not adjusted for the page's {m}; the "
        f"verdict reads the Holm-adjusted p, so an interval can exclude 0 beside a tie."
    )


def grid_text(alphas: Sequence[float]) -> str:
    """``"{0, 2^-10, ..., 2^3}"``: the grid as the page prints it."""
    return "{" + ", ".join("0" if a == 0 else f"2^{math.log2(a):g}" for a in sorted(alphas)) + "}"


def grid_note(alphas: Sequence[float], tuned_methods: Sequence[str]) -> str:
    """Say whether every tuned method's grid reaches no exploration (alpha = 0).

    At alpha = 0 every jiang method is greedy (eps-greedy's coin never fires,
    the noise and margin are 0, Adaptive's width is 0), so a grid that holds
    0 lets tuning switch exploration off; a grid whose floor is above 0 forces
    every method to explore, and not equally: at 2^-10 eps-greedy's coin has
    all but stopped while Adaptive's width (times sqrt(x^T A^-1 x), large
    early) still explores.
    """
    names = ", ".join(LABELS.get(m, m) for m in tuned_methods)
    if NO_EXPLORATION in set(alphas):
        return (
            f"Every tuned method's grid ({names}) holds alpha = 0, where the method is greedy: "
            "none is forced to explore."
        )
    floor = grid_text([min(alphas)])[1:-1]
    return (
        f"The grid's floor is {floor}, not 0: no tuned method ({names}) can switch "
        "exploration off, and the floor does not mean the same for every method (at 2^-10 "
        "eps-greedy's coin has all but stopped while Adaptive's width, large early, still "
        "explores). These rows await a run with alpha = 0 in every grid."
    )


def scale_note(ratios: Sequence[float]) -> str:
    """Return the plain statement that the paper's loss scale is not recoverable from its text."""
    shown = ""
    if len(ratios):
        shown = (
            f" Our greedy loss is {min(ratios):.2g} to {max(ratios):.2g} times the paper's "
            "across the cells it reports."
        )
    return (
        "The published scale is not recoverable from the paper's text: it leaves open the "
        "encoding of categories, the feature scaling, the solver, the alpha range, how alpha "
        "enters Adaptive's width and what t counts, and its appendices (with the data "
        f"preparation) are not in our copy.{shown} Compare which methods are lowest and the "
        "changes relative to greedy, not the losses themselves; the sensitivity table "
        "(docs/reproductions/jiang.md) shows which of these choices moves which cell."
    )
