"""Synthetic generators: seeded, documented parameters honoured, bad input named."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.data import make_glm, make_separable


@pytest.mark.parametrize("make", [make_glm, make_separable])
def test_same_seed_same_data_other_seed_other_data(make) -> None:  # type: ignore[no-untyped-def]
    first, again, other = make(300, 4, seed=3), make(300, 4, seed=3), make(300, 4, seed=4)
    assert np.array_equal(first.X, again.X) and np.array_equal(first.y, again.y)
    assert not np.array_equal(first.X, other.X)
    assert first.X.shape == (300, 4) and np.isfinite(first.X).all()
    assert {"origin", "license", "rows", "columns", "source", "preprocessing"} <= set(
        first.metadata
    )


def test_glm_logistic_labels_follow_the_hidden_parameter() -> None:
    data = make_glm(20000, 3, beta_norm=2.0, seed=0)
    beta = np.asarray(data.metadata["beta"])
    assert np.isclose(np.linalg.norm(beta), 2.0) and data.task == "binary"
    score = data.X @ beta
    assert data.y[score > 2].mean() > 0.85 and data.y[score < -2].mean() < 0.15


def test_glm_linear_is_a_regression_with_the_given_noise() -> None:
    data = make_glm(20000, 2, link="linear", noise_std=0.5, seed=1)
    residual = data.y - data.X @ np.asarray(data.metadata["beta"])
    assert data.task == "regression" and abs(residual.std() - 0.5) < 0.02


def test_separable_without_noise_is_separated_by_its_direction() -> None:
    data = make_separable(5000, 5, positive_rate=0.1, seed=2)
    margin = data.X @ np.asarray(data.metadata["direction"]) - data.metadata["threshold"]
    assert np.array_equal(data.y, (margin > 0).astype(float))
    assert abs(data.y.mean() - 0.1) < 0.02


def test_separable_noise_flips_that_share_of_labels() -> None:
    clean = make_separable(20000, 2, seed=5)
    noisy = make_separable(20000, 2, noise=0.2, seed=5)
    assert np.array_equal(clean.X, noisy.X)
    assert abs((clean.y != noisy.y).mean() - 0.2) < 0.015


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="link must be one of"):
        make_glm(10, 2, link="probit")
    with pytest.raises(ValueError, match="n must be >= 1"):
        make_glm(0, 2)
    with pytest.raises(TypeError, match="dim must be an integer"):
        make_separable(10, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive_rate must be < 1"):
        make_separable(10, 2, positive_rate=1.0)
    with pytest.raises(ValueError, match="noise must be <= 0.5"):
        make_separable(10, 2, noise=0.7)
