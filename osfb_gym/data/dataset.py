"""The ``Dataset`` record every loader returns, and ``from_arrays`` for a user's own data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

TASKS = ("binary", "regression")


@dataclass(frozen=True)
class Dataset:
    """Numeric features and a target, ready for an environment.

    Attributes
    ----------
    name
        The name ``load`` knows it by (or the user's label).
    X
        Features, ``float64`` of shape ``(n, d)``, all finite.
    y
        Target of shape ``(n,)``: 0/1 (``float64``) for ``task="binary"``,
        real for ``task="regression"``.
    feature_names
        One name per column of ``X`` (one-hot columns read ``column=value``).
    target
        The name of the target column in the source.
    task
        ``"binary"`` or ``"regression"``.
    metadata
        Provenance: ``origin``, ``license``, ``rows``, ``columns``,
        ``source`` (the file or service it was read from), ``preprocessing``.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    target: str
    task: str = "binary"
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    def standardized(self) -> Dataset:
        """Return a copy with every feature at mean 0 and standard deviation 1.

        Constant columns are centred and left at scale 1, so no division by 0.
        """
        mean = self.X.mean(axis=0)
        std = self.X.std(axis=0)
        std[std == 0.0] = 1.0
        return replace(self, X=(self.X - mean) / std)

    def robust_scaled(self) -> Dataset:
        """Return a copy with every feature centred at its median and divided by its IQR.

        Scikit-learn's ``RobustScaler``: a few outliers (EEG Eye State's
        spikes) inflate a standard deviation until the bulk of a column sits
        near 0, and they move the median and the interquartile range far
        less. A column whose IQR is 0 (a rare 0/1 category) is divided by
        its standard deviation instead, a constant one by 1.

        Examples
        --------
        >>> data = from_arrays([[0.0], [1.0], [2.0], [3.0], [1000.0]], [0, 1, 0, 1, 0])
        >>> data.robust_scaled().X.ravel().tolist()
        [-1.0, -0.5, 0.0, 0.5, 499.0]
        """
        median = np.median(self.X, axis=0)
        q75, q25 = np.percentile(self.X, [75, 25], axis=0)
        scale = q75 - q25
        std = self.X.std(axis=0)
        scale = np.where(scale > 0.0, scale, np.where(std > 0.0, std, 1.0))
        return replace(self, X=(self.X - median) / scale)


def from_arrays(
    X: Any,
    y: Any,
    *,
    name: str = "arrays",
    feature_names: Sequence[str] | None = None,
    target: str = "y",
    task: str = "binary",
    metadata: Mapping[str, Any] | None = None,
) -> Dataset:
    """Wrap a user's feature matrix and target as a :class:`Dataset`.

    Examples
    --------
    >>> data = from_arrays([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    >>> data.n_samples, data.n_features, data.y.tolist()
    (2, 2, [0.0, 1.0])
    >>> from_arrays([[0.0], [1.0]], [1, 1])
    Traceback (most recent call last):
    ...
    ValueError: y must hold two classes for task='binary', found only [1.0]
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as error:
        raise TypeError(f"X must be numeric: {error}") from None
    try:
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as error:
        raise TypeError(f"y must be numeric: {error}") from None
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        row, column = map(int, np.argwhere(bad)[0])
        label = feature_names[column] if feature_names is not None else f"column {column}"
        raise ValueError(
            f"X must be finite: {int(bad.sum())} NaN or infinite values, "
            f"the first in {label} at row {row}"
        )
    if not np.isfinite(y).all():
        raise ValueError(f"y must be finite: {int((~np.isfinite(y)).sum())} NaN or infinite values")
    if task == "binary":
        classes = np.unique(y)
        if not np.isin(classes, (0.0, 1.0)).all():
            raise ValueError(
                f"y must be 0/1 for task='binary', found values {classes[:5].tolist()}"
            )
        if len(classes) < 2:
            raise ValueError(
                f"y must hold two classes for task='binary', found only {classes.tolist()}"
            )
    if feature_names is None:
        feature_names = tuple(f"x{j}" for j in range(X.shape[1]))
    feature_names = tuple(str(f) for f in feature_names)
    if len(feature_names) != X.shape[1]:
        raise ValueError(
            f"feature_names must have {X.shape[1]} entries (one per column), "
            f"got {len(feature_names)}"
        )
    info = {"rows": X.shape[0], "columns": X.shape[1], **(metadata or {})}
    return Dataset(name, X, y, feature_names, target, task, info)
