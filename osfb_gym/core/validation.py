"""Validation helpers: every error names the parameter and what was expected.

Nothing here clips or coerces: a value is either accepted as it is (numpy
scalars count as the Python number they hold) or rejected with a
``TypeError`` (wrong kind) or ``ValueError`` (right kind, bad value).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

#: the exact types of an integer action as Python and RL libraries pass it: checked by
#: ``type(x) in INTEGER_TYPES`` on a step's fast path (bool and subclasses go the general way)
INTEGER_TYPES = frozenset(
    (int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp)
)


def check_int(
    value: Any,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """Return ``value`` as an ``int`` if it is an integer within bounds.

    Examples
    --------
    >>> check_int(3, "batch_size", minimum=1)
    3
    >>> check_int(0, "batch_size", minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_float(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite ``float`` within ``[low, high]``.

    The bounds are inclusive unless ``low_inclusive``/``high_inclusive`` say
    otherwise; NaN and infinities are always rejected.

    Examples
    --------
    >>> check_float(0.7, "cutoff_quantile", low=0, high=1, low_inclusive=False,
    ...             high_inclusive=False)
    0.7
    >>> check_float(float("nan"), "cutoff")
    Traceback (most recent call last):
    ...
    ValueError: cutoff must be a finite number, got nan
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        bound = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {bound} {low}, got {value}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        bound = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {bound} {high}, got {value}")
    return value


def check_data_home(data_home: Any, dataset: Any) -> str | None:
    """Return ``data_home``: None, or a folder (str) given together with a dataset.

    Examples
    --------
    >>> check_data_home(None, None) is None
    True
    >>> check_data_home("data", None)
    Traceback (most recent call last):
    ...
    ValueError: data_home applies with a dataset only, got data_home='data'
    """
    if data_home is not None and not isinstance(data_home, str):
        raise TypeError(f"data_home must be a path (str) or None, got {data_home!r}")
    if data_home is not None and dataset is None:
        raise ValueError(f"data_home applies with a dataset only, got data_home={data_home!r}")
    return data_home


def check_choice(value: Any, name: str, choices: Iterable[T]) -> T:
    """Return ``value`` if it is one of ``choices``, else raise naming them all.

    Examples
    --------
    >>> check_choice("logistic", "link", ("linear", "logistic"))
    'logistic'
    >>> check_choice("probit", "link", ("linear", "logistic"))
    Traceback (most recent call last):
    ...
    ValueError: link must be one of 'linear', 'logistic'; got 'probit'
    """
    options = tuple(choices)
    if not isinstance(value, str | int | float | type(None)) or value not in options:
        listed = ", ".join(repr(choice) for choice in options)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value  # type: ignore[return-value]


def check_binary_array(value: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``value`` as an ``int8`` array of 0/1 entries with exactly ``shape``.

    Integer, boolean and floating arrays are accepted when every entry is
    exactly 0 or 1 (stable-baselines3 hands MultiBinary actions over as
    floats); anything else, NaN included, is rejected, never rounded.

    Examples
    --------
    >>> check_binary_array([1, 0, 1], "action", (3,))
    array([1, 0, 1], dtype=int8)
    >>> check_binary_array([1, 0.5, 1], "action", (3,))
    Traceback (most recent call last):
    ...
    ValueError: action must hold only 0 and 1, got [1.  0.5 1. ]
    """
    try:
        array = np.asarray(value)
    except Exception as error:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of shape {shape}, got {value!r}") from error
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be an array of 0/1 numbers of shape {shape}, got dtype {array.dtype}"
        )
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {array.shape}")
    if not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name} must hold only 0 and 1, got {array}")
    return array.astype(np.int8)


def check_rejection_cost(d: Any, name: str = "d") -> float:
    """Return the rejection cost ``d`` if it lies in (0, 0.5), else raise naming ``name``.

    At ``d >= 0.5`` rejecting is never cheaper than guessing (a coin flip
    costs 0.5 in expectation), so the reject option is void; ``d = 0``
    would make rejecting free.

    Examples
    --------
    >>> check_rejection_cost(0.25)
    0.25
    >>> check_rejection_cost(0.5)
    Traceback (most recent call last):
    ...
    ValueError: d must be < 0.5, got 0.5
    """
    return check_float(d, name, low=0.0, high=0.5, low_inclusive=False, high_inclusive=False)
