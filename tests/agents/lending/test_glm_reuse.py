"""The logistic refit's reused products equal the products they replace, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from agents.lending import glm
from agents.lending.glm import GLMEstimator, _newton, _sherman_morrison, fit_logistic_newton
from osfb_gym.core.links import get_link


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    x[:, -1] = 1.0
    beta = rng.standard_normal(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ beta))).astype(float)
    return x, y


@pytest.mark.parametrize("max_iter", [1, 2, 100])
@pytest.mark.parametrize("start", ["zero", "far"])
def test_newton_returns_the_scores_of_its_estimate(max_iter, start):
    x, y = _data(400, 7, seed=max_iter)
    # far from the optimum the first full step raises the objective: backtracking runs
    beta0 = None if start == "zero" else np.full(7, 8.0)
    beta, z = _newton(x, y, 0.5, beta0, max_iter=max_iter)
    assert np.array_equal(z, x @ beta)
    assert np.array_equal(beta, fit_logistic_newton(x, y, 0.5, beta0, max_iter=max_iter))


def _stream(model: GLMEstimator, x: np.ndarray, y: np.ndarray) -> GLMEstimator:
    model.add(x[:40], y[:40])
    model.fit()
    for i in range(40, len(y)):
        row = x[i].copy()
        u = model.A_inv.dot(row) if i % 2 else None  # with and without the decision's A^-1 x
        model.learn_row(row, float(y[i]), u)
    return model


def test_a_newton_refit_reusing_the_scores_equals_recomputing_them(monkeypatch):
    x, y = _data(900, 6, seed=3)
    reused = _stream(GLMEstimator(get_link("logistic"), 6, 1.0), x, y)
    assert reused.n_refits >= 10
    # the readable refit: the re-expansion computes x @ beta again
    monkeypatch.setattr(glm, "_newton", lambda *args, **kw: (_newton(*args, **kw)[0], None))
    recomputed = _stream(GLMEstimator(get_link("logistic"), 6, 1.0), x, y)
    assert reused.n_refits == recomputed.n_refits
    for name in ("beta", "A_inv", "_H", "_H_inv", "_s", "xty"):
        assert np.array_equal(getattr(reused, name), getattr(recomputed, name)), name


@pytest.mark.parametrize("given", [True, False])
def test_add_row_updates_A_inv_as_sherman_morrison(given):
    x, y = _data(60, 5, seed=8)
    model = GLMEstimator(get_link("logistic"), 5, 1.0)
    model.add(x[:20], y[:20])
    expected = model.A_inv.copy()
    for i in range(20, 60):
        u = model.A_inv.dot(x[i]) if given else None
        _sherman_morrison(expected, x[i], 1.0, None if u is None else u.copy())
        model.add_row(x[i], float(y[i]), u)
        assert np.array_equal(model.A_inv, expected)
