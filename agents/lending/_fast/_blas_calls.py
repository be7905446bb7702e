"""The numba kernels of :mod:`agents.lending._fast.blas_row` (imported only with numba).

The BLAS functions are called through addresses given at run time (not
constants of the compiled code), so the kernels are cached on disk.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_F64 = ir.DoubleType()
_I32, _I64 = ir.IntType(32), ir.IntType(64)
_PTR = _F64.as_pointer()


def _contiguous(*arrays: Any) -> bool:
    """Whether every argument is a C-contiguous float64 array (what the BLAS calls assume)."""
    return all(
        isinstance(a, types.Array) and a.layout == "C" and a.dtype == types.float64 for a in arrays
    )


def _data(context: Any, builder: Any, array_type: Any, value: Any) -> Any:
    """Return the ``double *`` of an array argument."""
    array = context.make_array(array_type)(context, builder, value)
    return builder.bitcast(array.data, _PTR)


@intrinsic
def _ddot(typingctx: Any, address: Any, x: Any, y: Any) -> Any:  # pragma: no cover
    """``cblas_ddot(n, x, 1, y, 1)`` (ILP64) at ``address``: what ``x.dot(y)`` calls."""
    if not _contiguous(x, y):
        return None  # a typing error, never a wrong product
    signature = types.float64(address, x, y)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        function_type = ir.FunctionType(_F64, [_I64, _PTR, _I64, _PTR, _I64])
        function = builder.inttoptr(args[0], function_type.as_pointer())
        n = builder.extract_value(
            context.make_array(sig.args[1])(context, builder, args[1]).shape, 0
        )
        x_data = _data(context, builder, sig.args[1], args[1])
        y_data = _data(context, builder, sig.args[2], args[2])
        one = _I64(1)
        return builder.call(function, [n, x_data, one, y_data, one])

    return signature, codegen


@intrinsic
def _dgemv(typingctx: Any, address: Any, a: Any, x: Any, y: Any) -> Any:  # pragma: no cover
    """``y = a @ x`` by ``cblas_dgemv(RowMajor, NoTrans, ...)`` (ILP64): what ``a.dot(x)`` calls."""
    if not _contiguous(a, x, y):
        return None
    signature = types.void(address, a, x, y)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        function_type = ir.FunctionType(
            ir.VoidType(), [_I32, _I32, _I64, _I64, _F64, _PTR, _I64, _PTR, _I64, _F64, _PTR, _I64]
        )
        function = builder.inttoptr(args[0], function_type.as_pointer())
        shape = context.make_array(sig.args[1])(context, builder, args[1]).shape
        m, n = builder.extract_value(shape, 0), builder.extract_value(shape, 1)
        a_data = _data(context, builder, sig.args[1], args[1])
        x_data = _data(context, builder, sig.args[2], args[2])
        y_data = _data(context, builder, sig.args[3], args[3])
        one = _I64(1)
        builder.call(
            function,
            [_I32(101), _I32(111), m, n, _F64(1.0), a_data, n, x_data, one, _F64(0.0), y_data, one],
        )
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def _dger(typingctx: Any, address: Any, alpha: Any, x: Any, a: Any) -> Any:  # pragma: no cover
    """Add ``alpha x x^T`` to ``a`` by SciPy's Fortran ``dger`` on its transpose.

    The call ``_rank_one_update`` makes.
    """
    if not _contiguous(x, a):
        return None
    signature = types.void(address, alpha, x, a)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        int_ptr = _I32.as_pointer()
        function_type = ir.FunctionType(
            ir.VoidType(), [int_ptr, int_ptr, _PTR, _PTR, int_ptr, _PTR, int_ptr, _PTR, int_ptr]
        )
        function = builder.inttoptr(args[0], function_type.as_pointer())
        shape = context.make_array(sig.args[2])(context, builder, args[2]).shape
        dim = cgutils.alloca_once_value(
            builder, builder.trunc(builder.extract_value(shape, 0), _I32)
        )
        one = cgutils.alloca_once_value(builder, _I32(1))
        alpha = cgutils.alloca_once_value(builder, args[1])
        x_data = _data(context, builder, sig.args[2], args[2])
        a_data = _data(context, builder, sig.args[3], args[3])
        builder.call(function, [dim, dim, alpha, x_data, one, x_data, one, a_data, dim])
        return context.get_dummy_value()

    return signature, codegen


@numba.njit(nogil=True, cache=True)
def logistic_mean(z):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``scipy.special.expit(z)``: SciPy computes ``1 / (1 + exp(-z))`` (checked at load)."""
    return 1.0 / (1.0 + math.exp(-z))


@numba.njit(nogil=True, cache=True)
def decide(gemv, dot, A_inv, beta, observation, row, u, logistic, cutoff, scale):  # type: ignore[no-untyped-def]  # fmt: skip  # noqa: E501  # pragma: no cover
    """Return the score ``mu(row . beta) - cutoff + scale * sqrt(max(row . u, 0))``.

    ``observation`` is the batch of one, shape ``(1, d)``: its applicant is
    written as float64 into ``row``, ``A_inv @ row`` into ``u``; ``mu`` is the
    logistic link's mean if ``logistic``, else the identity.
    """
    for j in range(row.size):
        row[j] = observation[0, j]
    z = _ddot(dot, row, beta)
    _dgemv(gemv, A_inv, row, u)
    q = _ddot(dot, row, u)
    mu = logistic_mean(z) if logistic else z
    return mu - cutoff + scale * math.sqrt(0.0 if 0.0 > q else q)  # Python's max(q, 0.0)


@numba.njit(nogil=True, cache=True)
def learn_logistic_row(gemv, dot, dger, A_inv, H_inv, s, xty, x_store, y_store, n, max_norm,
                       beta, b, b_is_beta, row, target, u, new):  # type: ignore[no-untyped-def]  # fmt: skip  # pragma: no cover
    """``GLMEstimator.add_row`` and the incremental logistic ``learn_row`` on arrays.

    Stores the example at position ``n`` of ``x_store`` and ``y_store`` (room
    made by the caller); updates ``xty``, ``A_inv`` (``u = A_inv @ row``
    given), ``H_inv`` and ``s`` in place; writes the new estimate into ``new``
    (given by the caller: an array made here would be boxed at each return);
    returns the example's weight ``w`` and the new largest row norm
    (``max_norm`` or this row's).
    """
    d = row.size
    for j in range(d):
        x_store[n, j] = row[j]
    y_store[n] = target
    norm = math.sqrt(_ddot(dot, row, row))
    if norm > max_norm:  # Python's max(max_norm, norm): the first of equals
        max_norm = norm
    for j in range(d):
        xty[j] = xty[j] + row[j] * target
    _dger(dger, -1.0 / (1.0 + 1.0 * _ddot(dot, row, u)), u, A_inv)
    z = _ddot(dot, row, beta)
    e = math.exp(-abs(z))
    p = 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)
    w = e / ((1.0 + e) * (1.0 + e))
    c = p - target - w * z
    xb = z if b_is_beta else _ddot(dot, row, b)
    g = np.empty(d)
    _dgemv(gemv, H_inv, row, g)
    q = _ddot(dot, row, g)
    k = w / (1.0 + w * q)
    _dger(dger, -k, g, H_inv)
    for j in range(d):
        s[j] = s[j] + c * row[j]
    factor = k * (c * q - xb) - c
    for j in range(d):
        new[j] = b[j] + g[j] * factor
    return w, max_norm
