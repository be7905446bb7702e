"""Statistics over runs for comparing agents (Agarwal et al. 2021, rliable's methods).

Agarwal, Schwarzer, Castro, Courville, Bellemare: "Deep reinforcement learning
at the edge of the statistical precipice", NeurIPS 2021.

Scores come as a matrix ``(runs, tasks)`` (a task: a family, or a family
in one regime); the runs of one task are exchangeable (training seeds, or
fixed worlds each with its own training seed). Every interval is a
*stratified* percentile bootstrap over runs: each task's runs are resampled
within the task (:func:`scipy.stats.bootstrap` with one sample per task,
which resamples each sample independently), as ``rliable`` does.

(``rliable``'s own bootstrap, ``rliable.library``, imports the ``arch``
package, whose current release fails to import with the pandas here; its
statistics are the same few lines as below, so scipy does the bootstrap.)

- :func:`iqm`: the interquartile mean (25% trimmed mean over all runs and tasks);
- :func:`interval`: IQM or mean with its bootstrap CI;
- :func:`probability_of_improvement`: P(X better than Y), averaged over tasks,
  with its CI;
- :func:`performance_profile`: the fraction of runs at or better than each
  threshold tau, with CIs.

``lower_is_better`` flips what "better" means (a normalised regret here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats

#: bootstrap resamples (rliable's default is 50,000; 2,000 keeps a report fast and
#: the CI ends stable to about 1% of their width)
REPS = 2_000
LEVEL = 0.95
STATISTICS = ("iqm", "mean")


def _matrix(scores: Any, name: str = "scores") -> np.ndarray:
    array = np.asarray(scores, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must be a (runs, tasks) matrix, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds non-finite values")
    return array


def iqm(scores: Any, axis: int | None = None) -> Any:
    """Return the interquartile mean: the mean of the middle 50% of the scores.

    Examples
    --------
    >>> float(iqm([1, 2, 3, 4, 5, 6, 7, 100]))  # the middle four: 3, 4, 5, 6
    4.5
    """
    return stats.trim_mean(np.asarray(scores, dtype=float), 0.25, axis=axis)


def _statistic(name: str) -> Callable[..., Any]:
    if name not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {name!r}")

    def over_tasks(*samples: np.ndarray, axis: int = -1) -> Any:
        joined = np.concatenate(samples, axis=axis)  # every run of every task
        return iqm(joined, axis=axis) if name == "iqm" else np.mean(joined, axis=axis)

    return over_tasks


def _bootstrap(samples: Sequence[np.ndarray], statistic: Callable[..., Any], reps: int,
               seed: int, level: float) -> tuple[float, float]:  # fmt: skip
    if any(sample.size < 2 for sample in samples):
        return float("nan"), float("nan")  # no spread to resample from
    if all(np.ptp(sample) == 0 for sample in samples):  # every resample gives the same value
        value = float(statistic(*samples))
        return value, value
    result = stats.bootstrap(
        tuple(samples), statistic, n_resamples=reps, confidence_level=level,
        method="percentile", vectorized=True, rng=np.random.default_rng(seed),
    )  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def interval(
    scores: Any, statistic: str = "iqm", *, reps: int = REPS, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """Return ``(value, low, high)``: the IQM or mean of ``scores`` and its stratified bootstrap CI.

    Parameters
    ----------
    scores
        ``(runs, tasks)`` (a 1-D array is one task).
    statistic
        ``"iqm"`` or ``"mean"``, over all runs and tasks.
    reps, seed, level
        Bootstrap resamples, the generator's seed, the CI's level.

    With fewer than two runs a task has no spread to resample: the CI is NaN.

    Examples
    --------
    >>> interval([2.0, 2.0, 2.0], "mean")
    (2.0, 2.0, 2.0)
    """
    matrix = _matrix(scores)
    function = _statistic(statistic)
    samples = [matrix[:, task] for task in range(matrix.shape[1])]
    value = float(function(*samples))
    low, high = _bootstrap(samples, function, reps, seed, level)
    return value, low, high


def _improvement(tasks: int, lower_is_better: bool) -> Callable[..., Any]:
    sign = -1.0 if lower_is_better else 1.0

    def average(*samples: np.ndarray, axis: int = -1) -> Any:
        total = 0.0
        for x, y in zip(samples[:tasks], samples[tasks:], strict=True):
            x, y = sign * np.moveaxis(x, axis, -1), sign * np.moveaxis(y, axis, -1)
            greater = (x[..., :, None] > y[..., None, :]).mean(axis=(-2, -1))
            ties = (x[..., :, None] == y[..., None, :]).mean(axis=(-2, -1))
            total = total + greater + 0.5 * ties  # the Mann-Whitney U / (n m) of the task
        return total / tasks

    return average


def probability_of_improvement(
    x: Any, y: Any, *, lower_is_better: bool = False, reps: int = REPS, seed: int = 0,
    level: float = LEVEL,
) -> tuple[float, float, float]:  # fmt: skip
    """Return ``(P, low, high)``: P(a run of X beats a run of Y), averaged over tasks, and its CI.

    Per task the probability is the Mann-Whitney U statistic over ``n m``
    (ties count one half), as in ``rliable.metrics.probability_of_improvement``;
    the CI resamples X's and Y's runs of each task independently.

    Examples
    --------
    >>> probability_of_improvement([1.0, 2.0], [0.0, 3.0])[0]  # 1>0, 2>0 of four pairs
    0.5
    """
    a, b = _matrix(x, "x"), _matrix(y, "y")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"x and y need the same tasks, got {a.shape[1]} and {b.shape[1]}")
    tasks = a.shape[1]
    function = _improvement(tasks, lower_is_better)
    samples = [a[:, t] for t in range(tasks)] + [b[:, t] for t in range(tasks)]
    value = float(function(*samples))
    low, high = _bootstrap(samples, function, reps, seed, level)
    return value, low, high


def performance_profile(
    scores: Any, taus: Any, *, lower_is_better: bool = False, reps: int = REPS, seed: int = 0,
    level: float = LEVEL,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Return the run-score distribution at thresholds ``taus`` with CIs: ``(value, low, high)``.

    The fraction of all runs (over tasks, each task weighted equally)
    scoring better than ``tau``: above it (``lower_is_better=False``, as
    in ``rliable``), or at most ``tau`` (``lower_is_better=True``).

    Examples
    --------
    >>> performance_profile([[0.0], [0.5], [1.0], [2.0]], [0.5], lower_is_better=True)[0].tolist()
    [0.5]
    """
    matrix = _matrix(scores)
    thresholds = np.asarray(taus, dtype=float).ravel()
    values, lows, highs = [], [], []
    for index, tau in enumerate(thresholds):

        def fraction(*samples: np.ndarray, axis: int = -1, tau: float = float(tau)) -> Any:
            better = [(s <= tau) if lower_is_better else (s > tau) for s in samples]
            return np.mean([np.mean(b, axis=axis) for b in better], axis=0)

        samples = [matrix[:, task] for task in range(matrix.shape[1])]
        values.append(float(fraction(*samples)))
        low, high = _bootstrap(samples, fraction, reps, seed + index, level)
        lows.append(low)
        highs.append(high)
    return np.asarray(values), np.asarray(lows), np.asarray(highs)
