"""Comparison helpers shared by the test suites."""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# Tests find the offline copies of the real datasets through this variable
# only (``.ci/run`` sets it); without it, the tests that need them skip.
DATA_VARIABLE = "OSFB_DATA"


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
    elif isinstance(a, functools.partial) or isinstance(b, functools.partial):
        # a partial computes its function on its bound arguments: equal when all three are
        assert isinstance(a, functools.partial) and isinstance(b, functools.partial), (
            f"{path}: {a!r} != {b!r}"
        )
        assert_same(a.func, b.func, f"{path}.func")
        assert_same(a.args, b.args, f"{path}.args")
        assert_same(a.keywords, b.keywords, f"{path}.keywords")
    elif inspect.isfunction(a) or inspect.isfunction(b):
        # two closures made alike (a lambda per env) compute the same: same code, same
        # defaults, same values closed over; identity would call them different
        assert inspect.isfunction(a) and inspect.isfunction(b), f"{path}: {a!r} != {b!r}"
        assert a.__code__ == b.__code__, f"{path}: {a.__qualname__} != {b.__qualname__}"
        cells = [[cell.cell_contents for cell in f.__closure__ or ()] for f in (a, b)]
        assert_same(
            (a.__defaults__, a.__kwdefaults__, cells[0]),
            (b.__defaults__, b.__kwdefaults__, cells[1]),
            f"{path}.{a.__qualname__}",
        )
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def differs(a: Any, b: Any) -> bool:
    """Return True if :func:`assert_same` would fail."""
    try:
        assert_same(a, b)
    except AssertionError:
        return True
    return False


def osfb_data(*folders: str) -> Path | None:
    """Return ``$OSFB_DATA`` if it is set and holds every dataset folder named, else None."""
    value = os.environ.get(DATA_VARIABLE)
    if not value:
        return None
    root = Path(value).expanduser()
    return root if all((root / folder).is_dir() for folder in folders) else None


def skip_reason(*folders: str) -> str:
    """Why a test needing ``folders`` of the real datasets skips."""
    what = ", ".join(f"{folder}/" for folder in folders) or "the dataset folders"
    if not os.environ.get(DATA_VARIABLE):
        return f"{DATA_VARIABLE} is not set: set it to a directory holding {what}"
    return f"{DATA_VARIABLE}={os.environ[DATA_VARIABLE]} does not hold {what}"


def needs_osfb_data(*folders: str) -> pytest.MarkDecorator:
    """Mark a test that reads the real datasets ``folders`` from ``$OSFB_DATA``."""
    return pytest.mark.skipif(osfb_data(*folders) is None, reason=skip_reason(*folders))
