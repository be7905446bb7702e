"""Synthetic apple-tasting worlds: the hidden ``w*`` and the scenario geometry (Sculley, Fig. 8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from osfb_gym.core.validation import check_float

SCENARIOS = ("separable", "minority", "gappy", "striped")
DEFAULT_POSITIVE_RATE = {"separable": 0.5, "minority": 0.05}
DEFAULT_GAP = (0.5, 1.0)  # gappy: (gap_offset, gap_width)
DEFAULT_STRIPE = (0.5, 0.5)  # striped: (stripe_offset, stripe_width)
# The band of the gappy and striped worlds must stay well inside the feature
# bound, so that the truncation below never touches their geometry.
MAX_BAND = 4.0
# Synthetic features are standard normal truncated at +-10: the truncation moves a
# probability below 1e-22 per feature, below 1e-8 with the largest gappy shift.
FEATURE_BOUND = 10.0
# Synthetic examples are drawn this many at a time: one vectorised draw instead
# of one per step, and an unbounded horizon still costs bounded memory.
CHUNK = 256


@dataclass(frozen=True)
class SyntheticWorld:
    """The hidden truth of a synthetic apple-tasting episode.

    The geometry lives along the hidden unit vector ``w``: an example's
    score ``s = x . w`` decides its clean label, the features orthogonal to
    ``w`` are standard normal noise.

    Attributes
    ----------
    w
        The hidden unit normal ``w*``.
    scenario
        One of :data:`SCENARIOS`.
    threshold
        Separable and minority worlds: ``y = 1{s > threshold}``.
    band
        Gappy: the empty score interval; striped: the interval of negatives
        inside the positive side. ``(low, high)``, else None.
    noise
        Probability that a label is flipped.
    """

    w: np.ndarray
    scenario: str
    threshold: float = 0.0
    band: tuple[float, float] | None = None
    noise: float = 0.0

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draw ``n`` examples: ``float32`` features, ``int8`` labels and scores.

        Labels are computed from exactly the ``float32`` features observed.
        """
        dim = self.w.shape[0]
        x = rng.standard_normal((n, dim))
        if self.scenario == "gappy" and self.band is not None:
            low, high = self.band
            # move every score above the gap's start past its end: nothing lands inside
            shift = (high - low) * (x @ self.w > low)
            x += np.outer(shift, self.w)
        np.clip(x, -FEATURE_BOUND, FEATURE_BOUND, out=x)
        x32 = x.astype(np.float32)
        score = x32.astype(np.float64) @ self.w
        flipped = rng.random(n) < self.noise
        return x32, (self.clean(score) ^ flipped).astype(np.int8), score

    def clean(self, score: np.ndarray) -> np.ndarray:
        """Return the noise-free labels (bool) of examples with scores ``score``."""
        clean = score > self.threshold
        if self.scenario == "striped" and self.band is not None:
            low, high = self.band
            clean &= ~((score > low) & (score < high))
        return clean

    def bayes_loss(self, score: np.ndarray, gain: float, cost_fp: float) -> np.ndarray:
        """Return the Bayes decision's expected loss on examples with scores ``score``.

        Given ``x``, ``P(y = 1 | x)`` is ``1 - noise`` on the clean positives and
        ``noise`` elsewhere; the Bayes decision tastes where ``P(y = 1 | x) gain``
        exceeds ``P(y = 0 | x) cost_fp`` and expects the smaller of the two. 0
        everywhere in a noise-free world.

        >>> world = SyntheticWorld(w=np.array([1.0]), scenario="separable", noise=0.1)
        >>> world.bayes_loss(np.array([1.0, -1.0]), gain=1.0, cost_fp=1.0).round(3).tolist()
        [0.1, 0.1]
        """
        positive = np.where(self.clean(score), 1.0 - self.noise, self.noise)
        return np.minimum(positive * gain, (1.0 - positive) * cost_fp)


def draw_world(
    dim: int,
    scenario: str,
    rng: np.random.Generator,
    *,
    positive_rate: float = 0.5,
    band: tuple[float, float] | None = None,
    noise: float = 0.0,
) -> SyntheticWorld:
    """Draw ``w*`` uniformly on the unit sphere and fix the scenario's geometry.

    Separable and minority worlds put the boundary at the
    ``1 - positive_rate`` quantile of the standard normal score, so
    ``P(clean y = 1) = positive_rate`` exactly; gappy and striped worlds
    put it at 0.
    """
    direction = rng.standard_normal(dim)
    w = direction / np.linalg.norm(direction)
    threshold = float(norm.ppf(1.0 - positive_rate)) if scenario in DEFAULT_POSITIVE_RATE else 0.0
    return SyntheticWorld(w=w, scenario=scenario, threshold=threshold, band=band, noise=noise)


def resolve_positive_rate(scenario: str, positive_rate: float | None) -> float:
    """Return the clean ``P(y = 1)`` of a separable or minority world; raise elsewhere if given."""
    default = DEFAULT_POSITIVE_RATE.get(scenario)
    if positive_rate is None:
        return 0.5 if default is None else default
    if default is None:
        raise ValueError(
            f"positive_rate applies to scenario='separable' or 'minority'; the "
            f"{scenario!r} world has its boundary at score 0, got "
            f"positive_rate={positive_rate!r}"
        )
    return check_float(
        positive_rate,
        "positive_rate",
        low=0.0,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
    )


def resolve_band(
    scenario: str,
    gap_offset: float | None,
    gap_width: float | None,
    stripe_offset: float | None,
    stripe_width: float | None,
) -> tuple[float, float] | None:
    """Return the gap's or stripe's score interval ``(low, high)``; None elsewhere."""
    given = {
        "gappy": {"gap_offset": gap_offset, "gap_width": gap_width},
        "striped": {"stripe_offset": stripe_offset, "stripe_width": stripe_width},
    }
    for owner, arguments in given.items():
        for name, value in arguments.items():
            if value is not None and owner != scenario:
                raise ValueError(
                    f"{name} applies to scenario={owner!r} only, got {name}={value!r} "
                    f"with scenario={scenario!r}"
                )
    if scenario == "gappy":
        names, values, defaults = (
            ("gap_offset", "gap_width"),
            (gap_offset, gap_width),
            DEFAULT_GAP,
        )
    elif scenario == "striped":
        names = ("stripe_offset", "stripe_width")
        values, defaults = (stripe_offset, stripe_width), DEFAULT_STRIPE
    else:
        return None
    low = check_float(
        defaults[0] if values[0] is None else values[0], names[0], low=0.0, high=MAX_BAND
    )
    width = check_float(
        defaults[1] if values[1] is None else values[1],
        names[1],
        low=0.0,
        low_inclusive=False,
        high=MAX_BAND - low,
    )
    return (low, low + width)
