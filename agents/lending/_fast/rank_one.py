"""BLAS ``dger`` on many states' ``A^{-1}`` at once: one call instead of one per state.

:class:`~agents.lending._fast.shared_rls.SharedRLS` updates each state's ``A^{-1}``
with ``dger`` where a stacked NumPy expression would not round as ``dger``
does (OpenBLAS fuses the multiply-add from 16 columns up). Called from
Python, each ``dger`` costs a few microseconds of wrapper for a few
hundred flops. :func:`rank_one_each` makes the same calls, to the same
BLAS function (SciPy's ``dger``, which ``scipy.linalg.blas.dger`` wraps),
with the same arguments, from a loop compiled by numba when numba is
installed (the optional ``fast`` extra); without it, or with the
environment variable ``OSFB_NUMBA=0``, the loop is Python's. Both give the
same bits (tested).

The one-row update of a paper's grid is compiled too (:func:`one_row_kernel`),
and, when NumPy's BLAS is its bundled OpenBLAS, with its products
(:func:`one_row_blas_kernel`: the ``cblas_dgemv``/``cblas_ddot`` that
``np.matmul`` calls, called with its arguments).
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg.blas import dger

from osfb_gym.core.optional import compiled

_resolved: list[Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]] = []
_one_row: list[Callable[..., np.ndarray]] = []  # the compiled one-row update, once resolved
# the one-row update with NumPy's own BLAS products compiled in (when NumPy's BLAS is found)
_one_row_blas: list[Callable[..., np.ndarray]] = []


def _numpy_blas() -> tuple[int, int] | None:
    """Addresses of ``cblas_dgemv`` and ``cblas_ddot`` in NumPy's own OpenBLAS, or None.

    The functions ``np.matmul`` calls for a matrix-vector product and a dot product
    (NumPy's wheels bundle ``scipy-openblas64``: 64-bit integers, the ``scipy_``
    prefix and ``64_`` suffix); None for any other build.
    """
    import glob

    folder = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    names = glob.glob(os.path.join(folder, "libscipy_openblas64_*.so"))
    if len(names) != 1:
        return None
    try:
        library = ctypes.CDLL(names[0])  # already loaded by NumPy: the same handle
        gemv, dot = library.scipy_cblas_dgemv64_, library.scipy_cblas_ddot64_
    except (OSError, AttributeError):
        return None
    pointer = ctypes.c_void_p
    return (ctypes.cast(gemv, pointer).value or 0), (ctypes.cast(dot, pointer).value or 0)


def rank_one_each_python(
    A_inv: np.ndarray, slots: np.ndarray, gains: np.ndarray, alphas: np.ndarray
) -> None:
    """``A_inv[s] += alpha u u^T`` for each (slot, gain row, alpha), by BLAS ``dger``, in order.

    ``A_inv`` is a C-ordered float64 stack of square matrices: each
    ``A_inv[s]``'s transpose is the Fortran array ``dger`` updates in place.
    """
    for slot, u, alpha in zip(slots.tolist(), gains, alphas.tolist(), strict=True):
        dger(alpha, u, u, a=A_inv[slot].T, overwrite_a=True)


def _blas_dger() -> Callable[..., None]:
    """SciPy's Fortran ``dger`` as a ctypes function numba can call."""
    from numba.extending import get_cython_function_address

    # Fortran dger(m, n, alpha, x, incx, y, incy, a, lda): every argument by reference
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 9)
    return signature(get_cython_function_address("scipy.linalg.cython_blas", "dger"))  # type: ignore[no-any-return]


def _numpy_products() -> tuple[Callable[..., None], Callable[..., float]] | None:
    """NumPy's own ``cblas_dgemv`` and ``cblas_ddot`` as ctypes functions, or None."""
    addresses = _numpy_blas()
    if addresses is None or not all(addresses):
        return None
    pointer, integer, size, real = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double
    # cblas_dgemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), ILP64
    numpy_gemv = ctypes.CFUNCTYPE(None, integer, integer, size, size, real, pointer, size,
                                  pointer, size, real, pointer, size)(addresses[0])  # fmt: skip
    numpy_dot = ctypes.CFUNCTYPE(real, size, pointer, size, pointer, size)(addresses[1])
    return numpy_gemv, numpy_dot


def _dger_loop(numba: Any, blas_dger: Callable[..., None]) -> Callable[..., None]:
    """Compile the loop of :func:`rank_one_each_python`'s ``dger`` calls."""

    # not cached on disk: the BLAS function's address is this process's
    @numba.njit(nogil=True)
    def loop(A_inv, slots, gains, alphas):  # type: ignore[no-untyped-def]  # pragma: no cover
        dim = np.full(1, A_inv.shape[1], dtype=np.int32)  # m = n = lda
        one = np.ones(1, dtype=np.int32)  # incx = incy
        alpha = np.empty(1)
        for k in range(slots.size):
            alpha[0] = alphas[k]
            u = gains[k]
            blas_dger(dim.ctypes, dim.ctypes, alpha.ctypes, u.ctypes, one.ctypes, u.ctypes,
                      one.ctypes, A_inv[slots[k]].ctypes, dim.ctypes)  # fmt: skip

    return loop  # type: ignore[no-any-return]


