"""Statistics over runs for comparing agents, as ``rliable`` computes them.

Agarwal et al., "Deep reinforcement learning at the edge of the statistical
precipice", NeurIPS 2021. Scores are a ``(runs, tasks)`` matrix. Every
interval is a *stratified* percentile bootstrap, each task's runs resampled
within the task (:func:`scipy.stats.bootstrap`, one sample per task), so
the module needs neither ``rliable`` nor ``arch`` (rliable 1.2.0's bootstrap
needs ``arch`` 7 and ``pandas<3``). Fed the same scores, the point
estimates equal rliable's and the CIs agree within Monte-Carlo error
(``tests/osfb_gym/stats/test_rliable_agreement.py``).

The bootstrap is rliable's tool for several tasks. With one task and few
runs it is a plain bootstrap of a handful of numbers and its 95% intervals
under-cover (for normal data about 85% at 5 runs, 90% at 10);
:func:`aggregate` refuses it there and compares agents with the exact tests
of :mod:`osfb_gym.stats.verdicts` instead.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from osfb_gym.stats.paired import location_interval

#: bootstrap resamples (rliable's default is 50,000; 2,000 keeps a report fast; the
#: CI ends then move by a few % of their width between bootstrap seeds)
REPS = 2_000
LEVEL = 0.95
STATISTICS = ("iqm", "mean")
#: with one task, fewer runs than this get no bootstrap CI (:func:`aggregate`): the
#: percentile bootstrap of the mean of normal data covers 1 - 2 P(T_{n-1} > 1.96
#: sqrt((n - 1) / n)) of the time, 85% at 5 runs, 90% at 10, 93% at 20 (nominal 95%)
MIN_RUNS_ONE_TASK = 20


def _matrix(scores: Any, name: str = "scores") -> np.ndarray:
    array = np.asarray(scores, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must be a (runs, tasks) matrix, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds non-finite values")
    return array


def _tasks(matrix: np.ndarray) -> list[np.ndarray]:
    return [matrix[:, task] for task in range(matrix.shape[1])]


def iqm(scores: Any, axis: int | None = None) -> Any:
    """Return the interquartile mean: the mean of the middle 50% of the scores.

    Examples
    --------
    >>> float(iqm([1, 2, 3, 4, 5, 6, 7, 100]))  # the middle four: 3, 4, 5, 6
    4.5
    """
    return stats.trim_mean(np.asarray(scores, dtype=float), 0.25, axis=axis)


def _estimate(
    samples: Sequence[np.ndarray], statistic: Callable[..., Any], reps: int, seed: int, level: float
) -> tuple[float, float, float]:
    """Return the statistic of ``samples`` and its stratified percentile bootstrap CI."""
    value = float(statistic(*samples))
    if any(sample.size < 2 for sample in samples):
        return value, float("nan"), float("nan")  # no spread to resample from
    if all(np.ptp(sample) == 0 for sample in samples):  # every resample gives the same value
        return value, value, value
    result = stats.bootstrap(
        tuple(samples),
        statistic,
        n_resamples=reps,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return value, float(result.confidence_interval.low), float(result.confidence_interval.high)


def interval(
    scores: Any, statistic: str = "iqm", *, reps: int = REPS, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """Return ``(value, low, high)``: the IQM or mean of ``scores`` over all runs and tasks, and CI.

    ``scores`` is ``(runs, tasks)`` (1-D: one task); ``reps``, ``seed`` and
    ``level`` are the bootstrap's. With fewer than two runs a task has no
    spread to resample: the CI is NaN.

    Examples
    --------
    >>> interval([2.0, 2.0, 2.0], "mean")
    (2.0, 2.0, 2.0)
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")

    def over_tasks(*samples: np.ndarray, axis: int = -1) -> Any:
        joined = np.concatenate(samples, axis=axis)  # every run of every task
        return iqm(joined, axis=axis) if statistic == "iqm" else np.mean(joined, axis=axis)

    return _estimate(_tasks(_matrix(scores)), over_tasks, reps, seed, level)


def probability_of_improvement(
    x: Any,
    y: Any,
    *,
    lower_is_better: bool = False,
    reps: int = REPS,
    seed: int = 0,
    level: float = LEVEL,
) -> tuple[float, float, float]:
    """Return ``(P, low, high)``: P(a run of X beats a run of Y), averaged over tasks, and its CI.

    Per task the Mann-Whitney U statistic over ``n m`` (ties count one half),
    as ``rliable.metrics.probability_of_improvement``; the CI resamples X's
    and Y's runs of each task independently.

    Examples
    --------
    >>> probability_of_improvement([1.0, 2.0], [0.0, 3.0])[0]  # 1>0, 2>0 of four pairs
    0.5
    """
    a, b = _matrix(x, "x"), _matrix(y, "y")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x and y need the same tasks, got {a.shape[1]} and {b.shape[1]}")
    tasks, sign = a.shape[1], -1.0 if lower_is_better else 1.0

    def average(*samples: np.ndarray, axis: int = -1) -> Any:
        total = 0.0
        for x, y in zip(samples[:tasks], samples[tasks:], strict=True):
            x, y = sign * np.moveaxis(x, axis, -1), sign * np.moveaxis(y, axis, -1)
            greater = (x[..., :, None] > y[..., None, :]).mean(axis=(-2, -1))
            ties = (x[..., :, None] == y[..., None, :]).mean(axis=(-2, -1))
            total = total + greater + 0.5 * ties  # the Mann-Whitney U / (n m) of the task
        return total / tasks

    return _estimate(_tasks(a) + _tasks(b), average, reps, seed, level)


