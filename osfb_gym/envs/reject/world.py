"""RejectOption's synthetic worlds: the hidden ``w*``, the class model and Chow's Bayes risk."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

SCENARIOS = ("overlap", "separable")
DEFAULT_DIM = 10  # synthetic worlds; a dataset has its own
DEFAULT_SEPARATION = 2.0
MAX_SEPARATION = 8.0
# Synthetic features are Gaussian truncated at +-12: with a class mean at most
# 4 from the origin along w*, the truncation moves a probability below 1e-15.
FEATURE_BOUND = 12.0
CHUNK = 256  # synthetic examples drawn at a time


def chow_risk(posterior: np.ndarray, d: float) -> np.ndarray:
    """Conditional risk of the Bayes reject-option rule (Chow, 1970) at ``P(y = +1 | x)``.

    Predict +1 when the posterior exceeds ``1 - d``, -1 when it is below
    ``d``, reject otherwise: the risk is ``min(eta, 1 - eta, d)``.

    Examples
    --------
    >>> chow_risk(np.array([0.02, 0.5, 0.9]), d=0.25).tolist()
    [0.02, 0.25, 0.09999999999999998]
    """
    return np.minimum(np.minimum(posterior, 1.0 - posterior), d)


@dataclass(frozen=True)
class SyntheticWorld:
    """The hidden truth of a synthetic reject-option episode.

    Attributes
    ----------
    w
        The hidden unit normal ``w*``; an example's score is ``s = x . w*``.
    scenario
        ``"overlap"``: two Gaussian classes, means ``+-separation / 2`` along
        ``w*``, identity covariance, equal priors; ``"separable"``: standard
        normal features and ``y = sign(s)``.
    separation
        Distance between the class means (overlap only).
    noise
        Probability that a label is flipped.
    """

    w: np.ndarray
    scenario: str
    separation: float
    noise: float

    def posterior(self, score: np.ndarray) -> np.ndarray:
        """``P(y = +1 | x)`` as a function of the score ``s = x . w*``."""
        if self.scenario == "overlap":
            clean = expit(self.separation * score)  # the log-likelihood ratio is separation * s
        else:
            clean = (score > 0).astype(float)
        return self.noise + (1.0 - 2.0 * self.noise) * clean

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``n`` examples: ``float32`` features, +-1 ``int8`` labels and posteriors.

        Labels and posteriors are computed from the ``float32`` features
        exactly as observed.
        """
        dim = self.w.shape[0]
        x = rng.standard_normal((n, dim))
        if self.scenario == "overlap":
            clean = np.where(rng.random(n) < 0.5, 1, -1)
            x += np.outer(clean * self.separation / 2, self.w)
        np.clip(x, -FEATURE_BOUND, FEATURE_BOUND, out=x)
        x32 = x.astype(np.float32)
        score = x32.astype(np.float64) @ self.w
        if self.scenario == "separable":
            clean = np.where(score > 0, 1, -1)
        flipped = rng.random(n) < self.noise
        y = np.where(flipped, -clean, clean).astype(np.int8)
        return x32, y, self.posterior(score)


def draw_world(
    dim: int, scenario: str, rng: np.random.Generator, *, separation: float, noise: float
) -> SyntheticWorld:
    """Draw ``w*`` uniformly on the unit sphere."""
    direction = rng.standard_normal(dim)
    return SyntheticWorld(direction / np.linalg.norm(direction), scenario, separation, noise)
