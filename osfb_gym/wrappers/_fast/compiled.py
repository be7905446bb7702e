"""Compiled loops of the view writers (:mod:`osfb_gym.wrappers._fast.writers`), when numba is there.

A services observation is encoded at every RL step: squashing 500 losses
and looking up 1,000 codes in their tables take about a dozen NumPy calls,
each mostly call overhead on arrays this small. :func:`kernels` returns
loops compiled by numba (the optional ``fast`` extra; one of them writes
all the vectors of a ``Dict`` in one call) that do the same arithmetic
element by element: ``v / (|v| + 1.0)`` in ``float64`` cast once
to ``float32`` (IEEE division and addition round alike in both, and a
division and an addition leave nothing to fuse), and a table read per
code. The writers give the same bits either way (tested); without numba,
or with the environment variable ``OSFB_NUMBA=0``, they use NumPy alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from osfb_gym.core.optional import compiled


class Kernels(NamedTuple):
    """The compiled loops of the writers.

    ``squash(values, out)``, ``codes(values, table, out) -> bool`` and
    ``entries(squashed, squashed_at, coded, tables, coded_at, out) -> bool``.
    """

    squash: Callable[[np.ndarray, np.ndarray], None]
    codes: Callable[[np.ndarray, np.ndarray, np.ndarray], bool]
    entries: Callable[..., bool]


@functools.lru_cache(maxsize=1)
def kernels() -> Kernels | None:
    """Return the compiled loops (None without numba, or with ``OSFB_NUMBA=0``)."""
    numba = compiled("numba")
    if numba is None:
        return None

    @numba.njit(nogil=True, cache=True)
    def squash(values: Any, out: Any) -> None:  # pragma: no cover - compiled
        for i in range(values.size):
            v = np.float64(values[i])
            out[i] = v / (abs(v) + 1.0)

    @numba.njit(nogil=True, cache=True)
    def codes(values: Any, table: Any, out: Any) -> bool:  # pragma: no cover - compiled
        # False as soon as a code is outside the table: the caller then writes them all
        m = table.size
        for i in range(values.size):
            code = values[i]
            if code < 0 or code >= m:
                return False
            out[i] = table[code]
        return True

    literal_unroll = numba.literal_unroll

    @numba.njit(nogil=True, cache=True)
    def entries(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
        squashed, squashed_at, coded, tables, coded_at, out
    ):
        # a Dict's entries in one call: squash for each of the vectors squashed (written
        # from out[squashed_at[j]] on), codes for each of the vectors coded; False as
        # soon as a code is outside its table: the caller then writes them all.
        # (literal_unroll: the tuples may mix types, read-only arrays and writable ones)
        j = 0
        for floats in literal_unroll(squashed):
            at = squashed_at[j]
            j += 1
            squash(floats, out[at : at + floats.size])
        j = 0
        for labels in literal_unroll(coded):
            at = coded_at[j]
            if not codes(labels, tables[j], out[at : at + labels.size]):
                return False
            j += 1
        return True

    return Kernels(squash, codes, entries)
