"""Links, validation, seeding and the channels."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import osfb_gym
from osfb_gym.core import (
    HideOracle,
    check_binary_array,
    check_choice,
    check_float,
    check_int,
    get_link,
    world_rng,
)

scores = st.floats(-50, 50)


@given(scores, scores)
def test_links_are_increasing_and_invertible(a, b):
    for name in ("linear", "logistic"):
        link = get_link(name)
        lo, hi = min(a, b), max(a, b)
        assert link.mean(lo) <= link.mean(hi)
        assert 0 < link.derivative(a) <= link.lipschitz * (1 + 1e-12)
        if name == "linear" or abs(a) < 15:  # beyond, 1 - mu(a) has too few bits left
            assert link.inverse(link.mean(a)) == pytest.approx(a, abs=1e-6)


def test_logistic_does_not_overflow():
    link = get_link("logistic")
    values = link.mean(np.array([-1e4, 0.0, 1e4]))
    np.testing.assert_array_equal(values, [0.0, 0.5, 1.0])


def test_links_reject_unknown_names():
    with pytest.raises(ValueError, match="link must be one of 'linear', 'logistic'"):
        get_link("probit")


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda: check_int(True, "n"), TypeError, "n must be an integer"),
        (lambda: check_int(2.0, "n"), TypeError, "n must be an integer"),
        (lambda: check_int(5, "n", maximum=4), ValueError, "n must be <= 4"),
        (lambda: check_float("1", "c"), TypeError, "c must be a real number"),
        (lambda: check_float(np.inf, "c"), ValueError, "c must be a finite number"),
        (lambda: check_float(0.0, "q", low=0, low_inclusive=False), ValueError, "q must be > 0"),
        (lambda: check_choice([1], "mode", ("a",)), ValueError, "mode must be one of"),
        (lambda: check_binary_array([[1]], "action", (1,)), ValueError, "shape"),
        (lambda: check_binary_array(["a"], "action", (1,)), TypeError, "action"),
    ],
)
def test_validation_errors_name_the_parameter(call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_validation_accepts_numpy_scalars_unchanged():
    assert check_int(np.int64(3), "n") == 3 and type(check_int(np.int64(3), "n")) is int
    assert check_float(np.float32(0.5), "x") == 0.5
    np.testing.assert_array_equal(check_binary_array(np.array([1.0, 0.0]), "a", (2,)), [1, 0])


def test_world_rng_fixed_or_drawn_from_the_reset_stream():
    a = world_rng(None, np.random.default_rng(0)).random()
    b = world_rng(None, np.random.default_rng(0)).random()
    c = world_rng(None, np.random.default_rng(1)).random()
    assert a == b != c


def test_hide_oracle_strips_reset_and_step_and_keeps_nothing():
    env = HideOracle(gym.make("OneSidedLending-v0"))
    _, info = env.reset(seed=0)
    assert "oracle" not in info
    _, _, _, _, info = env.step([1])
    assert "oracle" not in info
    assert not hasattr(env, "last_oracle")
    assert set(info["feedback"]) == {"y", "revealed", "valid"}


def test_import_registers_and_module_prefix_works():
    assert "OneSidedLending-v0" in osfb_gym.register_all()
    assert gym.make("osfb_gym:OneSidedLending-v0").spec.id == "OneSidedLending-v0"
