"""Synthetic datasets, seeded, for any machine and any size.

Both generators draw features ``x ~ N(0, I_d)`` and a hidden direction
uniformly on the sphere, so every direction is equally likely and the
score ``x . beta`` is exactly Gaussian; the hidden parameters go into
``metadata`` for evaluators (never into the features).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from osfb_gym.core.links import get_link
from osfb_gym.core.validation import check_float, check_int
from osfb_gym.data.dataset import Dataset, from_arrays

SYNTHETIC_METADATA = {"origin": "synthetic (osfb_gym.data.synthetic)", "license": "n/a"}


def _gaussian_design(
    n: int, dim: int, seed: int | np.random.Generator | None
) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """Return ``X ~ N(0, I)`` of shape ``(n, dim)``, a uniform unit direction and the generator."""
    n = check_int(n, "n", minimum=1)
    dim = check_int(dim, "dim", minimum=1)
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    X = rng.standard_normal((n, dim))
    # The hidden parameters travel in metadata; read-only like the record's arrays.
    direction.flags.writeable = False
    return X, direction, rng


def make_glm(
    n: int,
    dim: int,
    *,
    link: str = "logistic",
    beta_norm: float = 2.0,
    noise_std: float = 1.0,
    seed: int | np.random.Generator | None = None,
) -> Dataset:
    """Draw a generalised linear model dataset, the lending paper's setting.

    ``beta*`` has norm ``beta_norm`` in a uniformly random direction. With
    ``link="logistic"``, ``y ~ Bernoulli(sigmoid(x . beta*))`` (task
    ``"binary"``); with ``link="linear"``, ``y = x . beta* + N(0, noise_std^2)``
    (task ``"regression"``). The default ``beta_norm = 2`` makes the score
    ``N(0, 4)``: the success probability covers most of (0, 1), so the data
    holds both clear and borderline cases, as real credit data does.

    Examples
    --------
    >>> data = make_glm(200, 3, seed=0)
    >>> data.X.shape, data.task, set(data.y.tolist())
    ((200, 3), 'binary', {0.0, 1.0})
    >>> bool((make_glm(200, 3, seed=0).X == data.X).all())
    True
    >>> round(float(np.linalg.norm(data.metadata["beta"])), 6)
    2.0
    """
    mean = get_link(link).mean
    beta_norm = check_float(beta_norm, "beta_norm", low=0)
    noise_std = check_float(noise_std, "noise_std", low=0)
    X, direction, rng = _gaussian_design(n, dim, seed)
    beta = beta_norm * direction
    beta.flags.writeable = False
    mu = np.asarray(mean(X @ beta), dtype=float)
    if link == "logistic":
        y = (rng.random(X.shape[0]) < mu).astype(float)
    else:
        y = mu + noise_std * rng.standard_normal(X.shape[0])
    return from_arrays(
        X,
        y,
        name=f"glm_{link}",
        target="y",
        task="binary" if link == "logistic" else "regression",
        metadata={
            **SYNTHETIC_METADATA,
            "source": "osfb_gym.data.make_glm",
            "preprocessing": f"x ~ N(0, I_{X.shape[1]}); y from the {link} GLM with "
            f"||beta*|| = {beta_norm}",
            "beta": beta,
            "link": link,
        },
    )


def make_separable(
    n: int,
    dim: int,
    *,
    noise: float = 0.0,
    positive_rate: float = 0.5,
    seed: int | np.random.Generator | None = None,
) -> Dataset:
    """Draw a linearly separable dataset with optional label noise (apple tasting).

    ``y = 1{x . w > t}`` for a uniform unit direction ``w``, with the
    threshold ``t`` set so that ``P(y = 1) = positive_rate`` exactly; then
    each label is flipped with probability ``noise``. A small
    ``positive_rate`` gives the minority-positive stream of the apple
    tasting papers.

    Examples
    --------
    >>> data = make_separable(1000, 2, positive_rate=0.2, seed=1)
    >>> bool(0.15 < data.y.mean() < 0.25)
    True
    """
    noise = check_float(noise, "noise", low=0, high=0.5)
    positive_rate = check_float(
        positive_rate, "positive_rate", low=0, high=1, low_inclusive=False, high_inclusive=False
    )
    X, direction, rng = _gaussian_design(n, dim, seed)
    threshold = float(norm.ppf(1.0 - positive_rate))
    clean = X @ direction > threshold
    flipped = rng.random(X.shape[0]) < noise
    return from_arrays(
        X,
        (clean ^ flipped).astype(float),
        name="separable",
        target="y",
        metadata={
            **SYNTHETIC_METADATA,
            "source": "osfb_gym.data.make_separable",
            "preprocessing": f"x ~ N(0, I_{X.shape[1]}); y = 1{{x.w > {threshold:.4g}}} "
            f"flipped with probability {noise}",
            "direction": direction,
            "threshold": threshold,
        },
    )
