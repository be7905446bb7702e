"""The comparison helper the no-leak and determinism tests rest on."""

from __future__ import annotations

import functools

import numpy as np

from tests.helpers import assert_same, differs


class Metrics:
    def __init__(self, ks: tuple[int, ...] = (), restarts: int = 1) -> None:
        self.ks, self.restarts = ks, restarts


def scaled(factor: float):
    return lambda x: factor * x


def test_partials_are_equal_when_function_and_arguments_are() -> None:
    first = functools.partial(Metrics, ks=(1, 2), restarts=3)
    assert_same(first, functools.partial(Metrics, ks=(1, 2), restarts=3))
    assert_same(functools.partial(np.add, np.arange(3)), functools.partial(np.add, np.arange(3)))
    assert differs(first, functools.partial(Metrics, ks=(1, 2), restarts=4))
    assert differs(first, functools.partial(Metrics, (1, 2), restarts=3))  # args vs keywords
    assert differs(first, functools.partial(dict, ks=(1, 2), restarts=3))
    assert differs(first, Metrics)  # a partial is not its bare function, either way round
    assert differs(Metrics, first)


def test_closures_made_alike_are_equal_and_differ_by_what_they_close_over() -> None:
    assert_same(scaled(2.0), scaled(2.0))  # two objects, one computation
    assert differs(scaled(2.0), scaled(3.0))
    assert differs(scaled(2.0), lambda x: 2.0 * x)  # other code
    assert_same(functools.partial(scaled(2.0)), functools.partial(scaled(2.0)))
    assert differs(functools.partial(scaled(2.0)), functools.partial(scaled(3.0)))


def test_arrays_compare_values_and_dtypes_nan_included() -> None:
    assert_same({"x": np.array([1.0, np.nan])}, {"x": np.array([1.0, np.nan])})
    assert differs(np.array([1, 2]), np.array([1.0, 2.0]))
    assert differs(float("nan"), 1.0)
