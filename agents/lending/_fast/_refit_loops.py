"""The numba loop of :mod:`agents.lending._fast.refit` (imported only with numba)."""

from __future__ import annotations

import numba


@numba.njit(nogil=True, cache=True)
def root_and_product(x, scale, c, root, product):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Write ``diag(scale) x`` into ``root`` and ``x^T c`` into ``product``, in one pass over ``x``.

    ``product`` sums row by row, in the order (and with the IEEE operations) of
    NumPy's ``np.add.reduce(x * c[:, None], axis=0)``: the same bits.
    """
    n, d = x.shape
    for j in range(d):
        product[j] = 0.0
    for i in range(n):
        row_scale = scale[i]
        weight = c[i]
        for j in range(d):
            value = x[i, j]
            root[i, j] = value * row_scale
            product[j] += value * weight
