"""Comparison helpers shared by the test suites."""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from osfb_gym.data.sources import missing_data_message

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


#: float64's machine epsilon, the unit the cross-implementation bounds are stated in
EPS = float(np.finfo(np.float64).eps)


def assert_close(
    actual: Any,
    desired: Any,
    *,
    ulps: int = 4,
    atol: float = 0.0,
    rtol: float = 0.0,
    path: str = "",
) -> None:
    """Assert two nested results of two implementations agree within a stated bound.

    For comparisons of two *different* implementations (compiled against
    NumPy, a vector env against single envs, a fast path against the readable
    one), whose floats may differ in their last bits on another CPU: a
    compiler or a BLAS may fuse a multiply-add (FMA) or sum in another order
    depending on the SIMD width it dispatches to. The same code path run
    twice stays bit for bit (:func:`assert_same`).

    Floats (scalars and arrays, float64 and float32 each in its own ULPs)
    agree when within ``ulps`` units in the last place or within
    ``atol + rtol * |desired|`` (``atol`` for results of a cancellation, near
    zero, where ULPs mean nothing; ``rtol`` for results of many roundings);
    NaNs must sit at the same places. Integers, booleans, strings, dtypes,
    shapes and dict keys must be equal: a discrete outcome derived from
    floats (an argmin, a threshold decision) is compared by the caller,
    which knows the margin that decides it.
    """
    if isinstance(actual, dict):
        assert isinstance(desired, dict) and set(actual) == set(desired), (
            f"{path}: keys {set(actual)} != {set(desired)}"
        )
        for key in actual:
            assert_close(
                actual[key], desired[key], ulps=ulps, atol=atol, rtol=rtol, path=f"{path}.{key}"
            )
    elif isinstance(actual, list | tuple) and not isinstance(desired, np.ndarray):
        assert isinstance(desired, list | tuple) and len(actual) == len(desired), (
            f"{path}: lengths differ"
        )
        for i, (x, y) in enumerate(zip(actual, desired, strict=True)):
            assert_close(x, y, ulps=ulps, atol=atol, rtol=rtol, path=f"{path}[{i}]")
    elif _is_float(actual) or _is_float(desired):
        a, b = np.asarray(actual), np.asarray(desired)
        assert a.dtype == b.dtype and a.shape == b.shape, (
            f"{path}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        )
        nan = np.isnan(a)
        np.testing.assert_array_equal(nan, np.isnan(b), err_msg=f"{path}: NaNs differ")
        a, b = a[~nan], b[~nan]
        with np.errstate(invalid="ignore", over="ignore"):
            near = (a == b) | (np.abs(a - b) <= atol + rtol * np.abs(b))
        if not near.all():
            try:
                np.testing.assert_array_max_ulp(a[~near], b[~near], maxulp=ulps, dtype=a.dtype)
            except AssertionError as error:
                raise AssertionError(f"{path}: beyond atol={atol:g}: {error}") from None
    elif isinstance(actual, np.ndarray) or isinstance(desired, np.ndarray):
        np.testing.assert_array_equal(np.asarray(actual), np.asarray(desired), err_msg=path)
        assert np.asarray(actual).dtype == np.asarray(desired).dtype, f"{path}: dtypes differ"
    else:
        assert actual == desired, f"{path}: {actual!r} != {desired!r}"


#: Episodes of two implementations of one learner (replicas or shared states against
#: agents alone, a vector env against single envs): estimates after up to ~1,000
#: rank-one updates or refits, each rounding within a few EPS and compounding with the
#: conditioning of the design (kappa up to ~1e4 for the papers' l2 = 1e-6): within
#: T kappa EPS ~ 1e-9 relative; 1e-8 leaves a margin. 0 was measured on the CPUs tried.
EPISODE_RTOL = 1e-8


def assert_episodes_agree(
    actual: Any, desired: Any, *, rtol: float = EPISODE_RTOL, path: str = ""
) -> None:
    """Assert two implementations' :class:`~osfb_gym.runner.Trajectory` agree.

    Actions (and so what was revealed) must be equal: a decision is a score
    against a cutoff, which another rounding flips only if the score lies
    within the two paths' difference (~1e-12 relative) of the cutoff: about
    1e-12 per decision, < 1e-7 over the ~10^4 decisions of these tests,
    while a wrong decision rule flips many. Rewards, losses, metrics and
    curves agree within ``rtol`` (sums of many terms: ``rtol`` of each, or of
    the largest where they cancel).
    """
    np.testing.assert_array_equal(actual.actions, desired.actions, err_msg=f"{path}: actions")
    np.testing.assert_array_equal(actual.n_revealed, desired.n_revealed, err_msg=path)
    for name in ("rewards", "oracle_loss", "metrics", "curves"):
        a, b = getattr(actual, name), getattr(desired, name)
        scale = eps_of_largest(b if not isinstance(b, dict) else list(_floats(b)), 1.0) / EPS
        assert_close(a, b, ulps=0, atol=rtol * scale, rtol=rtol, path=f"{path}.{name}")


def _floats(values: dict[str, Any]) -> Any:
    for value in values.values():
        if _is_float(value):
            yield from np.ravel(value)


def eps_of_largest(values: Any, factor: float = 16.0) -> float:
    """``factor`` EPS of the largest finite magnitude in ``values``: an absolute bound.

    For results of a cancellation (a loss near zero, a difference of totals),
    whose rounding error is a few EPS of the terms, not of the result.
    """
    array = np.asarray(values)
    if array.dtype.kind not in "fiub":  # text, objects: nothing rounds
        return 0.0
    finite = np.abs(array.astype(float))
    finite = finite[np.isfinite(finite)]
    return factor * EPS * (float(finite.max()) if finite.size else 0.0)


def _is_float(value: Any) -> bool:
    return isinstance(value, float | np.floating) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "f"
    )


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
    """Why a test needing ``folders`` of the real datasets skips.

    The data layer's own wording (:func:`osfb_gym.data.sources.missing_data_message`):
    what is missing, where it was looked for, and ``OSFB_DATA`` / ``--data-home``.
    """
    value = os.environ.get(DATA_VARIABLE)
    if not value:
        looked: list[object] = [f"{DATA_VARIABLE} is not set"]
    else:
        root = Path(value).expanduser()
        looked = [root / folder for folder in folders if not (root / folder).is_dir()] or [root]
    return missing_data_message("the real datasets this test reads", folders, looked)


def needs_osfb_data(*folders: str) -> pytest.MarkDecorator:
    """Mark a test that reads the real datasets ``folders`` from ``$OSFB_DATA``."""
    return pytest.mark.skipif(osfb_data(*folders) is None, reason=skip_reason(*folders))