def _one_row_loop(numba: Any, blas_dger: Callable[..., None]) -> Callable[..., np.ndarray]:
    """Compile :func:`one_row_kernel`'s update."""

    @numba.njit(nogil=True)
    def one_row(A_inv, xty, rls_beta, beta, n, refit_limit, slots, row, target, gains,
                denominators, predicted, batched):  # type: ignore[no-untyped-def]  # fmt: skip  # pragma: no cover
        refit = np.empty(slots.size, dtype=np.intp)  # the slots to refit, in order
        count = 0
        dim = np.full(1, A_inv.shape[1], dtype=np.int32)
        one = np.ones(1, dtype=np.int32)
        alpha = np.empty(1)
        scaled = row * target
        for k in range(slots.size):
            s = slots[k]
            for j in range(row.size):
                xty[s, j] = xty[s, j] + scaled[j]
            a = -1.0 / denominators[k]
            u = gains[k]
            if batched:
                for i in range(row.size):
                    left = a * u[i]
                    for j in range(row.size):
                        A_inv[s, i, j] = A_inv[s, i, j] + left * u[j]
            else:
                alpha[0] = a
                blas_dger(dim.ctypes, dim.ctypes, alpha.ctypes, u.ctypes, one.ctypes, u.ctypes,
                          one.ctypes, A_inv[s].ctypes, dim.ctypes)  # fmt: skip
            error = target - predicted[k]
            for j in range(row.size):
                value = rls_beta[s, j] + (u[j] / denominators[k]) * error
                rls_beta[s, j] = value
                beta[s, j] = value
            n[s] = n[s] + 1
            if n[s] > refit_limit[s]:
                refit[count] = s
                count += 1
        return refit[:count]

    return one_row  # type: ignore[no-any-return]


def _one_row_blas_loop(
    numba: Any,
    one_row: Callable[..., np.ndarray],
    numpy_gemv: Callable[..., None],
    numpy_dot: Callable[..., float],
) -> Callable[..., np.ndarray]:
    """Compile :func:`one_row_blas_kernel`: NumPy's BLAS products, then ``one_row``."""

    @numba.njit(nogil=True)
    def one_row_blas(A_inv, xty, rls_beta, beta, n, refit_limit, slots, row, target,
                     gains, batched):  # type: ignore[no-untyped-def]  # fmt: skip  # pragma: no cover
        dim = row.size
        denominators = np.empty(slots.size)
        predicted = np.empty(slots.size)
        for k in range(slots.size):
            s = slots[k]
            # A_inv[s] @ row, row @ gain, row @ rls_beta[s]: NumPy's calls (row-major,
            # no transpose: what np.matmul hands OpenBLAS for a C-ordered matrix)
            numpy_gemv(101, 111, dim, dim, 1.0, A_inv[s].ctypes, dim, row.ctypes, 1, 0.0,
                       gains[k].ctypes, 1)  # fmt: skip
            denominators[k] = 1.0 + numpy_dot(dim, row.ctypes, 1, gains[k].ctypes, 1)
            predicted[k] = numpy_dot(dim, row.ctypes, 1, rls_beta[s].ctypes, 1)
        return one_row(A_inv, xty, rls_beta, beta, n, refit_limit, slots, row, target,
                       gains, denominators, predicted, batched)  # fmt: skip

    return one_row_blas  # type: ignore[no-any-return]


def _compiled() -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None:
    """Return the numba loop over SciPy's ``dger`` (None without numba, or with OSFB_NUMBA=0).

    Also compiles the one-row update (and, when NumPy's BLAS is found, the one with its
    products compiled in) into ``_one_row`` and ``_one_row_blas``.
    """
    numba = compiled("numba")
    if numba is None:
        return None
    blas_dger = _blas_dger()
    loop = _dger_loop(numba, blas_dger)
    one_row = _one_row_loop(numba, blas_dger)
    _one_row.append(one_row)
    products = _numpy_products()
    if products is not None:
        _one_row_blas.append(_one_row_blas_loop(numba, one_row, *products))

    def run(A_inv: np.ndarray, slots: np.ndarray, gains: np.ndarray, alphas: np.ndarray) -> None:
        assert A_inv.flags.c_contiguous and A_inv.dtype == np.float64
        loop(
            A_inv,
            np.ascontiguousarray(slots, dtype=np.intp),
            np.ascontiguousarray(gains, dtype=np.float64),
            np.ascontiguousarray(alphas, dtype=np.float64),
        )

    return run


