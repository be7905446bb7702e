"""The arithmetic between a synthetic world's draws, in compiled loops (numba).

Imported only through :mod:`osfb_gym.envs.services.populations` (by
:func:`osfb_gym.core.optional.compiled`). The random numbers stay NumPy's:
the builders draw them with the world's generator, in v0's order, and
hand them here; each loop then does, element by element and in the same
order, the floating-point operations of the NumPy lines it replaces
(cumulative sums, one reciprocal, divisions, a search, gathers, one
product and one sum per coordinate; no fused multiply-add, no
reassociation), so the world is the same bit for bit (tested against the
NumPy path). One call instead of 5-9 NumPy calls: a world is drawn at every
reset of an RL episode, and each NumPy call costs more than its arithmetic
on arrays of a few hundred values. Cached on disk (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(nogil=True, cache=True)
def labels(draws, uniforms, out):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """``cluster_labels`` before its shuffle, in ``out``: every cluster once, then the drawn ones.

    ``draws``: the ``k`` standard exponentials of the Dirichlet(1) shares;
    ``uniforms``: the ``n - k`` uniforms of ``choice``'s inverse-CDF search;
    ``out``: ``n`` int64. (Written in place, not returned: boxing a returned
    array costs a call more than the loop at these sizes.)
    """
    k = draws.size
    # dirichlet_ones: the shares, each draw times the inverse of their ordered sum
    total = draws[0]
    for i in range(1, k):
        total = total + draws[i]
    inverse = 1.0 / total
    # choice: the cumulative sum of the shares, divided by its last entry
    cdf = np.empty(k)
    running = draws[0] * inverse
    cdf[0] = running
    for i in range(1, k):
        running = running + draws[i] * inverse
        cdf[i] = running
    last = cdf[k - 1]
    for i in range(k):
        cdf[i] = cdf[i] / last
    for i in range(k):
        out[i] = i
    # searchsorted(side="right"): the number of entries <= u (cdf is non-decreasing)
    for j in range(uniforms.size):
        u = uniforms[j]
        low, high = 0, k
        while low < high:
            middle = (low + high) >> 1
            if cdf[middle] <= u:
                low = middle + 1
            else:
                high = middle
        out[k + j] = low


@numba.njit(nogil=True, cache=True)
def groups(cluster, home, other, uniforms, correlation):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """``draw_groups``'s choice, in ``other``: the home group where ``u < correlation``."""
    for i in range(cluster.size):
        if uniforms[i] < correlation:
            other[i] = home[cluster[i]]


@numba.njit(nogil=True, cache=True)
def place(normals, spreads, centres, scale, cluster):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """``phi = normals * spreads[cluster] + scale * centres[cluster]``, in ``normals``.

    ``(scale * centre) + (spread * z)``: the products rounded first, then
    the sum, as the NumPy lines compute them.
    """
    n, d = normals.shape
    for i in range(n):
        c = cluster[i]
        s = spreads[c]
        for j in range(d):
            normals[i, j] = normals[i, j] * s + scale * centres[c, j]
