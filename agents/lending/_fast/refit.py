"""The lean path's Newton refit of an incremental logistic fit, in fewer and cheaper products.

A ``"newton"`` refit (:meth:`GLMEstimator._refit <agents.lending.glm.GLMEstimator._refit>`:
two damped Newton steps from the estimate, then the quadratic model re-expanded
at the result) is most of a default Adaptive's time at a batch of one
(d = 109 on Adult: about 40% of its act / step / update loop). This is the same
algorithm, step for step, with cheaper products:

- each Hessian ``X^T diag(w) X`` as ``R^T R``, ``R = diag(sqrt(w)) X``, by BLAS
  ``syrk`` (half the flops of the readable ``(X W)^T X``), ``R`` made in the
  same pass over ``X`` as the gradient's ``X^T (p - y)`` (a numba loop where
  numba is installed, else NumPy: the same bits; ``OSFB_NUMBA=0`` turns it off);
- the scores of a line-search candidate ``beta - size * step`` as
  ``z - size * (X step)``: one pass over the data per Newton step instead of
  one per candidate tried;
- the Newton systems and the inverses of ``H`` and ``A`` (both symmetric
  positive definite: a ridge plus a Gram matrix) by Cholesky.

These sum in another order than the readable path, so the two agree to
round-off, not bit for bit (a line search's accept test compares objectives,
which round-off moves only where the step changes the objective by less than
its rounding); the lean path run twice is bit for bit. Tested against the
readable path (the same agent fed lists, which take it): the estimate within
the relative tolerance of the lean logistic path, the decisions equal
(``tests/agents/lending/test_lending_agents.py``).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf, dpotri
from scipy.special import expit

from agents.lending.glm import GLMEstimator, _objective_at, _ridge, damped_step
from osfb_gym.core.optional import compiled


def root_and_product(x: np.ndarray, w: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``R = diag(sqrt(w)) X`` and ``X^T c``: one pass over ``X`` where numba is installed.

    ``X^T c`` sums row by row (NumPy's ``add.reduce`` along the rows, or the
    same loop compiled: the same bits either way).
    """
    scale = np.sqrt(w)
    loops = compiled("agents.lending._fast._refit_loops")
    if loops is None:
        return x * scale[:, None], np.add.reduce(x * c[:, None], axis=0)
    root, product = np.empty_like(x), np.empty(x.shape[1])
    loops.root_and_product(x, scale, c, root, product)
    return root, product


def gram(root: np.ndarray) -> np.ndarray:
    """Return ``R^T R`` by BLAS ``syrk`` (C-ordered).

    Examples
    --------
    >>> x, w = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.25, 1.0])
    >>> gram(root_and_product(x, w, np.zeros(2))[0]).tolist()
    [[9.25, 12.5], [12.5, 17.0]]
    """
    return _mirror(dsyrk(1.0, root.T))  # root.T is Fortran-ordered: no copy


def _mirror(upper: np.ndarray) -> np.ndarray:
    """Return the symmetric matrix whose upper triangle ``upper`` holds, C-ordered."""
    strict = np.triu(upper, 1)
    return np.ascontiguousarray(strict + strict.T + np.diag(np.diag(upper)))


def spd_inverse(matrix: np.ndarray) -> np.ndarray:
    """Return the inverse of a symmetric positive definite ``matrix`` by Cholesky (LAPACK).

    Falls back to ``np.linalg.inv`` where the factorisation fails (a matrix
    that round-off left not positive definite).
    """
    factor, info = dpotrf(matrix, lower=False, clean=False)
    if info == 0:
        upper, info = dpotri(factor, lower=False)
        if info == 0:
            return _mirror(upper)
    return np.linalg.inv(matrix)


def _shifted(
    size: float, _candidate: np.ndarray, *, z: np.ndarray, moved: np.ndarray
) -> np.ndarray:
    """Return a candidate's scores as ``z - size * (x @ step)`` (that is, ``x @ candidate``)."""
    return z - size * moved


def _newton(
    x: np.ndarray, y: np.ndarray, l2: float | np.ndarray, beta0: np.ndarray, tol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`agents.lending.glm._newton` with ``max_iter=2``: ``beta`` and its scores ``z``."""
    dim = x.shape[1]
    beta = beta0.astype(float).copy()
    z = x @ beta
    objective = _objective_at(z, beta, y, l2)
    for _ in range(2):
        p = expit(z)
        root, product = root_and_product(x, p * (1.0 - p), p - y)
        gradient = product + l2 * beta
        hessian = gram(root) + _ridge(l2, dim)
        step = cho_solve(cho_factor(hessian), gradient)
        moved = x @ step  # the candidates' scores are z - size * moved
        beta, objective, z, size = damped_step(
            beta,
            step,
            objective,
            y,
            l2,
            functools.partial(_shifted, z=z, moved=moved),
        )
        if np.linalg.norm(size * step) <= tol * (1.0 + np.linalg.norm(beta)):
            break
    return beta, z


def takes(model: GLMEstimator, n: int) -> bool:
    """Whether :func:`refit` refits ``model`` when it holds ``n`` revealed examples.

    Its case: a plain ``GLMEstimator`` with the incremental logistic fit and
    ``"newton"`` refits, whose refit comes at ``n`` (the replicas'
    estimators and the other fits take the readable path).
    """
    return (
        type(model) is GLMEstimator
        and model.solver == "incremental"
        and model.refit == "newton"
        and model.link.name == "logistic"
        and n > (1.0 + model.refit_growth) * model._n_at_refit
    )


def refit(model: GLMEstimator) -> None:
    """``model._refit()`` of an incremental logistic ``"newton"`` fit (see :func:`takes`).

    Then, as ``GLMEstimator.fit`` after it, every revealed example counts as fitted.
    """
    x, y = model.X, model.y
    model.beta, z = _newton(x, y, model.penalty, model.beta)
    # GLMEstimator._absorb of everything at the new estimate, from an empty model
    p = np.asarray(model.link.mean(z), dtype=float)
    w = np.asarray(model.link.derivative(z), dtype=float)
    root, model._s = root_and_product(x, w, p - y - w * z)
    model._H = gram(root) + _ridge(model.penalty, model.dim)
    model._H_inv = spd_inverse(model._H)
    model._H_pending.clear()
    model._beta_is_model = False  # beta is Newton's, the model's minimiser is one step on
    model.A_inv[...] = spd_inverse(model.A)
    model._n_at_refit = model.n
    model.n_refits += 1
    model._n_fitted = model.n


def fit(model: GLMEstimator) -> None:
    """``model.fit()``, by :func:`refit` where it takes the refit (a batch of one's warm start)."""
    if takes(model, model.n):
        refit(model)
    else:
        model.fit()


def learn_row(model: GLMEstimator, row: np.ndarray, target: float, u: np.ndarray | None) -> None:
    """``model.learn_row(row, target, u)`` when :func:`takes` says its refit comes now."""
    model.add_row(row, target, u)
    refit(model)
