"""The services agents' draw as one compiled loop (numba; imported only through ``base``).

:func:`draw_loop` computes what ``p /= total``, ``np.cumsum(p, out=p)``,
``p / p[-1]`` and ``searchsorted(u, side="right")`` compute, in the same
order (the cumulative sum is sequential, each quotient IEEE's), in one pass
and a binary search that divides only the entries it reads: the same
user, tested against the NumPy path. ``error_model="numpy"`` keeps IEEE
division; the loop is cached on disk.
"""

from __future__ import annotations

import numba


@numba.njit(nogil=True, cache=True, error_model="numpy")
def draw_loop(p, total, u):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Overwrite ``p`` with the cumulative sum of ``p / total``; return the user ``u`` picks.

    The search is NumPy's ``searchsorted(side="right")`` on ``cumsum /
    cumsum[-1]``: the first index whose value is not <= ``u`` in NumPy's
    NaN-last order.
    """
    n = p.size
    running = p[0] / total
    p[0] = running
    for i in range(1, n):
        running = running + p[i] / total
        p[i] = running
    last = p[n - 1]
    low, high = 0, n
    while low < high:
        mid = low + ((high - low) >> 1)
        value = p[mid] / last
        if u < value or value != value:
            high = mid
        else:
            low = mid + 1
    return low
