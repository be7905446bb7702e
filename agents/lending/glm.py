"""Ridge-regularised GLM fits on revealed data, shared by the lending agents.

The learner keeps ``A = l2 * I + sum x x^T`` over the revealed examples
(the design matrix of Algorithm 2, consistent with the ridge term of the
fit) and its inverse, updated by Sherman-Morrison per example. The linear
link is solved in closed form from ``A`` and ``X^T y``; the logistic link
by damped Newton iterations warm-started at the previous estimate.
Unregularised logistic MLE diverges when the few labels seen early are
separable; the ridge term (DESIGN section 7) keeps every fit finite.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from osfb_gym.core.links import Link


def logistic_objective(beta: np.ndarray, x: np.ndarray, y: np.ndarray, l2: float) -> float:
    """Ridge-penalised negative log-likelihood, computed without overflow."""
    z = x @ beta
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * beta @ beta)


def fit_logistic_newton(
    x: np.ndarray,
    y: np.ndarray,
    l2: float,
    beta0: np.ndarray | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> np.ndarray:
    """Minimise :func:`logistic_objective` by Newton's method with backtracking.

    The objective is strictly convex for ``l2 > 0``, so the minimiser is
    unique and the damped iteration converges from any start.
    """
    dim = x.shape[1]
    beta = np.zeros(dim) if beta0 is None else beta0.astype(float).copy()
    objective = logistic_objective(beta, x, y, l2)
    for _ in range(max_iter):
        p = expit(x @ beta)
        gradient = x.T @ (p - y) + l2 * beta
        hessian = (x * (p * (1.0 - p))[:, None]).T @ x + l2 * np.eye(dim)
        step = np.linalg.solve(hessian, gradient)
        size = 1.0
        while True:
            candidate = beta - size * step
            value = logistic_objective(candidate, x, y, l2)
            if value <= objective or size < 1e-8:
                break
            size *= 0.5
        beta, objective = candidate, value
        if np.linalg.norm(size * step) <= tol * (1.0 + np.linalg.norm(beta)):
            break
    return beta


class GLMEstimator:
    """The estimate ``beta_hat`` and design matrix ``A`` of the revealed data.

    Parameters
    ----------
    link
        The GLM link (linear: least squares; logistic: cross-entropy).
    dim
        Number of features.
    l2
        Ridge strength ``lambda``; ``A`` starts at ``lambda * I``.
    """

    def __init__(self, link: Link, dim: int, l2: float) -> None:
        self.link = link
        self.dim = dim
        self.l2 = l2
        self.A = l2 * np.eye(dim)
        self.A_inv = np.eye(dim) / l2
        self.xty = np.zeros(dim)
        self.beta: np.ndarray = np.zeros(dim)
        self._x = np.empty((64, dim))
        self._y = np.empty(64)
        self.n = 0
        self.max_norm = 0.0

    @property
    def X(self) -> np.ndarray:
        """The revealed features so far."""
        return self._x[: self.n]

    @property
    def y(self) -> np.ndarray:
        """The revealed outcomes so far."""
        return self._y[: self.n]

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        """Append revealed examples and update ``A``, ``A^{-1}`` and ``X^T y``."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        y = np.atleast_1d(np.asarray(y, dtype=float))
        if self.n + len(x) > len(self._x):
            capacity = max(2 * len(self._x), self.n + len(x))
            self._x = np.resize(self._x, (capacity, self.dim))
            self._y = np.resize(self._y, capacity)
        self._x[self.n : self.n + len(x)] = x
        self._y[self.n : self.n + len(x)] = y
        self.n += len(x)
        if len(x):
            self.max_norm = max(self.max_norm, float(np.linalg.norm(x, axis=1).max()))
        self.A += x.T @ x
        self.xty += x.T @ y
        for row in x:
            a_inv_x = self.A_inv @ row
            self.A_inv -= np.outer(a_inv_x, a_inv_x) / (1.0 + row @ a_inv_x)

    def fit(self) -> np.ndarray:
        """Refit ``beta_hat`` on everything revealed so far and return it."""
        if self.link.name == "linear":
            self.beta = np.linalg.solve(self.A, self.xty)
        elif self.n:
            self.beta = fit_logistic_newton(self.X, self.y, self.l2, self.beta)
        return self.beta

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return ``mu(x . beta_hat)``."""
        return np.asarray(self.link.mean(x @ self.beta), dtype=float)

    def widths(self, x: np.ndarray) -> np.ndarray:
        """Return ``sqrt(x^T A^{-1} x)`` for each row of ``x``."""
        return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", x, self.A_inv, x), 0.0))
