"""Adaptive's per-step products and logistic update, compiled by numba around the same BLAS.

A default Adaptive (incremental logistic fit) spends most of a step outside
the refits in a dozen NumPy calls on one row: the width's ``A^{-1} x`` and two
dot products when it decides; on a revealing step, the Sherman-Morrison update
of ``A^{-1}``, the rank-one change of ``H^{-1}`` and the O(d) estimate
(:meth:`~agents.lending.glm.GLMEstimator.learn_row`). Here each is one compiled
call that makes the same BLAS calls NumPy and SciPy make, with the same
arguments (``cblas_dgemv``/``cblas_ddot`` of NumPy's own OpenBLAS, as
``ndarray.dot`` calls them; SciPy's ``dger``, as ``_rank_one_update`` calls it),
and the element-wise rest with the same IEEE operations in the same order
(numba compiles without fast-math: nothing fused or reassociated).

The BLAS functions are called through addresses passed at run time, so the
loops are cached on disk (``cache=True``): a new process loads them instead of
compiling. Used only when numba is installed (``OSFB_NUMBA=0`` turns it off),
NumPy's BLAS is its bundled OpenBLAS, and :func:`kernels` has checked, once
per process and ``dim``, that they give the readable path's bits on seeded
random states; otherwise the readable path runs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from agents.lending.glm import GLMEstimator, _rank_one_update
from osfb_gym.core.links import get_link, logistic
from osfb_gym.core.optional import compiled


def _addresses() -> tuple[int, int, int] | None:
    """NumPy's ``cblas_dgemv`` and ``cblas_ddot`` and SciPy's Fortran ``dger``, or None."""
    from agents.lending._fast.rank_one import _numpy_blas

    numpy_blas = _numpy_blas()
    if numpy_blas is None or not all(numpy_blas):
        return None
    from numba.extending import get_cython_function_address

    dger = get_cython_function_address("scipy.linalg.cython_blas", "dger")
    return numpy_blas[0], numpy_blas[1], int(dger)


class Kernels(NamedTuple):
    """The compiled kernels with their BLAS addresses bound (``functools.partial``)."""

    #: ``act(A_inv, beta, observation, row, u, logistic, cutoff, scale) -> score``: writes the
    #: applicant (``observation`` of shape ``(1, d)``) as float64 into ``row`` and
    #: ``A_inv @ row`` into ``u``; the score is ``mu(row . beta) - cutoff + scale * width``
    act: Callable[..., float]
    #: ``learn(A_inv, H_inv, s, xty, x_store, y_store, n, max_norm, beta, b, b_is_beta, row,
    #: target, u, new) -> (w, max_norm)``: the new estimate written into ``new``
    learn: Callable[..., tuple[float, float]]


@functools.cache
def kernels(dim: int) -> Kernels | None:
    """Return the kernels if they give the readable path's bits at ``dim``.

    Loads numba and the kernels (from the disk cache, else compiling them) at
    the first call; None without numba or NumPy's bundled OpenBLAS.
    """
    if compiled("numba") is None:
        return None
    addresses = _addresses()
    if addresses is None:
        return None
    from agents.lending._fast import _blas_calls

    built = _blas_calls.decide, _blas_calls.learn_logistic_row
    if not _same_means(_blas_calls.logistic_mean) or not _same_bits(built, addresses, dim):
        return None
    gemv, dot, dger = addresses
    return Kernels(
        functools.partial(built[0], gemv, dot), functools.partial(built[1], gemv, dot, dger)
    )


def _same_means(logistic_mean: Callable[[float], float]) -> bool:
    """Whether the compiled logistic mean is SciPy's ``expit``, bit for bit, on a grid of scores."""
    rng = np.random.default_rng(0)
    scores = [0.0, -0.0, 1e-300, 36.7, -36.7, 709.0, -709.0, 745.2, -745.2, math.inf, -math.inf]
    scores += rng.standard_normal(200).tolist() + (50.0 * rng.standard_normal(200)).tolist()
    return all(logistic_mean(z) == float(logistic(z)) for z in scores)


