"""The one home of the project's statistics (DESIGN section 8).

- :mod:`osfb_gym.stats.verdicts`: who wins or "tie (within noise)":
  :class:`Verdict`, :func:`paired` and :func:`unpaired`, built on the tests
  of :mod:`osfb_gym.stats.paired` (sign-flip, signed-rank) and
  :mod:`osfb_gym.stats.unpaired` (permutation, Mann-Whitney) and the one CI
  inversion per kind of test in :mod:`osfb_gym.stats.intervals`.
- :mod:`osfb_gym.stats.page`: best-of-k cells, Holm's correction over a
  page, the grader's placement.
- :mod:`osfb_gym.stats.aggregates`: rliable's aggregates over runs and tasks
  (IQM, mean, probability of improvement, performance profiles) with
  stratified-bootstrap CIs, and :func:`~osfb_gym.stats.aggregates.aggregate`,
  which refuses the bootstrap where it under-covers (one task, few runs).

Only NumPy and SciPy are imported: the grader and every report can use it
without the benchmark engine.
"""

from __future__ import annotations

from osfb_gym.stats.aggregates import (
    Estimate,
    aggregate,
    interval,
    iqm,
    performance_profile,
    probability_of_improvement,
)
from osfb_gym.stats.page import BestOf, Page, Placement, best_of, holm, place
from osfb_gym.stats.verdicts import ALPHA, Verdict, paired, unpaired

__all__ = [
    "ALPHA",
    "BestOf",
    "Estimate",
    "Page",
    "Placement",
    "Verdict",
    "aggregate",
    "best_of",
    "holm",
    "interval",
    "iqm",
    "paired",
    "performance_profile",
    "place",
    "probability_of_improvement",
    "unpaired",
]
