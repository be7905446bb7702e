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


def test_close_floats_pass_within_the_stated_ulps_or_atol_and_fail_beyond():
    from tests.helpers import EPS, assert_close, eps_of_largest

    one = np.array([1.0, 2.0, np.nan])
    assert_close(one, np.array([np.nextafter(1.0, 2.0), 2.0, np.nan]), ulps=1)
    assert_close(1e-17, 0.0, ulps=0, atol=eps_of_largest([1.0]))  # near zero: the atol
    assert eps_of_largest([np.inf, -3.0, np.nan], factor=2) == 6 * EPS
    for bad, why in (
        (np.array([1.0 + 1e-12, 2.0, np.nan]), "ULP"),
        (np.array([1.0, 2.0, 3.0]), "NaNs differ"),
        (one.astype(np.float32), "float64"),
    ):
        try:
            assert_close(one, bad, ulps=8, path="x")
        except AssertionError as error:
            assert why in str(error)
        else:
            raise AssertionError(f"{bad} passed")
    # discrete outcomes and structure compare exactly
    assert differs_close({"a": (1, 2.0)}, {"a": (2, 2.0)})
    assert differs_close({"a": 1}, {"b": 1})
    assert differs_close(np.array([True]), np.array([False]))


def differs_close(a, b) -> bool:
    from tests.helpers import assert_close

    try:
        assert_close(a, b)
    except AssertionError:
        return True
    return False


def test_the_skip_reason_is_the_data_layers_wording(monkeypatch, tmp_path):
    from osfb_gym.data.sources import where_to_put
    from tests.helpers import skip_reason

    monkeypatch.delenv("OSFB_DATA", raising=False)
    reason = skip_reason("german_credit")
    assert reason.startswith("the real datasets this test reads not found")
    assert "OSFB_DATA is not set" in reason and where_to_put(["german_credit"]) in reason
    assert "--data-home <dir>" in reason and "shared" not in reason
    monkeypatch.setenv("OSFB_DATA", str(tmp_path))
    reason = skip_reason("german_credit", "adult")
    assert f"looked in: {tmp_path / 'german_credit'}, {tmp_path / 'adult'}" in reason
