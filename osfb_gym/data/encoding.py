"""How the categorical columns of a table become numbers: one-hot or native integer codes.

Following Section 8 of Jiang, Jiang and Pacchiano (2021), which uses all
examples of each dataset: numeric columns become floats, and every
non-numeric column (plus integer-coded categoricals the dataset names) is
either one-hot encoded into ``column=value`` features, one per value, none
dropped, or kept as one column of integer codes (``encoding="native"``,
the form UCI's integer-coded files and OpenML's ordinal codes have). A
missing categorical value is a category of its own, ``"?"``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np
import pandas as pd

from osfb_gym.data.checks import MISSING_CATEGORY


def _natural_key(value: str) -> tuple[int, float, str]:
    """Order category labels numerically when they are numbers ("2" before "10")."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _as_numeric(series: pd.Series) -> pd.Series | None:
    """Return ``series`` as float if every present value is a number, else None."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    converted = pd.to_numeric(series, errors="coerce")
    if converted.notna().sum() != series.notna().sum():
        return None
    return converted.astype(float)


#: how categorical columns become numbers: one 0/1 column per value, or one code column
ENCODINGS = ("onehot", "native")


def native_codes(series: pd.Series, code: Callable[[str], float] | None = None) -> np.ndarray:
    """Return one number per row for a categorical column: its integer code.

    The file's own numbers where the values are numbers (Australian's
    ``A4``, Churn's ``area_code``); else ``code(value)`` where the dataset
    has a documented coding (German's ``A43`` is value 3 of attribute 4);
    else the position of the value among the column's values in sorted
    order (numbers numerically), as scikit-learn's ``OrdinalEncoder`` and
    pandas' category codes number them; a missing value is the category
    ``"?"``, numbered like the others.

    Examples
    --------
    >>> native_codes(pd.Series(["b", "a", None, "b"])).tolist()
    [2.0, 1.0, 0.0, 2.0]
    >>> native_codes(pd.Series(["A43", "A410"]), lambda v: float(v[2:])).tolist()
    [3.0, 10.0]
    """
    numeric = _as_numeric(series)
    if numeric is not None and not numeric.isna().any():  # the file's own integer codes
        return numeric.to_numpy(dtype=float)
    labels = series.astype(object).where(series.notna(), MISSING_CATEGORY).astype(str)
    if code is not None:
        coded = np.array([code(value) for value in labels], dtype=float)
        if not np.isnan(coded).any():
            return coded
    values = sorted(labels.unique(), key=_natural_key)
    return pd.Categorical(labels, categories=values).codes.astype(float)


def encode(
    features: pd.DataFrame,
    categorical: Collection[str] = (),
    encoding: str = "onehot",
    code: Callable[[str], float] | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Encode the non-numeric (and the named) columns; numeric ones become floats.

    Parameters
    ----------
    features
        The feature columns.
    categorical
        Columns to encode as categories even though their values are
        numbers (integer-coded categories).
    encoding
        ``"onehot"``: one 0/1 column per value, none dropped. ``"native"``:
        one column of integer codes per categorical (:func:`native_codes`),
        the form UCI's integer-coded files and OpenML's ordinal codes have.
    code
        The dataset's own coding of a category label, for ``"native"``
        (NaN for a label it does not code: the column is numbered in
        sorted order instead).

    Returns
    -------
    X, names
        The ``float64`` matrix and one name per column; one-hot columns read
        ``column=value``, ordered by value (numerically when values are
        numbers). A missing categorical value becomes the category ``"?"``;
        a missing numeric value stays NaN for the caller to reject.

    Examples
    --------
    >>> frame = pd.DataFrame({"age": [30, 40], "sex": ["F", "M"], "code": [2, 10]})
    >>> X, names = encode(frame, categorical=["code"])
    >>> names
    ['age', 'sex=F', 'sex=M', 'code=2', 'code=10']
    >>> X.tolist()
    [[30.0, 1.0, 0.0, 1.0, 0.0], [40.0, 0.0, 1.0, 0.0, 1.0]]
    """
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for column in features.columns:
        series = features[column]
        numeric = None if column in categorical else _as_numeric(series)
        if numeric is not None:
            blocks.append(numeric.to_numpy(dtype=float)[:, None])
            names.append(str(column))
            continue
        if encoding == "native":
            blocks.append(native_codes(series, code)[:, None])
            names.append(str(column))
            continue
        labels = series.astype(object).where(series.notna(), MISSING_CATEGORY).astype(str)
        values = sorted(labels.unique(), key=_natural_key)
        codes = pd.Categorical(labels, categories=values).codes
        blocks.append(np.eye(len(values))[codes])
        names.extend(f"{column}={value}" for value in values)
    return np.hstack(blocks), names
