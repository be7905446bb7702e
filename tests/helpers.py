"""Comparison helpers shared by the test suites."""

from __future__ import annotations

from typing import Any

import numpy as np


def assert_same(a: Any, b: Any, path: str = "") -> None:
    """Assert that two nested structures of arrays/scalars are identical (NaN == NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {set(a)} != {set(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=path)
        assert np.asarray(a).dtype == np.asarray(b).dtype, f"{path}: dtypes differ"
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def differs(a: Any, b: Any) -> bool:
    """Return True if :func:`assert_same` would fail."""
    try:
        assert_same(a, b)
    except AssertionError:
        return True
    return False
