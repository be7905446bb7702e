"""The services agents' compiled draw: the same user as the NumPy path and ``rng.choice``."""

from __future__ import annotations

import numpy as np
import pytest

from agents.services import base
from agents.services.base import _draw_in_place, draw

pytest.importorskip("numba")  # the compiled draw needs the `fast` extra
# Compiled against NumPy, compared bit for bit on purpose: the weights are divided by
# their total (one exactly rounded division each) and summed by a cumulative sum,
# strictly in order on either path (no SIMD width or FMA can reorder a prefix sum
# without fast-math, which the loop does not allow): the same bits on any CPU.
pytestmark = pytest.mark.crossimpl


@pytest.fixture(autouse=True)
def compiled_for_few_users(monkeypatch):
    """The compiled draw at any size (by default only from 10,000 users), to test it small.

    Also on under a developer's ``OSFB_NUMBA=0``: these tests switch it themselves.
    """
    monkeypatch.setattr(base, "COMPILED_MIN_USERS", 0)
    monkeypatch.delenv("OSFB_NUMBA", raising=False)


def test_few_users_keep_the_numpy_draw(monkeypatch):
    monkeypatch.setattr(base, "COMPILED_MIN_USERS", 10_000)
    assert base._compiled_draw(9_999) is None
    assert base._compiled_draw(10_000) is not None


def weight_vectors(rng: np.random.Generator):
    for n in (1, 2, 3, 17, 1000, 20_000):
        yield rng.exponential(size=n)
        sparse = rng.exponential(size=n) * (rng.random(n) < 0.05)
        sparse[rng.integers(n)] = 1.0
        yield sparse
        yield rng.exponential(size=n) ** 8  # a few users hold nearly all the weight
        yield np.ones(n)


def test_the_compiled_draw_picks_the_numpy_paths_user_and_writes_its_cumulative_sum(monkeypatch):
    rng = np.random.default_rng(0)
    for weights in weight_vectors(rng):
        total = weights.sum()
        for u in (0.0, *rng.random(5), np.nextafter(1.0, 0.0)):
            picks, sums = [], []
            for enabled in ("1", "0"):
                monkeypatch.setenv("OSFB_NUMBA", enabled)
                p = weights.copy()
                picks.append(_draw_in_place(_Fixed(u), p, total))
                sums.append(p.tobytes())
            assert picks[0] == picks[1]
            # the NumPy path, written as the old act wrote it
            p = weights / total
            np.cumsum(p, out=p)
            assert sums[0] == p.tobytes()
            assert picks[0] == int((p / p[-1]).searchsorted(u, side="right"))


def test_draw_equals_generator_choice_draw_for_draw_on_both_paths(monkeypatch):
    rng = np.random.default_rng(1)
    for enabled in ("1", "0"):
        monkeypatch.setenv("OSFB_NUMBA", enabled)
        assert (base._compiled_draw(1) is None) == (enabled == "0")
        for weights in weight_vectors(rng):
            p = weights / weights.sum()
            a, b = np.random.default_rng(7), np.random.default_rng(7)
            expected = [int(b.choice(p.size, p=p)) for _ in range(20)]
            assert [draw(a, p) for _ in range(20)] == expected


class _Fixed:
    """A generator stand-in whose ``random()`` returns a fixed ``u``."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u
