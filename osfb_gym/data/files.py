"""A user's own CSV file as a :class:`~osfb_gym.data.Dataset`.

The file is read with pandas; the target is binarised only when that is
unambiguous (0/1 or boolean values) or the caller names the positive class,
and nothing is silently dropped or imputed: every problem raises a
``ValueError`` (``FileNotFoundError`` for a missing path) naming the column
or parameter at fault.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.core.validation import check_choice
from osfb_gym.data.dataset import TASKS, Dataset, from_arrays
from osfb_gym.data.encoding import encode

CATEGORICAL = ("onehot", "error")


def _binary_target(column: pd.Series, target: str, positive: Any) -> np.ndarray:
    values = column.unique().tolist()
    if positive is not None:
        if positive not in values:
            raise ValueError(
                f"positive={positive!r} is not a value of target column {target!r}; "
                f"its values are {sorted(map(str, values))[:10]}"
            )
        y = (column == positive).to_numpy(dtype=float)
    elif pd.api.types.is_bool_dtype(column) or set(values) <= {0, 1}:
        y = column.to_numpy(dtype=float)
    else:
        raise ValueError(
            f"target column {target!r} is not 0/1, its values are "
            f"{sorted(map(str, values))[:10]}; pass positive=<value> to say which maps to 1"
        )
    if len(np.unique(y)) < 2:
        raise ValueError(
            f"target column {target!r} must hold two classes, found only {values[:10]}"
        )
    return y


def _check_features(features: pd.DataFrame, categorical: str) -> None:
    for column in features.columns:
        series = features[column]
        missing = series.isna().to_numpy()
        numeric = pd.api.types.is_numeric_dtype(series)  # booleans count as 0/1
        if numeric and not pd.api.types.is_bool_dtype(series):
            missing = missing | ~np.isfinite(series.to_numpy(dtype=float))
        elif not numeric and categorical == "error":
            raise ValueError(
                f"feature column {column!r} is not numeric (e.g. {series.iloc[0]!r}); "
                "use categorical='onehot' to one-hot encode it"
            )
        elif not numeric:
            # Numbers with a stray word ("?", "abc") are a corrupt numeric
            # column, not a category per value: say where instead of encoding it.
            parsed = pd.to_numeric(series, errors="coerce").notna().to_numpy()
            if parsed.any() and not parsed[~missing].all():
                row = int(np.flatnonzero(~parsed & ~missing)[0])
                raise ValueError(
                    f"feature column {column!r} holds numbers and also {series.iloc[row]!r} "
                    f"(line {row + 2}, data row {row}); expected numbers only, or categories "
                    "that are not numbers"
                )
        if missing.any():
            raise ValueError(
                f"feature column {column!r} has {int(missing.sum())} missing or infinite "
                f"values, the first in data row {int(np.flatnonzero(missing)[0])}"
            )


def _read_frame(path: Path, sep: str) -> pd.DataFrame:
    """Read ``path`` with pandas; raise naming it if it is missing, empty or has no data rows."""
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r} not found (or not a file)")
    try:
        frame = pd.read_csv(path, sep=sep)
    except pd.errors.EmptyDataError:
        raise ValueError(f"path {str(path)!r} is empty: expected a header row and data") from None
    if frame.empty:
        raise ValueError(f"path {str(path)!r} has a header but no data rows")
    return frame


def _target(frame: pd.DataFrame, target: str, task: str, positive: Any, path: Path) -> np.ndarray:
    """Return the target column as floats: 0/1 for ``task="binary"``, numbers for regression."""
    if target not in frame.columns:
        raise ValueError(
            f"target column {target!r} not found in {path.name}; "
            f"available columns: {', '.join(map(str, frame.columns))}"
        )
    column = frame[target]
    if column.isna().any():
        raise ValueError(f"target column {target!r} has {int(column.isna().sum())} missing values")
    if task == "binary":
        return _binary_target(column, target, positive)
    numeric = pd.to_numeric(column, errors="coerce")
    if numeric.isna().any():
        raise ValueError(f"target column {target!r} must be numeric for task='regression'")
    return numeric.to_numpy(dtype=float)


def from_csv(
    path: str | os.PathLike[str],
    target: str,
    *,
    sep: str = ",",
    positive: Any = None,
    task: str = "binary",
    categorical: str = "onehot",
    name: str | None = None,
) -> Dataset:
    r"""Read a CSV file with a header row into a :class:`~osfb_gym.data.Dataset`.

    Parameters
    ----------
    path
        The file.
    target
        Name of the target column; every other column is a feature.
    sep
        Field separator, as for :func:`pandas.read_csv`.
    positive
        For ``task="binary"``: the target value that maps to 1 (every other
        value maps to 0). Needed unless the target is already 0/1 or boolean.
    task
        ``"binary"`` or ``"regression"`` (the target read as numbers).
    categorical
        ``"onehot"``: non-numeric feature columns become ``column=value``
        indicators; ``"error"``: a non-numeric feature column raises.
    name
        Dataset name; defaults to the file name without extension.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     file = Path(tmp) / "loans.csv"
    ...     _ = file.write_text("income,region,repaid\n3.5,north,yes\n1.0,south,no\n")
    ...     data = from_csv(file, "repaid", positive="yes")
    >>> data.feature_names, data.y.tolist()
    (('income', 'region=north', 'region=south'), [1.0, 0.0])
    """
    task = check_choice(task, "task", TASKS)
    categorical = check_choice(categorical, "categorical", CATEGORICAL)
    path = Path(path)
    frame = _read_frame(path, sep)
    y = _target(frame, target, task, positive, path)
    features = frame.drop(columns=[target])
    if features.shape[1] == 0:
        raise ValueError(f"{path.name} has no feature columns besides target {target!r}")
    _check_features(features, categorical)
    X, names = encode(features)
    return from_arrays(
        X,
        y,
        name=name if name is not None else path.stem,
        feature_names=names,
        target=target,
        task=task,
        metadata={
            "origin": "user file",
            "license": "unknown (the user's file)",
            "source": str(path),
            "preprocessing": "read with pandas; non-numeric features one-hot encoded"
            + ("" if positive is None else f"; y = 1 where {target} == {positive!r}"),
        },
    )