def _fraction(*samples: np.ndarray, axis: int = -1, tau: float, lower: bool) -> Any:
    better = [(s <= tau) if lower else (s > tau) for s in samples]
    return np.mean([np.mean(b, axis=axis) for b in better], axis=0)


def performance_profile(
    scores: Any,
    taus: Any,
    *,
    lower_is_better: bool = False,
    reps: int = REPS,
    seed: int = 0,
    level: float = LEVEL,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the run-score distribution at thresholds ``taus`` with CIs: ``(value, low, high)``.

    The fraction of all runs (each task weighted equally) better than
    ``tau``: above it, as in ``rliable``, or at most ``tau`` when
    ``lower_is_better``. Threshold ``i`` is bootstrapped from ``seed + i``.

    Examples
    --------
    >>> performance_profile([[0.0], [0.5], [1.0], [2.0]], [0.5], lower_is_better=True)[0].tolist()
    [0.5]
    """
    samples = _tasks(_matrix(scores))
    found = [
        _estimate(
            samples,
            functools.partial(_fraction, tau=float(tau), lower=lower_is_better),
            reps,
            seed + index,
            level,
        )
        for index, tau in enumerate(np.asarray(taus, dtype=float).ravel())
    ]
    values, lows, highs = np.asarray(found, dtype=float).reshape(-1, 3).T
    return values, lows, highs


@dataclass(frozen=True)
class Estimate:
    """An aggregate over runs (and tasks) with its CI and how the CI was made.

    Attributes
    ----------
    value
        The IQM or mean.
    low, high
        The CI (NaN where none is given; inf where the exact interval is
        unbounded at this sample size).
    method
        ``"stratified bootstrap"``, ``"sign-flip (exact)"`` or ``"none"``.
    note
        Why a method was chosen, for the page (empty for the bootstrap).
    """

    value: float
    low: float
    high: float
    method: str
    note: str = ""

    def __iter__(self) -> Any:
        return iter((self.value, self.low, self.high))


def aggregate(
    scores: Any,
    statistic: str = "iqm",
    *,
    reps: int = REPS,
    seed: int = 0,
    level: float = LEVEL,
    min_runs_one_task: int = MIN_RUNS_ONE_TASK,
) -> Estimate:
    """Return the IQM or mean of ``scores`` with the CI that holds at its size.

    Several tasks, or one task with at least ``min_runs_one_task`` runs:
    rliable's stratified percentile bootstrap (:func:`interval`). One task
    with fewer runs: the bootstrap under-covers, so the mean gets the exact
    sign-flip interval of its centre (valid for scores symmetric about it;
    unbounded when the sample is too small, 5 runs at 95%) and the IQM no CI;
    the note says so, and comparisons go through
    :func:`osfb_gym.stats.verdicts.paired` / ``unpaired``.

    Examples
    --------
    >>> estimate = aggregate([0.1, 0.4, 0.2, 0.3, 0.5, 0.2], "mean")
    >>> estimate.method, round(estimate.value, 3)
    ('sign-flip (exact)', 0.283)
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if isinstance(min_runs_one_task, bool) or not isinstance(min_runs_one_task, int):
        raise TypeError(f"min_runs_one_task must be an int, got {min_runs_one_task!r}")
    matrix = _matrix(scores)
    runs, tasks = matrix.shape
    if tasks > 1 or runs >= min_runs_one_task:
        value, low, high = interval(matrix, statistic, reps=reps, seed=seed, level=level)
        return Estimate(value, low, high, "stratified bootstrap")
    why = f"one task with {runs} runs: a bootstrap CI would under-cover, so none is given"
    if statistic == "iqm":
        return Estimate(float(iqm(matrix)), math.nan, math.nan, "none", why + " for the IQM")
    low, high = location_interval(matrix[:, 0], alpha=1 - level, seed=seed)
    note = why + "; the mean's CI is the exact sign-flip interval (scores symmetric about it)"
    if not math.isfinite(low):
        note += f", unbounded at {runs} runs"
    return Estimate(float(matrix.mean()), low, high, "sign-flip (exact)", note)