def rank_one_each(
    A_inv: np.ndarray, slots: np.ndarray, gains: np.ndarray, alphas: np.ndarray
) -> None:
    """:func:`rank_one_each_python`'s calls, from the numba loop when it is available.

    numba is imported (and the loop compiled, or read from its cache) at the first call.
    """
    if not _resolved:
        _resolved.append(_compiled() or rank_one_each_python)
    _resolved[0](A_inv, slots, gains, alphas)


def warm() -> bool:
    """Compile the numba loops now (a forked child then inherits them); whether numba's run."""
    A_inv = np.zeros((1, 2, 2))
    rank_one_each(A_inv, np.zeros(1, dtype=np.intp), np.ones((1, 2)), np.ones(1))
    kernel = one_row_kernel()
    if kernel is not None:
        vectors = [np.zeros((1, 2)) for _ in range(3)]
        kernel(A_inv, *vectors, np.zeros(1, dtype=np.int64), np.zeros(1),
               np.zeros(1, dtype=np.intp), np.ones(2), 1.0, np.ones((1, 2)), np.ones(1),
               np.zeros(1), True)  # fmt: skip
    blas = one_row_blas_kernel()
    if blas is not None:
        vectors = [np.zeros((1, 2)) for _ in range(3)]
        blas(A_inv, *vectors, np.zeros(1, dtype=np.int64), np.zeros(1),
             np.zeros(1, dtype=np.intp), np.ones(2), 1.0, np.ones((1, 2)), True)  # fmt: skip
    return _resolved[0] is not rank_one_each_python


def one_row_blas_kernel() -> Callable[..., np.ndarray] | None:
    """Return :func:`one_row_kernel` with the BLAS products before it compiled in, or None.

    ``kernel(A_inv, xty, rls_beta, beta, n, refit_limit, slots, row, target, gains,
    batched)``: each state's gain ``A_inv[s] @ row``, ``1 + row @ gain`` and
    ``row @ rls_beta[s]`` by the ``cblas_dgemv``/``cblas_ddot`` of NumPy's own
    OpenBLAS, called as ``np.matmul`` calls them (``gains`` is scratch, one row per
    slot), then :func:`one_row_kernel`'s update. None without numba or when NumPy's
    BLAS is not the bundled OpenBLAS; ``SharedRLS`` also checks it against NumPy's
    products, bit for bit, for its ``dim`` before using it.
    """
    one_row_kernel()
    return _one_row_blas[0] if _one_row_blas else None


@functools.cache
def compiled_blas_is_numpys(dim: int, batched: bool, trials: int = 16) -> bool:
    """Whether :func:`one_row_blas_kernel` gives NumPy's products' bits at ``dim``.

    It calls the ``cblas_dgemv`` and ``cblas_ddot`` that ``np.matmul`` calls; this
    checks, on seeded random states, that it gives exactly what NumPy's products
    followed by :func:`one_row_kernel` give (``batched``: the rank-one update
    element-wise, as ``SharedRLS`` runs it at this ``dim``, else ``dger``).
    """
    blas, kernel = one_row_blas_kernel(), one_row_kernel()
    if blas is None or kernel is None:
        return False
    rng = np.random.default_rng(dim + 2)
    for _ in range(trials):
        A_inv = np.eye(dim) + 0.1 * rng.standard_normal((5, dim, dim))
        vectors = [rng.standard_normal((5, dim)) for _ in range(3)]  # xty, rls_beta, beta
        n, limit = rng.integers(1, 50, 5), rng.integers(1, 60, 5).astype(float)
        slots = rng.choice(5, 3, replace=False).astype(np.intp)
        row, target = rng.standard_normal(dim), float(rng.random())
        want = [A_inv.copy(), *(v.copy() for v in vectors), n.copy(), limit.copy()]
        gains = np.matmul(want[0][slots], row[:, None])[:, :, 0]
        denominators = 1.0 + np.matmul(row, gains[:, :, None])[:, 0]
        predicted = np.matmul(row, want[2][slots][:, :, None])[:, 0]
        expected = kernel(*want, slots, row, target, gains, denominators, predicted, batched)
        got = [A_inv, *vectors, n, limit]
        refits = blas(*got, slots, row, target, np.empty((5, dim)), batched)
        if not np.array_equal(refits, expected):
            return False
        if not all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)):
            return False
    return True


def one_row_kernel() -> Callable[..., np.ndarray] | None:
    """Return the compiled end of ``SharedRLS._learn_one_row``, or None without numba.

    Given the step's gains, denominators and predictions (computed by NumPy's BLAS,
    as without it), it does, state by state, the element-wise rest with the same
    IEEE operations in the same order (numba compiles without fast-math: no fused
    or reassociated arithmetic): ``xty``, the rank-one update (element-wise where
    NumPy's rounds as ``dger``, else ``dger`` itself), ``beta``, ``n`` and the
    refit test; it returns the slots due for a refit, in order.
    """
    if not _resolved:
        _resolved.append(_compiled() or rank_one_each_python)
    return _one_row[0] if _one_row else None
