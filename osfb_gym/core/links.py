"""Link functions of the generalised linear model, as pure helpers.

A link maps the linear score ``z = x . beta`` to the expected outcome
``mu(z)``. Both links are strictly increasing, as Assumption 1 of Jiang,
Jiang and Pacchiano (2021) requires, and both are computed stably
(``scipy.special.expit``, never ``1 / (1 + exp(-z))``), so scores of any
size are safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from osfb_gym.core.validation import check_choice

ArrayLike = np.ndarray | float


def identity(z: ArrayLike) -> ArrayLike:
    """Identity link ``mu(z) = z`` (linear regression)."""
    return z


def identity_derivative(z: ArrayLike) -> ArrayLike:
    """Return the derivative of the identity link, 1 everywhere."""
    return np.ones_like(np.asarray(z, dtype=float))


def logistic(z: ArrayLike) -> ArrayLike:
    """Logistic link ``mu(z) = 1 / (1 + exp(-z))``, overflow-free.

    Examples
    --------
    >>> float(logistic(0.0))
    0.5
    >>> float(logistic(-1000.0))
    0.0
    """
    return expit(z)


def logistic_derivative(z: ArrayLike) -> ArrayLike:
    """Return the derivative ``mu(z) (1 - mu(z))`` of the logistic link.

    Computed as ``mu(z) mu(-z)``, which stays positive where ``1 - mu(z)``
    would round to 0.
    """
    return expit(z) * expit(-np.asarray(z))


@dataclass(frozen=True)
class Link:
    """A named link with its derivative and inverse.

    Attributes
    ----------
    name
        ``"linear"`` or ``"logistic"``, the names environments and agents use.
    mean
        ``mu``, mapping scores to expected outcomes.
    derivative
        ``mu'``.
    inverse
        ``mu^{-1}``, mapping an expected outcome (e.g. a cutoff) to a score.
    lipschitz
        The constant ``L`` of Assumption 1, ``sup mu'``.
    """

    name: str
    mean: Callable[[ArrayLike], ArrayLike]
    derivative: Callable[[ArrayLike], ArrayLike]
    inverse: Callable[[ArrayLike], ArrayLike]
    lipschitz: float


LINKS: dict[str, Link] = {
    "linear": Link("linear", identity, identity_derivative, identity, 1.0),
    "logistic": Link("logistic", logistic, logistic_derivative, logit, 0.25),
}


def get_link(name: str) -> Link:
    """Return the :class:`Link` called ``name``, or raise naming the choices.

    Examples
    --------
    >>> get_link("logistic").lipschitz
    0.25
    """
    return LINKS[check_choice(name, "link", tuple(LINKS))]