def _same_bits(built: tuple[Any, Any], addresses: tuple[int, int, int], dim: int) -> bool:
    """Whether the kernels give, on seeded random states, exactly NumPy's path."""
    decide, learn_row = built
    rng = np.random.default_rng(dim)
    for trial in range(8):
        A_inv = np.eye(dim) + 0.05 * rng.standard_normal((dim, dim))
        H_inv = np.eye(dim) + 0.05 * rng.standard_normal((dim, dim))
        beta, s, xty = (rng.standard_normal(dim) for _ in range(3))
        obs = rng.standard_normal((1, dim)).astype(np.float32 if trial % 2 else np.float64)
        row = np.asarray(obs, dtype=float)[0]
        target = float(rng.random() < 0.5)
        # the decision: one_row.act's readable products and score
        got_row, got_u = np.empty(dim), np.empty(dim)
        link = get_link("logistic" if trial < 4 else "linear")
        cutoff, scale = float(rng.random()), float(rng.random())
        score = decide(*addresses[:2], A_inv, beta, obs, got_row, got_u,
                       link.name == "logistic", cutoff, scale)  # fmt: skip
        u = A_inv.dot(row)
        mu = float(link.mean(float(row.dot(beta))))
        want_score = mu - cutoff + scale * math.sqrt(max(float(row.dot(u)), 0.0))
        if not (np.array_equal(got_row, row) and np.array_equal(got_u, u) and score == want_score):
            return False
        # a revealing step: add_row's row store, norm, A^{-1}, xty and the logistic learn_row
        x_store, y_store = rng.standard_normal((3, dim)), rng.standard_normal(3)
        max_norm = float(trial % 3)  # under, or (trial 2 at dim <= 4) maybe over the row's norm
        want = [A_inv.copy(), H_inv.copy(), s.copy(), xty.copy(), x_store.copy(), y_store.copy()]
        want[4][1], want[5][1] = row, target
        want_norm = max(max_norm, math.sqrt(row.dot(row)))
        want[3] += row * target
        _rank_one_update(want[0], -1.0 / (1.0 + 1.0 * row.dot(u)), u, u)
        b = beta if trial % 4 < 2 else rng.standard_normal(dim)
        zz = float(row.dot(beta))
        e = math.exp(-abs(zz))
        p = 1.0 / (1.0 + e) if zz >= 0 else e / (1.0 + e)
        w = e / ((1.0 + e) * (1.0 + e))
        c = p - target - w * zz
        xb = zz if b is beta else float(row.dot(b))
        g = want[1].dot(row)
        qq = float(row.dot(g))
        k = w / (1.0 + w * qq)
        _rank_one_update(want[1], -k, g, g)
        want[2] += c * row
        new_beta = b + g * (k * (c * qq - xb) - c)
        got = [A_inv, H_inv, s, xty, x_store, y_store]
        got_beta = np.empty(dim)
        got_w, got_norm = learn_row(
            *addresses, A_inv, H_inv, s, xty, x_store, y_store, 1, max_norm, beta, b, b is beta,
            row, target, u.copy(), got_beta
        )  # fmt: skip
        if got_w != w or got_norm != want_norm or not np.array_equal(got_beta, new_beta):
            return False
        if not all(np.array_equal(a, c_) for a, c_ in zip(got, want, strict=True)):
            return False
    return True


def available(dim: int) -> bool:
    """Whether the per-step path of an agent with ``dim`` features runs compiled.

    False with ``OSFB_NUMBA=0`` (read at each call: an agent reads it at ``reset``).
    """
    return compiled("numba") is not None and kernels(dim) is not None


def learns(model: GLMEstimator) -> bool:
    """Whether :func:`learn_row` takes ``model``'s steps between refits (fixed at its making).

    Its case: the incremental logistic fit of a plain ``GLMEstimator`` (the
    linear link and the replicas' estimators take the readable path).
    """
    return (
        type(model) is GLMEstimator
        and model.solver == "incremental"
        and model.link.name == "logistic"
        and not model._rls
        and kernels(model.dim) is not None
    )


def learn_row(
    model: GLMEstimator,
    row: np.ndarray,
    target: float,
    u: np.ndarray | None,
) -> bool:
    """Run ``model.learn_row(row, target, u)`` by the compiled kernel; False: not its case.

    ``model`` is one :func:`learns` accepted (the caller asks once); its case
    here is a step between refits (a refit takes the readable path, or the
    lean refit's).
    """
    n = model.n
    if (
        n + 1 > (1.0 + model.refit_growth) * model._n_at_refit
        or model._n_fitted != n
        or not model.beta.flags.c_contiguous
    ):
        return False
    if n == len(model._y):
        model._grow(n + 1)
    if u is None:
        u = model.A_inv.dot(row)
    beta = model.beta
    if model._beta_is_model:
        b = beta
    else:
        b = -model._H_inv @ model._s
    fast = kernels(model.dim)
    assert fast is not None, "blas_row.learn_row used where learns() was False"
    new = np.empty(model.dim)  # a fresh estimate (beta_ hands it out)
    w, model.max_norm = fast.learn(
        model.A_inv, model._H_inv, model._s, model.xty, model._x, model._y, n, model.max_norm,
        beta, b, b is beta, row, target, u, new,
    )  # fmt: skip
    model.beta = new
    model.n = n + 1
    model._H_pending.append((n, w))
    model._beta_is_model = True
    model._n_fitted = n + 1
    return True
