"""The compiled loops of :mod:`osfb_gym.envs.services._fast.kernels` (numba; only through it).

Each loop computes, element by element and in the same order, the
floating-point operations of its NumPy twin in ``kernels`` (tested bit for
bit). numba emits no fused multiply-add unless asked (:func:`fma`), never
reassociates a sum (no ``fastmath``), and ``error_model="numpy"`` keeps
IEEE division (no Python ``ZeroDivisionError``). The loops are cached on
disk (``cache=True``): a new process loads them instead of compiling.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic


@intrinsic
def fma(typingctx: Any, a: Any, b: Any, c: Any) -> Any:  # pragma: no cover
    """Return ``a * b + c`` rounded once (LLVM's ``llvm.fma``), as OpenBLAS's kernels round it."""
    signature = types.float64(types.float64, types.float64, types.float64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.fma(*args)

    return signature, codegen


@numba.njit(nogil=True, cache=True, error_model="numpy")
def squared(c0, c1, t0, t1, two, weights, unit):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``kernels.squared_loss`` for ``d <= 2`` (``two``: d == 2)."""
    out = np.empty(c0.size)
    for i in range(c0.size):
        r = c0[i] - t0
        r = r * r
        if two:
            s = c1[i] - t1
            r = r + s * s
        out[i] = r if unit else weights[i] * r
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy")
def huber(c0, c1, t0, t1, two, deltas, half_deltas, weights, unit):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``kernels.huber_loss`` for ``d <= 2``."""
    out = np.empty(c0.size)
    for i in range(c0.size):
        r = c0[i] - t0
        r = r * r
        if two:
            s = c1[i] - t1
            r = r + s * s
        r = np.sqrt(r)
        value = (0.5 * r) * r
        if r > deltas[i]:
            value = (r - half_deltas[i]) * deltas[i]
        out[i] = value if unit else value * weights[i]
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy")
def cosine(p, t0, t1, two, scale, norms, weights):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``kernels.cosine_loss`` for ``d <= 2``; ``p @ theta`` rounded as NumPy's product does.

    NumPy hands ``p @ theta`` to OpenBLAS's ``dgemv``, which (on this
    project's machines) rounds each row's dot product as ``fma(p_0, t_0,
    p_1 t_1)``; a single row NumPy multiplies and adds itself
    (``p_0 t_0 + p_1 t_1``). ``kernels.pick`` checks each world before it
    uses this loop.
    """
    n = p.shape[0]
    out = np.empty(n)
    for i in range(n):
        if not two:
            dot = p[i, 0] * t0
        elif n == 1:
            dot = p[i, 0] * t0 + p[i, 1] * t1
        else:
            dot = fma(p[i, 0], t0, p[i, 1] * t1)
        value = 1.0 - dot / (scale * norms[i])
        value = value if (value >= 0.0 or value != value) else 0.0  # np.maximum(value, 0.0)
        out[i] = value * weights[i]
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy")
def mahalanobis(  # type: ignore[no-untyped-def]  # pragma: no cover
    c0, c1, t0, t1, two, index, matrices, alone, weights, offsets, has_offsets
):
    """``kernels.mahalanobis_loss`` for ``d <= 2``; ``diff @ M`` rounded as NumPy's product does.

    ``matrices`` is ``(m, d * d)``. NumPy hands the product of a matrix's
    users' differences with it to OpenBLAS's ``dgemm``, which (on this
    project's machines) rounds ``(diff @ M)_j`` as ``fma(diff_1, M_1j,
    diff_0 M_0j)``; a matrix with one user (``alone``) NumPy multiplies
    and adds itself (``diff_0 M_0j + diff_1 M_1j``). ``kernels.pick``
    checks each world before it uses this loop. The quadratic form is
    einsum's ``0.0 + (p_0 d_0 + p_1 d_1)``, then ``np.maximum(q, 0.0)``,
    the weight, the offset.
    """
    out = np.empty(c0.size)
    for i in range(c0.size):
        k = index[i]
        d0 = c0[i] - t0
        if not two:
            q = 0.0 + (d0 * matrices[k, 0]) * d0
        else:
            d1 = c1[i] - t1
            if alone[k]:
                p0 = d0 * matrices[k, 0] + d1 * matrices[k, 2]
                p1 = d0 * matrices[k, 1] + d1 * matrices[k, 3]
            else:
                p0 = fma(d1, matrices[k, 2], d0 * matrices[k, 0])
                p1 = fma(d1, matrices[k, 3], d0 * matrices[k, 1])
            q = 0.0 + (p0 * d0 + p1 * d1)
        q = q if (q >= 0.0 or q != q) else 0.0
        value = q * weights[i]
        out[i] = value + offsets[i] if has_offsets else value
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy")
def update_best(losses, best, choice, t):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``kernels.update_best``: ``choice = t`` where ``losses < best``, ``best = minimum``."""
    for i in range(losses.size):
        value, current = losses[i], best[i]
        # np.minimum keeps the first operand unless the second is smaller, NaN
        # propagating; the arrays are written only where they change
        if not (current <= value or current != current):
            best[i] = value
            if value < current:
                choice[i] = t


@numba.njit(nogil=True, cache=True, error_model="numpy")
def group_averages(losses, order, starts, divisor, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``GroupAverages``' ``bincount`` and division: each group's sum in user order.

    ``order`` lists each group's users in ascending order, group after
    group (``starts``); a group's sum adds its users' losses one by one
    from 0.0 in that order, as ``bincount`` adds them, two groups' sums at
    a time (independent chains of additions). Empty groups get NaN.
    """
    n_groups = starts.size - 1
    for g in range(0, n_groups, 2):
        a, a_stop = starts[g], starts[g + 1]
        total_a = 0.0
        if g + 1 < n_groups:
            b, b_stop = starts[g + 1], starts[g + 2]
            total_b = 0.0
            while a < a_stop and b < b_stop:
                total_a += losses[order[a]]
                total_b += losses[order[b]]
                a += 1
                b += 1
            while b < b_stop:
                total_b += losses[order[b]]
                b += 1
            empty = starts[g + 1] == starts[g + 2]
            out[g + 1] = np.nan if empty else total_b / divisor[g + 1]
        while a < a_stop:
            total_a += losses[order[a]]
            a += 1
        out[g] = np.nan if starts[g] == starts[g + 1] else total_a / divisor[g]
    return out


# ------------------------------------------------------------------ the env's step, fused
@numba.njit(nogil=True, cache=True, error_model="numpy")
def _block_sum(values, start, n):  # type: ignore[no-untyped-def]  # pragma: no cover
    """NumPy's pairwise sum of at most 128 values (below 8 one by one, else 8 running sums)."""
    if n < 8:
        total = -0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    r0, r1, r2, r3 = values[start], values[start + 1], values[start + 2], values[start + 3]
    r4, r5, r6, r7 = values[start + 4], values[start + 5], values[start + 6], values[start + 7]
    i = start + 8
    stop = start + n - n % 8
    while i < stop:
        r0 += values[i]
        r1 += values[i + 1]
        r2 += values[i + 2]
        r3 += values[i + 3]
        r4 += values[i + 4]
        r5 += values[i + 5]
        r6 += values[i + 6]
        r7 += values[i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < start + n:
        total += values[i]
        i += 1
    return total


@numba.njit(nogil=True, cache=True, error_model="numpy")
def pairwise_sum(values):  # type: ignore[no-untyped-def]  # pragma: no cover
    """``np.add.reduce`` of a contiguous ``float64`` vector: ``0.0 +`` NumPy's pairwise sum.

    NumPy's loop for ``float64`` (``pairwise_sum_DOUBLE``): fewer than 8
    values added one by one; up to 128 in 8 running sums, combined as
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the rest one
    by one; above 128 the two halves (the first a multiple of 8) summed
    alike and added. NumPy recurses; here a stack of spans does (numba's
    cache does not keep recursive functions safely), the same sums in the
    same tree (tested against ``np.add.reduce`` on many sizes).
    """
    n = values.size
    if n <= 128:
        return 0.0 + _block_sum(values, 0, n)
    # spans to do (a negative length: add the last two sums), and the sums done
    starts = np.empty(128, dtype=np.int64)
    lengths = np.empty(128, dtype=np.int64)
    sums = np.empty(128)
    starts[0], lengths[0] = 0, n
    todo, done = 1, 0
    while todo > 0:
        todo -= 1
        start, length = starts[todo], lengths[todo]
        if length < 0:
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]
        elif length <= 128:
            sums[done] = _block_sum(values, start, length)
            done += 1
        else:
            half = length // 2
            half -= half % 8
            # done in the order: first half, second half, their sum
            starts[todo], lengths[todo] = 0, -1
            starts[todo + 1], lengths[todo + 1] = start + half, length - half
            starts[todo + 2], lengths[todo + 2] = start, half
            todo += 3
    return 0.0 + sums[0]


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _report(  # type: ignore[no-untyped-def]  # pragma: no cover
    best,
    choice,
    minimum,
    excess,
    user,
    reported,
    reported32,
    choices,
    revealed,
    out,
    groups,
    view,
    count,
):
    """``kernels.report`` into the arrays given, and the plain view's vector where asked.

    ``revealed``: the mask of ``user``. (The caller allocates the arrays:
    one made here would be handed back through numba's boxing, which costs
    more than NumPy's ``empty``.)
    ``reported32`` of size 0: no ``float32`` copy. ``view``: ``(at of the
    squashed losses, or -1 for no vector; the choices' code table, divisor,
    at; the groups' code table, divisor, at, or -1 without groups; the at
    of the count of services, whose code is ``count``)``; the
    vector's entries are the view writers' arithmetic (``squash`` of the
    ``float32`` loss, the codes' table or ``code / divisor``).
    """
    losses_at, choice_table, choice_divisor, choices_at = view[0], view[1], view[2], view[3]
    group_table, group_divisor, groups_at, count_at = view[4], view[5], view[6], view[7]
    if losses_at >= 0:
        out[count_at] = np.float32(count)
    keep32 = reported32.size > 0
    m_choices, m_groups = choice_table.size, group_table.size
    for i in range(best.size):
        value = best[i] - minimum[i] if excess else best[i]
        reported[i] = value
        value32 = np.float32(value)  # astype's rounding (to nearest, ties to even)
        if keep32:
            reported32[i] = value32
        code = choice[i]
        choices[i] = code
        revealed[i] = i == user
        if losses_at >= 0:
            v = np.float64(value32)
            out[losses_at + i] = v / (abs(v) + 1.0)
            # a code's table entry, or code / divisor outside the table (written out:
            # a call per user to a shared function would cost more than the loop)
            if 0 <= code < m_choices:
                out[choices_at + i] = choice_table[code]
            else:
                out[choices_at + i] = np.float32(np.float64(code) / choice_divisor)
            if groups_at >= 0:
                group = groups[i]
                if 0 <= group < m_groups:
                    out[groups_at + i] = group_table[group]
                else:
                    out[groups_at + i] = np.float32(np.float64(group) / group_divisor)
    total = pairwise_sum(best)
    return total, pairwise_sum(reported) if excess else total


@numba.njit(nogil=True, cache=True, error_model="numpy")
def settle(  # type: ignore[no-untyped-def]  # pragma: no cover
    losses,
    user,
    theta,
    best,
    choice,
    t,
    minimum,
    excess,
    services,
    reported,
    reported32,
    choices,
    revealed,
    out,
    groups,
    view,
    count,
):
    """``kernels.settle`` after its losses, in one loop, then :func:`_report`.

    ``t == 0``: ``best = losses``, every choice 0; else :func:`update_best`.
    """
    for j in range(theta.size):
        services[t, j] = theta[j]
    if t == 0:
        for i in range(losses.size):
            best[i] = losses[i]
            choice[i] = 0
    else:
        update_best(losses, best, choice, t)
    return _report(
        best,
        choice,
        minimum,
        excess,
        user,
        reported,
        reported32,
        choices,
        revealed,
        out,
        groups,
        view,
        count,
    )


@numba.njit(nogil=True, cache=True, error_model="numpy")
def settle_squared(  # type: ignore[no-untyped-def]  # pragma: no cover
    preferences,
    user,
    weights,
    best,
    choice,
    t,
    minimum,
    excess,
    services,
    reported,
    reported32,
    choices,
    revealed,
    out,
    groups,
    view,
    count,
):
    """:func:`settle` of :func:`squared`'s losses (``d <= 2``), each computed where it is used.

    The service is user ``user``'s preference. Each loss is
    ``w_i * r_i``: with unit weights the NumPy kernel skips the product,
    and ``1.0 * r`` is ``r`` bit for bit (``r`` a sum of squares, never
    ``-0.0``), so no per-world check of the weights is needed.
    """
    d = preferences.shape[1]
    t0, t1 = preferences[user, 0], preferences[user, d - 1]
    for j in range(d):
        services[t, j] = preferences[user, j]
    two = d == 2
    for i in range(preferences.shape[0]):
        r = preferences[i, 0] - t0
        r = r * r
        if two:
            s = preferences[i, 1] - t1
            r = r + s * s
        value = weights[i] * r
        if t == 0:
            best[i] = value
            choice[i] = 0
            continue
        current = best[i]
        if not (current <= value or current != current):
            best[i] = value
            if value < current:
                choice[i] = t
    return _report(
        best,
        choice,
        minimum,
        excess,
        user,
        reported,
        reported32,
        choices,
        revealed,
        out,
        groups,
        view,
        count,
    )
