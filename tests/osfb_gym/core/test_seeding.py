"""world_generator: world_rng's generator state, seeded through a compiled SeedSequence hash."""

from __future__ import annotations

import numpy as np
import pytest

from osfb_gym.core import seeding
from osfb_gym.core.seeding import _SeedWords, world_generator, world_rng

#: seeds at the edges of the hash's two 32-bit entropy words, and random ones
EDGE_SEEDS = (0, 1, 2**32 - 1, 2**32, 2**32 + 1, 2**62, 2**63 - 2, 0xDEADBEEF12345678 >> 1)


def test_the_compiled_hash_gives_numpys_seed_words():
    loops = pytest.importorskip("osfb_gym.core._compiled_seeding")
    seeds = [*EDGE_SEEDS, *np.random.default_rng(0).integers(0, 2**63 - 1, 2000).tolist()]
    for seed in seeds:
        expected = np.random.SeedSequence(seed).generate_state(4, np.uint64)
        got = np.empty(4, dtype=np.uint64)
        loops.seed_words(seed, got)
        assert got.dtype == np.uint64 and got.tobytes() == expected.tobytes(), seed


@pytest.mark.parametrize("numba_flag", ["1", "0"])
def test_world_generator_is_in_world_rngs_state_and_draws_from_np_random_as_it(
    monkeypatch, numba_flag
):
    if numba_flag == "1":
        pytest.importorskip("numba")  # the compiled hash runs where numba is imported
    monkeypatch.setenv("OSFB_NUMBA", numba_flag)
    for seed in range(200):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        fast, plain = world_generator(None, a), world_rng(None, b)
        stand_in = type(fast.bit_generator.seed_seq) is _SeedWords
        assert stand_in == (numba_flag == "1")
        assert fast.bit_generator.state == plain.bit_generator.state
        assert a.bit_generator.state == b.bit_generator.state  # one draw of np_random each
        assert fast.standard_normal(5).tobytes() == plain.standard_normal(5).tobytes()
    # a fixed world_seed: world_rng's own generator, whatever np_random is
    fixed = world_generator(7, np.random.default_rng(1))
    assert fixed.bit_generator.state == world_rng(7, np.random.default_rng(2)).bit_generator.state


def test_the_seed_stand_in_answers_other_requests_as_a_seed_sequence():
    expected = np.random.SeedSequence(12345).generate_state(4, np.uint64)
    words = _SeedWords(12345, expected.copy())
    first = words.generate_state(4, np.uint64)  # PCG64's request: the words themselves, once
    assert first.tobytes() == expected.tobytes() and words.words is None
    first[:] = 0  # handed out: a later request is answered anew
    for n_words, dtype in ((4, np.uint64), (4, np.uint32), (8, np.uint64), (1, np.uint32)):
        expected = np.random.SeedSequence(12345).generate_state(n_words, dtype)
        assert words.generate_state(n_words, dtype).tobytes() == expected.tobytes()


def test_the_child_seed_is_integers_draw_and_leaves_the_same_state():
    for seed in range(3000):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for g in (a, b):  # earlier draws, a buffered 32-bit half among them
            g.random(seed % 3)
            g.integers(0, 7, seed % 4)
        assert seeding._child_seed(a) == int(b.integers(0, 2**63 - 1))
        assert a.bit_generator.state == b.bit_generator.state
    # another bit generator: integers itself
    a, b = np.random.Generator(np.random.MT19937(3)), np.random.Generator(np.random.MT19937(3))
    assert seeding._child_seed(a) == int(b.integers(0, 2**63 - 1))


def test_the_child_seed_rejects_as_lemire_does(monkeypatch):
    # a raw output whose product's low 64 bits fall below the threshold (2) is drawn again
    class Raw(np.random.PCG64):
        outputs = [0, 2**64 - 1]

        def random_raw(self, size=None, output=True):
            return self.outputs.pop(0)

    generator = np.random.Generator(Raw(0))
    monkeypatch.setattr(np.random, "PCG64", Raw)  # the type the fast path checks
    assert seeding._CHILD_THRESHOLD == 2
    expected = ((2**64 - 1) * (2**63 - 1)) >> 64
    assert seeding._child_seed(generator) == expected and Raw.outputs == []
