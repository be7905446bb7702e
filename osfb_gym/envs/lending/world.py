"""OneSidedLending's synthetic worlds: Gaussian applicants and the greedy trap of Theorem 1."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy.stats import norm

from osfb_gym.core.links import Link, get_link  # noqa: F401  (get_link: the doctests)

# Features are standard normal truncated at +-10 (Assumption 2 of the paper
# wants bounded covariates; the truncation moves a probability below 1e-22).
FEATURE_BOUND = 10.0
# a Bernoulli outcome of one applicant, copied (cheaper than building the array)
_ONE, _ZERO = np.ones(1), np.zeros(1)
_ONE.flags.writeable = _ZERO.flags.writeable = False


def gaussian_score_cutoff(link: Link, beta_norm: float, quantile: float) -> float:
    """Cutoff at the ``quantile`` of ``mu(x . beta*)`` when the score is N(0, beta_norm^2).

    Both synthetic scenarios draw features so that the score of an ordinary
    applicant is exactly Gaussian, so the quantile is exact, not sampled.

    Examples
    --------
    >>> round(gaussian_score_cutoff(get_link("logistic"), 2.0, 0.5), 6)
    0.5
    """
    return float(link.mean(beta_norm * norm.ppf(quantile)))


@dataclass(frozen=True)
class LendingWorld:
    """The hidden truth of a synthetic lending episode.

    Attributes
    ----------
    beta
        The true parameter ``beta*``.
    trap_direction
        The Theorem 1 vector ``v`` (greedy-trap scenario), else None.
    trap_probability
        How often an applicant is exactly ``v``.
    """

    beta: np.ndarray
    trap_direction: np.ndarray | None = None
    trap_probability: float = 0.0

    def sample_features(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` applicants' features, rounded to float32 like the observation."""
        return self.sample_observed(n, rng)[1]

    def sample_observed(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` applicants: the float32 observation and its exact float64 copy."""
        dim = self.beta.shape[0]
        x = rng.standard_normal((n, dim))
        if self.trap_direction is not None:
            unit = self.trap_direction / np.linalg.norm(self.trap_direction)
            x -= np.outer(x @ unit, unit)
            is_v = rng.random(n) < self.trap_probability
            x[is_v] = self.trap_direction
        # np.clip's result, without its Python-level dispatch (a third of a step's draw)
        np.minimum(x, FEATURE_BOUND, out=x)
        np.maximum(x, -FEATURE_BOUND, out=x)
        # the observation is float32; truth is computed from exactly what is observed
        observed = x.astype(np.float32)
        return observed, observed.astype(np.float64)

    def sample_batch(
        self, n: int, link: Link, noise_std: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``n`` applicants: float32 features, float64 features, ``mu`` and ``y``.

        ``y`` is a Bernoulli draw for the logistic link, ``mu`` plus Gaussian
        noise of ``noise_std`` for the linear one.
        """
        if n == 1 and self.trap_direction is None:
            return self._sample_one(link, noise_std, rng)
        observed, x = self.sample_observed(n, rng)
        mu = np.asarray(link.mean(x @ self.beta), dtype=float)
        if link.name == "logistic":
            y = (rng.random(n) < mu).astype(float)
        else:
            y = mu + noise_std * rng.standard_normal(n)
        return observed, x, mu, y

    def _sample_one(
        self, link: Link, noise_std: float, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`sample_batch` of one Gaussian applicant, with fewer NumPy calls.

        The same draws in the same order and the same values: the clip runs
        only when a feature is out of bounds (elsewhere it changes nothing),
        ``np.dot`` is the BLAS product ``@`` calls for a ``(1, d)`` matrix and
        a vector, ``rng.random()`` is the value ``rng.random(1)`` holds, and
        comparing it with ``mu`` as Python floats is the comparison the array
        makes (the linear link's noise likewise). One applicant a step is what
        an RL policy trains on, where
        NumPy's per-call overhead is most of a step.
        """
        x = rng.standard_normal((1, self.beta.shape[0]))
        row = x[0].tolist()
        if min(row) < -FEATURE_BOUND or max(row) > FEATURE_BOUND:
            np.minimum(x, FEATURE_BOUND, out=x)
            np.maximum(x, -FEATURE_BOUND, out=x)
        observed = x.astype(np.float32)
        x = observed.astype(np.float64)
        # a float64 array: x is one, and beta* a float array
        mu = cast("np.ndarray", link.mean(np.dot(x, self.beta)))
        if link.name == "logistic":
            y = (_ONE if rng.random() < mu.item() else _ZERO).copy()
        else:
            # the draw rng.standard_normal(1) holds; the same two IEEE operations
            y = np.array([mu.item() + noise_std * rng.standard_normal()])
        return observed, x, mu, y


def draw_world(
    scenario: str,
    dim: int,
    beta_norm: float,
    link: Link,
    cutoff: float,
    tau: float,
    trap_probability: float,
    rng: np.random.Generator,
) -> LendingWorld:
    """Draw the world of ``scenario``: ``"gaussian"`` or ``"greedy_trap"``."""
    if scenario == "greedy_trap":
        return draw_trap_world(dim, beta_norm, link, cutoff, tau, trap_probability, rng)
    return draw_gaussian_world(dim, beta_norm, rng)


def draw_gaussian_world(dim: int, beta_norm: float, rng: np.random.Generator) -> LendingWorld:
    """Draw a world with standard-normal features and ``beta*`` uniform on a sphere.

    Features model standardised applicant attributes; ``||beta*|| = beta_norm``
    makes the score ``x . beta*`` exactly N(0, beta_norm^2).
    """
    direction = rng.standard_normal(dim)
    return LendingWorld(beta=beta_norm * direction / np.linalg.norm(direction))


def draw_trap_world(
    dim: int,
    beta_norm: float,
    link: Link,
    cutoff: float,
    tau: float,
    trap_probability: float,
    rng: np.random.Generator,
) -> LendingWorld:
    """Draw the construction of Theorem 1 (Jiang, Jiang and Pacchiano 2021).

    With probability ``trap_probability`` an applicant is exactly ``v`` (a
    random direction of norm sqrt(dim)); every other applicant is Gaussian
    in the subspace orthogonal to ``v``. ``beta*`` has norm ``beta_norm``
    in that subspace and a component along ``v`` chosen so that
    ``mu(v . beta*) = cutoff + tau``: ``v`` is worth approving, but only
    barely, so a greedy learner whose warm start underestimates it never
    looks at ``v`` again.
    """
    if dim < 2:
        raise ValueError(f"dim must be >= 2 for scenario='greedy_trap', got {dim}")
    unit_v = rng.standard_normal(dim)
    unit_v /= np.linalg.norm(unit_v)
    direction = rng.standard_normal(dim)
    direction -= (direction @ unit_v) * unit_v
    beta_perp = beta_norm * direction / np.linalg.norm(direction)
    v = np.clip(np.sqrt(dim) * unit_v, -FEATURE_BOUND, FEATURE_BOUND)
    v = v.astype(np.float32).astype(np.float64)
    score_v = float(link.inverse(cutoff + tau))
    beta = beta_perp + score_v * v / float(v @ v)
    return LendingWorld(beta=beta, trap_direction=v, trap_probability=trap_probability)
