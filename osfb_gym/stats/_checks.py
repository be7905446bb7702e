"""The checks and defaults every test of :mod:`osfb_gym.stats` shares."""

from __future__ import annotations

from typing import Any

import numpy as np

#: two-sided level of every verdict (family-wise on a :class:`~osfb_gym.stats.page.Page`)
ALPHA = 0.05
#: random sign patterns / permutations beyond the exact sizes: the p-value's
#: Monte-Carlo standard error is at most 0.5 / sqrt(N_RESAMPLES) = 0.0035, and
#: about 0.0015 near p = 0.05
N_RESAMPLES = 20_000


def sample(values: Any, name: str, minimum: int = 1) -> np.ndarray:
    """Return ``values`` as a finite 1-D float array of at least ``minimum`` values."""
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


def alpha_level(alpha: Any) -> float:
    """Return ``alpha`` as a float in (0, 1)."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)):
        raise TypeError(f"alpha must be a float in (0, 1), got {alpha!r}")
    if not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


def direction(lower_is_better: Any) -> bool:
    """Return ``lower_is_better`` as a bool (refusing anything but a bool)."""
    if not isinstance(lower_is_better, (bool, np.bool_)):
        raise TypeError(f"lower_is_better must be True or False, got {lower_is_better!r}")
    return bool(lower_is_better)


def two_names(names: Any) -> tuple[str, str]:
    """Return the two sides' names."""
    if (
        not isinstance(names, (tuple, list))
        or len(names) != 2
        or not all(isinstance(name, str) for name in names)
    ):
        raise TypeError(f"names must be two strings (a, b), got {names!r}")
    return str(names[0]), str(names[1])


def resamples(n_resamples: Any) -> int:
    """Return ``n_resamples`` as an int of at least 100."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise TypeError(f"n_resamples must be an int >= 100, got {n_resamples!r}")
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
    return int(n_resamples)


def tolerance(values: np.ndarray) -> np.ndarray:
    """Return the tolerance within which two sums count as equal (rounding)."""
    return 1e-9 * np.maximum(np.abs(values).sum(axis=-1, keepdims=True), 1e-300)


def has_ties(values: np.ndarray) -> bool:
    """Return True when two of ``values`` are equal."""
    return bool(np.unique(values).size < values.size)
