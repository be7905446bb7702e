"""Ridge-regularised GLM fits on revealed data, shared by the lending agents.

The learner keeps ``A = l2 * I + sum x x^T`` over the revealed examples
(the design matrix of Algorithm 2, consistent with the ridge term of the
fit) and its inverse, updated by Sherman-Morrison per example.
Unregularised logistic MLE diverges when the few labels seen early are
separable; the ridge term keeps every fit finite.

Two solvers give the estimate:

- ``"exact"`` refits on everything revealed after every batch: the linear
  link by solving ``A beta = X^T y``, the logistic link by damped Newton
  iterations to convergence, warm-started at the previous estimate. This
  is what the paper's experiments did with scikit-learn, and it costs
  ``O(n d^2)`` per batch for ``n`` revealed examples.
- ``"incremental"`` (default) costs ``O(d^2)`` per revealed example:
  recursive least squares for the linear link (the Sherman-Morrison update
  of ``A^{-1}`` and the gain step ``beta += A^{-1} x (y - x . beta)``,
  which is ``A^{-1} X^T y`` without a second pass over ``A^{-1}``); for
  the logistic link, each example's log-loss is replaced by its
  second-order expansion at the estimate in force when it arrived, and
  the estimate is the exact minimiser of the sum of these quadratics (an
  online Newton step on the accumulated gradient and Hessian).
  Linearisation error builds up while the estimate moves, so every time
  the revealed data grows by a factor ``1 + refit_growth`` the learner
  re-expands every example at its current estimate: one pass over the data
  builds the Hessian and gradient there, and the minimiser of the new
  quadratic model is one full Newton step (close to the optimum, Newton
  converges quadratically; a step that raises the objective falls back to
  damped Newton iterations). The Hessian of that pass is the model's, not
  recomputed. The first fit (the warm start) is damped Newton to
  convergence. The total cost of the refits is a constant multiple of a
  few passes over the data.

The per-step path of one revealed example (:meth:`GLMEstimator.learn_row`)
takes the ``A^{-1} x`` its decision computed, updates the logistic
estimate in ``O(d)`` from the rank-one change of ``H^{-1}``
(``beta = -H^{-1} s`` stays the minimiser of the quadratic model) and adds
the example to ``H`` itself only when ``H`` is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.linalg.blas import dger
from scipy.special import expit

from osfb_gym.core.links import Link


def logistic_objective(
    beta: np.ndarray, x: np.ndarray, y: np.ndarray, l2: float | np.ndarray
) -> float:
    """Ridge-penalised negative log-likelihood, computed without overflow.

    ``l2`` is one strength for every coordinate or one per coordinate.
    """
    z = x @ beta
    penalty = 0.5 * l2 * beta @ beta if np.ndim(l2) == 0 else 0.5 * beta @ (l2 * beta)
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + penalty)


def _ridge(l2: float | np.ndarray, dim: int) -> np.ndarray:
    """Return ``l2 * I`` for one strength, ``diag(l2)`` for one per coordinate."""
    return l2 * np.eye(dim) if np.ndim(l2) == 0 else np.diag(l2)


def fit_logistic_newton(
    x: np.ndarray,
    y: np.ndarray,
    l2: float | np.ndarray,
    beta0: np.ndarray | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> np.ndarray:
    """Minimise :func:`logistic_objective` by Newton's method with backtracking.

    The objective is strictly convex for ``l2 > 0``, so the minimiser is
    unique and the damped iteration converges from any start.
    """
    return _newton(x, y, l2, beta0, tol=tol, max_iter=max_iter)[0]


def _newton(
    x: np.ndarray,
    y: np.ndarray,
    l2: float | np.ndarray,
    beta0: np.ndarray | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fit_logistic_newton`'s ``beta`` and its scores ``x @ beta`` (each computed once)."""
    dim = x.shape[1]
    beta = np.zeros(dim) if beta0 is None else beta0.astype(float).copy()
    z = x @ beta
    objective = _objective_at(z, beta, y, l2)
    for _ in range(max_iter):
        p = expit(z)
        gradient = x.T @ (p - y) + l2 * beta
        hessian = (x * (p * (1.0 - p))[:, None]).T @ x + _ridge(l2, dim)
        step = np.linalg.solve(hessian, gradient)
        beta, objective, z, size = damped_step(
            beta, step, objective, y, l2, lambda _size, candidate: x @ candidate
        )
        if np.linalg.norm(size * step) <= tol * (1.0 + np.linalg.norm(beta)):
            break
    return beta, z


