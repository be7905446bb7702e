"""The reject-option surrogates: values at known points, gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from agents.reject.losses import (
    double_ramp_gradient,
    double_ramp_loss,
    double_sigmoid_gradient,
    double_sigmoid_loss,
    query_probability,
)
from osfb_gym.core.validation import check_rejection_cost
from osfb_gym.envs.reject import PREDICT_NEGATIVE, PREDICT_POSITIVE, REJECT, decision_loss


def reject_loss(z, rho, d):
    """``L_d`` at margins ``z`` (label +1, score z): the env's loss of the decision of eq. 1."""
    decisions = np.where(z > rho, PREDICT_POSITIVE, np.where(z < -rho, PREDICT_NEGATIVE, REJECT))
    return np.array([decision_loss(int(a), 1, d) for a in decisions])


RNG = np.random.default_rng(0)
Z = RNG.uniform(-5, 5, 400)
RHO = RNG.uniform(0, 3, 400)
H = 1e-6


def finite_difference(loss, z, rho, **kw):
    dz = (loss(z + H, rho, **kw) - loss(z - H, rho, **kw)) / (2 * H)
    drho = (loss(z, rho + H, **kw) - loss(z, rho - H, **kw)) / (2 * H)
    return dz, drho


@pytest.mark.parametrize("d", [0.1, 0.25, 0.4])
@pytest.mark.parametrize("gamma", [0.5, 2.0, 8.0])
def test_double_sigmoid_gradient_matches_finite_differences(d, gamma):
    numeric = finite_difference(double_sigmoid_loss, Z, RHO, d=d, gamma=gamma)
    analytic = double_sigmoid_gradient(Z, RHO, d, gamma)
    for a, n in zip(analytic, numeric, strict=True):
        np.testing.assert_allclose(a, n, atol=1e-6)


@pytest.mark.parametrize("d", [0.1, 0.25, 0.4])
def test_double_ramp_gradient_matches_finite_differences_away_from_kinks(d):
    kinks = np.stack([Z - RHO - 1, Z - RHO + 1, Z + RHO - 1, Z + RHO + 1])
    smooth = np.abs(kinks).min(axis=0) > 1e-3
    assert smooth.sum() > 350
    numeric = finite_difference(double_ramp_loss, Z[smooth], RHO[smooth], d=d)
    analytic = double_ramp_gradient(Z[smooth], RHO[smooth], d)
    for a, n in zip(analytic, numeric, strict=True):
        np.testing.assert_allclose(a, n, atol=1e-6)
    # both ramps are active somewhere in the sample, overlapping ones too (rho < 1)
    dz = analytic[0]
    assert {-d, -(1 - d), -1.0} <= set(np.round(dz, 12).tolist())


def test_reject_loss_has_the_three_outcomes_of_the_decision_rule():
    d = 0.3
    rho = 1.0
    # correct beyond rho, rejected on [-rho, rho] (boundaries included), wrong below -rho
    z = np.array([1.01, 1.0, 0.0, -1.0, -1.01])
    np.testing.assert_array_equal(reject_loss(z, rho, d), [0.0, d, d, d, 1.0])


@pytest.mark.parametrize("d", [0.1, 0.25, 0.4])
def test_surrogates_bound_their_limits(d):
    # far from the ramps, L_dr is twice L_d; L_ds tends to the same
    rho = 3.0
    z = np.array([50.0, 0.0, -50.0])
    np.testing.assert_allclose(double_ramp_loss(z, rho, d), 2 * reject_loss(z, rho, d))
    np.testing.assert_allclose(
        double_sigmoid_loss(z, 30.0, d, gamma=2.0), 2 * reject_loss(z, 30.0, d), atol=1e-12
    )
    assert np.all(double_ramp_loss(Z, RHO, d) >= 0)
    assert np.all(double_ramp_loss(Z, RHO, d) <= 2 + 1e-12)


def test_query_probability_peaks_at_the_two_transitions():
    rho = 1.5
    f = np.linspace(-6, 6, 1201)
    p = query_probability(f, rho, gamma=2.0)
    assert p.max() == pytest.approx(1.0)
    peaks = f[np.isclose(p, 1.0)]
    np.testing.assert_allclose(np.sort(np.abs(peaks)), [rho, rho])
    assert p[np.abs(f).argmin()] < 1.0 and p.min() > 0.0


@pytest.mark.parametrize("d", [0.0, 0.5, 0.7, -0.1, float("nan")])
def test_rejection_cost_outside_the_open_interval_is_refused(d):
    with pytest.raises(ValueError, match="d must"):
        check_rejection_cost(d)