def damped_step(
    beta: np.ndarray,
    step: np.ndarray,
    objective: float,
    y: np.ndarray,
    l2: float | np.ndarray,
    scores_at: Callable[[float, np.ndarray], np.ndarray],
) -> tuple[np.ndarray, float, np.ndarray, float]:
    """Newton's backtracking: halve ``size`` from 1 until the objective does not rise.

    ``scores_at(size, candidate)`` gives ``x @ candidate`` (computed however the
    caller can most cheaply). Returns the candidate, its objective, its scores
    and the size taken (the search stops below ``1e-8`` whatever the objective).
    """
    size = 1.0
    while True:
        candidate = beta - size * step
        scores = scores_at(size, candidate)
        value = _objective_at(scores, candidate, y, l2)
        if value <= objective or size < 1e-8:
            return candidate, value, scores, size
        size *= 0.5


SOLVERS = ("incremental", "exact")
REFITS = ("newton", "expand")


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
    solver
        ``"incremental"`` or ``"exact"`` (see the module docstring).
    refit_growth
        Incremental solver: refit exactly when the revealed data has grown
        by this fraction since the last exact fit.
    refit
        Incremental logistic solver, how a refit works. ``"newton"``
        (default): two damped Newton steps from the current estimate (the
        warm start too), then one more pass re-expands every example there.
        ``"expand"``: the warm start converges; a refit is ``refit_passes``
        full Newton steps, each one pass that re-expands every example, the
        last one's Hessian the model's (damped steps only where a full step
        raises the objective). Cheaper per refit and closer to the exact
        solver on large data; the paper tables were made with ``"newton"``.
    refit_passes
        ``refit="expand"``: the full Newton steps (passes over the revealed
        data) of a refit.
    design_l2
        The ridge of ``A`` alone (Algorithm 2's ``A = sum x x^T`` plus only
        what keeps it invertible); None: ``l2``, the fit's.
    free_intercept
        The last column is an intercept (all ones): the fit penalises it by
        ``design_l2`` (the invertibility floor) instead of ``l2``, as
        scikit-learn leaves its intercept unpenalised.

    Examples
    --------
    >>> from osfb_gym.core.links import get_link
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((200, 3))
    >>> y = (rng.random(200) < 1 / (1 + np.exp(-x @ [1.0, -1.0, 0.5]))).astype(float)
    >>> fast = GLMEstimator(get_link("logistic"), 3, 1.0)
    >>> exact = GLMEstimator(get_link("logistic"), 3, 1.0, solver="exact")
    >>> for i in range(200):
    ...     _ = fast.add(x[i : i + 1], y[i : i + 1]), fast.fit()
    >>> _ = exact.add(x, y), exact.fit()
    >>> bool(np.abs(fast.beta - exact.beta).max() < 0.05)
    True
    """

    def __init__(
        self,
        link: Link,
        dim: int,
        l2: float,
        solver: str = "incremental",
        refit_growth: float = 0.1,
        *,
        refit: str = "newton",
        refit_passes: int = 2,
        design_l2: float | None = None,
        free_intercept: bool = False,
    ) -> None:
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
        self.link = link
        self.dim = dim
        self.l2 = l2
        self.solver = solver
        self.refit_growth = refit_growth
        self.design_l2 = l2 if design_l2 is None else design_l2
        # the fit's ridge: l2 for all (today's), or per coordinate when it differs from A's
        self.penalty: float | np.ndarray = l2
        if free_intercept and l2 != self.design_l2:
            self.penalty = np.full(dim, float(l2))
            self.penalty[-1] = self.design_l2
        self._uniform = np.ndim(self.penalty) == 0 and self.penalty == self.design_l2
        # A itself is only read at refits (and by the theory constants), so the
        # rows revealed since it was last read are folded in then, as one product
        self._A: np.ndarray = self.design_l2 * np.eye(dim)
        self._n_in_A = 0
        self.A_inv: np.ndarray = np.eye(dim) / self.design_l2
        self._rls = self.solver == "incremental" and link.name == "linear" and self._uniform
        self.xty = np.zeros(dim)
        self.beta: np.ndarray = np.zeros(dim)
        self._rls_beta = self.beta
        self._x = np.empty((64, dim))
        self._y = np.empty(64)
        self.n = 0
        self.max_norm = 0.0
        # Incremental logistic state: the sum of the examples' quadratic
        # expansions is 0.5 b^T H b + s^T b + const, minimised at -H^{-1} s.
        self._H: np.ndarray = _ridge(self.penalty, dim)
        self._H_inv: np.ndarray = np.eye(dim) / l2
        if np.ndim(self.penalty):
            self._H_inv = np.linalg.inv(self._H)
        self._s = np.zeros(dim)
        # examples whose w x x^T the lean path has not added to _H yet: (position, w)
        self._H_pending: list[tuple[int, float]] = []
        self._n_fitted = 0
        self._n_at_refit = 0
        self.n_refits = 0
        if refit not in REFITS:
            raise ValueError(f"refit must be one of {REFITS}, got {refit!r}")
        self.refit = refit
        self.refit_passes = refit_passes
        # the incremental logistic beta is the minimiser -H^{-1} s of its model (else the
        # model's minimiser is one step on from beta: after a "newton" refit)
        self._beta_is_model = True
        self.n_passes = 0  # passes of the incremental logistic refits over the revealed data

    @property
    def A(self) -> np.ndarray:
        """The design matrix ``lambda I + sum x x^T`` of the revealed examples."""
        if self._n_in_A < self.n:
            new = self._rows(self._n_in_A, self.n)
            self._A += new.T @ new
            self._n_in_A = self.n
        return self._A

    @property
    def X(self) -> np.ndarray:
        """The revealed features so far."""
        return self._rows(0, self.n)

    def _rows(self, start: int, stop: int) -> np.ndarray:
        """Revealed feature rows ``start:stop`` (float64; where they are kept is a subclass's)."""
        return self._x[start:stop]

    @property
    def y(self) -> np.ndarray:
        """The revealed outcomes so far."""
        return self._y[: self.n]

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        """Append revealed examples and update ``A^{-1}`` and ``X^T y`` (``A`` when read)."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            x = x[None, :]
        y = np.asarray(y, dtype=float).reshape(len(x))
        if len(x) < self.dim:
            for row, target in zip(x, y, strict=True):
                self.add_row(row, float(target))
            return
        # a block (the warm start): one inversion beats a rank-one update per row
        end = self.n + len(x)
        self._keep(x, y)
        self.n = end
        self.max_norm = max(self.max_norm, math.sqrt(float(np.einsum("ij,ij->i", x, x).max())))
        self.xty += x.T @ y
        self.A_inv[...] = np.linalg.inv(self.A)
        if self._rls:
            self._rls_beta = self.A_inv @ self.xty

    def add_row(self, row: np.ndarray, target: float, u: np.ndarray | None = None) -> None:
        """Append one revealed example (a float 1-d ``row``): the per-step path, kept lean.

        ``u``: ``A^{-1} row`` already computed with the current ``A^{-1}`` (as
        :func:`_sherman_morrison` computes it), or None.
        """
        n = self.n
        if n == len(self._y):
            self._grow(n + 1)
        self._keep_row(n, row, target)
        self.n = n + 1
        # (ndarray.dot: the products of @, without its dispatch cost)
        self.max_norm = max(self.max_norm, math.sqrt(row.dot(row)))
        self.xty += row * target
        if self._rls:
            gain = _sherman_morrison(self.A_inv, row, 1.0, u)
            self._rls_beta = self._rls_beta + gain * (target - row.dot(self._rls_beta))
        else:  # _sherman_morrison's update without the gain nobody reads
            a_inv = self.A_inv
            if u is None:
                u = a_inv.dot(row)
            _rank_one_update(a_inv, -1.0 / (1.0 + 1.0 * row.dot(u)), u, u)

    def learn_row(self, row: np.ndarray, target: float, u: np.ndarray | None = None) -> None:
        """:meth:`add_row` then :meth:`fit`, for one example: the lean single-agent path.

        The linear link and the refits compute exactly what ``add_row`` and
        ``fit`` compute. The incremental logistic step differs in round-off
        only: ``beta`` follows the rank-one change of ``H^{-1}`` in ``O(d)``
        (not ``-H^{-1} s`` as a matrix-vector product), and ``H`` takes the
        example when it is next read.
        """
        self.add_row(row, target, u)
        n = self.n
        if (
            self.solver == "exact"
            or not (self._rls or self.link.name == "logistic")
            or n > (1.0 + self.refit_growth) * self._n_at_refit
            or self._n_fitted != n - 1
        ):
            self.fit()
            return
        if self._rls:
            self.beta = self._rls_beta
            self._n_fitted = n
            return
        # the example's log-loss expanded at beta: weight w, linear term c row (see _absorb)
        beta = self.beta
        z = float(row.dot(beta))
        e = math.exp(-abs(z))
        p = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
        w = e / ((1.0 + e) * (1.0 + e))
        c = p - target - w * z
        # the model's minimiser b = -H^{-1} s: beta itself unless a "newton" refit set beta
        if self._beta_is_model:
            b, xb = beta, z
        else:
            b = -self._H_inv @ self._s
            xb = float(row.dot(b))
        g = self._H_inv.dot(row)
        q = float(row.dot(g))
        k = w / (1.0 + w * q)
        _rank_one_update(self._H_inv, -k, g, g)
        self._s += c * row
        self._H_pending.append((n - 1, w))
        # -H'^{-1} s' with H'^{-1} = H^{-1} - k g g^T, s' = s + c row and g . s = -row . b
        self.beta = b + g * (k * (c * q - xb) - c)
        self._beta_is_model = True
        self._n_fitted = n

    def _fold_H(self) -> None:
        """Add the pending examples' ``w x x^T`` to ``H`` (the products the per-row update made)."""
        for position, weight in self._H_pending:
            row = self._rows(position, position + 1)[0]
            _rank_one_update(self._H, weight, row, row)
        self._H_pending.clear()

    def _keep(self, x: np.ndarray, y: np.ndarray) -> None:
        """Store the block ``(x, y)`` after the ``n`` rows kept so far."""
        end = self.n + len(x)
        if end > len(self._y):
            self._grow(end)
        self._x[self.n : end] = x
        self._y[self.n : end] = y

    def _keep_row(self, n: int, row: np.ndarray, target: float) -> None:
        """Store one row at position ``n`` (room made by the caller)."""
        self._x[n] = row
        self._y[n] = target

    def _grow(self, size: int) -> None:
        """Make room for ``size`` examples (at least doubling, so appends cost O(1) on average)."""
        capacity = max(2 * len(self._y), size)
        x, y = np.empty((capacity, self.dim)), np.empty(capacity)
        x[: self.n], y[: self.n] = self.X, self.y
        self._x, self._y = x, y

    def fit(self) -> np.ndarray:
        """Bring ``beta_hat`` up to date with everything revealed and return it."""
        if self.n == self._n_fitted:
            return self.beta
        if self.solver == "exact" or (self.link.name == "linear" and not self._rls):
            # (a linear fit whose ridge differs from A's has no incremental form here)
            self._refit()
        elif self.n > (1.0 + self.refit_growth) * self._n_at_refit:
            self._refit()
        elif self._rls:
            self.beta = self._rls_beta
        else:
            self._fold_H()
            self._absorb(self._rows(self._n_fitted, self.n), self.y[self._n_fitted :])
            self.beta = -self._H_inv @ self._s
            self._beta_is_model = True
        self._n_fitted = self.n
        return self.beta

    def _refit(self) -> None:
        """Solve exactly on all revealed data; restart the incremental state there."""
        if self.link.name == "linear":
            self.beta = np.linalg.solve(self._linear_matrix(), self.xty)
            if self._rls:
                # shed the round-off of the Sherman-Morrison and gain steps
                self.A_inv[...] = np.linalg.inv(self.A)
                self._rls_beta = self.beta
        elif self.solver == "exact":
            self.beta = fit_logistic_newton(self.X, self.y, self.penalty, self.beta)
        elif self.refit == "newton":
            # warm-started at an estimate already close to the optimum, Newton
            # converges quadratically: two steps suffice between refits
            self.beta, z = _newton(self.X, self.y, self.penalty, self.beta, max_iter=2)
            self._H = _ridge(self.penalty, self.dim)
            self._s = np.zeros(self.dim)
            self._H_inv = np.eye(self.dim) / self.l2
            self._H_pending.clear()
            self._absorb(self.X, self.y, rank_one=False, z=z)
            self._H_inv = np.linalg.inv(self._H)
            self._beta_is_model = False  # beta is Newton's, the model's minimiser is one step on
            self.A_inv[...] = np.linalg.inv(self.A)
        else:
            x, y = self.X, self.y
            if self._n_at_refit == 0:
                # the first fit (the warm start): to convergence, as the exact solver
                self.beta = fit_logistic_newton(x, y, self.penalty, self.beta)
            self._expand(x, y)
            self.A_inv[...] = np.linalg.inv(self.A)
        self._n_at_refit = self.n
        self.n_refits += 1

    def _expand(self, x: np.ndarray, y: np.ndarray, max_passes: int = 20) -> None:
        """Re-expand every example at ``beta``; ``beta`` becomes the model's minimiser.

        One pass builds the Hessian ``H`` and gradient there; the quadratic
        model's minimiser ``-H^{-1} s`` is the full Newton step from
        ``beta``. If that step raises the objective (``beta`` far from the
        optimum), a damped step (backtracking, as :func:`fit_logistic_newton`)
        moves ``beta`` and the expansion is made again there: damped Newton
        whose last Hessian is the model's.
        """
        beta = self.beta
        for done in range(1, max_passes + 1):
            z = x @ beta
            p = np.asarray(self.link.mean(z), dtype=float)
            w = np.asarray(self.link.derivative(z), dtype=float)
            # X^T W X as R^T R, R = W^(1/2) X: numpy computes R.T @ R by syrk (half the work)
            root = x * np.sqrt(w)[:, None]
            hessian = root.T @ root + _ridge(self.penalty, self.dim)
            s = x.T @ (p - y - w * z)
            self.n_passes += 1
            hessian_inv = np.linalg.inv(hessian)
            newton = -hessian_inv @ s
            start = _objective_at(z, beta, y, self.penalty)
            # a full step that does not raise the objective (up to round-off) is the model's
            if logistic_objective(newton, x, y, self.penalty) <= start + 1e-12 * abs(start):
                if done >= self.refit_passes:
                    break
                beta = newton
                continue
            # far from the optimum: a damped step, and a new expansion there
            direction, size = newton - beta, 0.5
            while size >= 1e-8:
                candidate = beta + size * direction
                if logistic_objective(candidate, x, y, self.penalty) <= start:
                    break
                size *= 0.5
            beta = candidate
        self._H, self._H_inv, self._s, self.beta = hessian, hessian_inv, s, newton
        self._H_pending.clear()
        self._beta_is_model = True

    def _linear_matrix(self) -> np.ndarray:
        """``X^T X`` plus the fit's ridge: ``A`` itself unless the fit's ridge differs from A's."""
        if self._uniform:
            return self.A
        return self.A + _ridge(self.penalty - self.design_l2, self.dim)

    def _absorb(
        self, x: np.ndarray, y: np.ndarray, *, rank_one: bool = True, z: np.ndarray | None = None
    ) -> None:
        """Add the quadratic expansions of the log-loss of ``(x, y)`` at ``beta`` (scores ``z``)."""
        z = x @ self.beta if z is None else z
        p = np.asarray(self.link.mean(z), dtype=float)
        w = np.asarray(self.link.derivative(z), dtype=float)
        # gradient (p - y) x minus H_i beta: the linear term of the expansion
        self._s += x.T @ (p - y - w * z)
        if rank_one:
            for row, weight in zip(x, w, strict=True):
                _rank_one_update(self._H, float(weight), row, row)
                _sherman_morrison(self._H_inv, row, float(weight))
        else:
            self._H += (x * w[:, None]).T @ x

    def hessian(self) -> np.ndarray:
        """Hessian of the penalised loss at ``beta_hat`` (``A`` for the linear link).

        The incremental logistic solver returns the Hessian of its quadratic
        model, which is what it has without a pass over the data.
        """
        if self.link.name == "linear":
            return self._linear_matrix()
        if self.solver == "incremental":
            self._fold_H()
            return self._H
        weights = np.asarray(self.link.derivative(self.X @ self.beta))
        return (self.X * weights[:, None]).T @ self.X + _ridge(self.penalty, self.dim)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return ``mu(x . beta_hat)``."""
        return np.asarray(self.link.mean(x @ self.beta), dtype=float)

    def widths(self, x: np.ndarray) -> np.ndarray:
        """Return ``sqrt(x^T A^{-1} x)`` for each row of ``x``."""
        return np.sqrt(np.maximum(np.einsum("ij,ij->i", x @ self.A_inv, x), 0.0))


def _objective_at(z: np.ndarray, beta: np.ndarray, y: np.ndarray, l2: float | np.ndarray) -> float:
    """:func:`logistic_objective` at ``beta`` from its scores ``z = x @ beta``."""
    penalty = 0.5 * l2 * beta @ beta if np.ndim(l2) == 0 else 0.5 * beta @ (l2 * beta)
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + penalty)


def _rank_one_update(matrix: np.ndarray, alpha: float, u: np.ndarray, v: np.ndarray) -> None:
    """``matrix += alpha * u v^T`` in place, by BLAS ``dger`` (4x faster than ``np.outer``)."""
    # matrix is C-ordered, so its transpose is the Fortran array dger updates in place
    # (and returns); anything else comes back as a copy
    view = matrix.T
    out = dger(alpha, v, u, a=view, overwrite_a=True)
    if out is not view:
        matrix[...] = out.T


def _sherman_morrison(
    inverse: np.ndarray, row: np.ndarray, weight: float, u: np.ndarray | None = None
) -> np.ndarray:
    """Update ``inverse`` of ``M`` in place to the inverse of ``M + weight * row row^T``.

    Returns the gain ``(M + weight * row row^T)^{-1} row``. ``u``: ``inverse @ row``
    if the caller already has it (then it is not recomputed).
    """
    if u is None:
        u = inverse.dot(row)
    denominator = 1.0 + weight * row.dot(u)
    _rank_one_update(inverse, -weight / denominator, u, u)
    return u / denominator


def width_and_product(a_inv: np.ndarray, row: np.ndarray) -> tuple[float, np.ndarray]:
    """Return ``sqrt(x^T A^{-1} x)`` of one applicant ``row`` and the ``A^{-1} x`` it took.

    ``ndarray.dot`` gives the products' bits of ``@`` without its dispatch cost.
    """
    u = a_inv.dot(row)
    return math.sqrt(max(float(row.dot(u)), 0.0)), u
