"""World seeding.

A *world* is the hidden truth of an episode (beta*, a user population, a
dataset's order). ``world_seed=None`` draws a fresh world at every reset
from the environment's own generator, so ``reset(seed=s)`` fixes it; an
integer ``world_seed`` fixes the world across all resets while the stream
(which applicants arrive, their noise) still follows the reset seed.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from osfb_gym.core.optional import compiled
from osfb_gym.core.validation import check_int


def check_world_seed(world_seed: int | None) -> int | None:
    """Validate a ``world_seed`` argument (None or a non-negative integer)."""
    if world_seed is None:
        return None
    return check_int(world_seed, "world_seed", minimum=0)


def world_rng(world_seed: int | None, np_random: np.random.Generator) -> np.random.Generator:
    """Return the generator that draws this reset's world.

    With ``world_seed`` set, a generator seeded by it alone (the same world
    every reset). Otherwise a child of ``np_random`` drawn once per reset,
    so the world depends on the reset seed and nothing else.

    Examples
    --------
    >>> a = world_rng(7, np.random.default_rng(0)).normal()
    >>> b = world_rng(7, np.random.default_rng(1)).normal()
    >>> a == b
    True
    """
    if world_seed is not None:
        return np.random.default_rng(np.random.SeedSequence((world_seed, 0x57_0A1D)))
    return np.random.default_rng(np_random.integers(0, 2**63 - 1))


_M64 = (1 << 64) - 1
_CHILD_RANGE = 2**63 - 1  # world_rng's np_random.integers(0, 2**63 - 1): [0, 2**63 - 2]
_CHILD_THRESHOLD = (_M64 - (_CHILD_RANGE - 1)) % _CHILD_RANGE


def _child_seed(np_random: np.random.Generator) -> int:
    """Return ``int(np_random.integers(0, 2**63 - 1))``, the same draw, for a ``PCG64`` generator.

    NumPy draws a scalar in a 64-bit range by Lemire's method
    (``bounded_lemire_uint64`` in its ``distributions.c``): one raw 64-bit
    output times the range's size, kept unless the low 64 bits of the
    product fall below a threshold (2 here: a chance of 2**-62), then the
    high 64 bits. So do these lines, with the raw outputs ``random_raw``
    gives (``next_uint64``: the same ones, the same generator state after;
    tested), without ``integers``' argument handling. Another bit
    generator: ``integers`` itself.
    """
    bit_generator = np_random.bit_generator
    if type(bit_generator) is not np.random.PCG64:
        return int(np_random.integers(0, 2**63 - 1))
    product = bit_generator.random_raw() * _CHILD_RANGE
    if product & _M64 < _CHILD_RANGE:
        while product & _M64 < _CHILD_THRESHOLD:
            product = bit_generator.random_raw() * _CHILD_RANGE
    return product >> 64  # type: ignore[no-any-return]


class _SeedWords(ISeedSequence):
    """A stand-in for ``SeedSequence(entropy)`` holding the 4 words ``PCG64`` asks it for.

    ``PCG64(seed)`` seeds itself with ``SeedSequence(seed).generate_state(4,
    np.uint64)``; handed this object, it takes the same words, so its state
    is the same. The words are handed out once (to ``PCG64``, no copy); any
    other request is answered by a real ``SeedSequence``. Not one for
    spawning (NumPy's ``spawn`` needs a real ``SeedSequence``).
    """

    __slots__ = ("entropy", "words")

    def __init__(self, entropy: int, words: np.ndarray) -> None:
        self.entropy = entropy
        self.words: np.ndarray | None = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        """Return ``SeedSequence(entropy).generate_state(n_words, dtype)``."""
        words = self.words
        if words is not None and n_words == 4 and dtype is np.uint64:
            self.words = None
            return words
        return np.random.SeedSequence(self.entropy).generate_state(n_words, dtype)


def world_generator(world_seed: int | None, np_random: np.random.Generator) -> np.random.Generator:
    """:func:`world_rng`'s generator, in the same state (the same world), made faster.

    For an env that draws a new world at every reset (``world_seed=None``):
    the child seed is drawn from ``np_random`` as :func:`world_rng` draws it,
    and in a process that has imported numba (an RL view's writers do; not
    with ``OSFB_NUMBA=0``) NumPy's seed hash is computed in one compiled
    loop (``SeedSequence`` costs ~15 us in NumPy's Python layer, more than
    most worlds' draws; numba is not imported for it). The
    generator's state equals :func:`world_rng`'s bit for bit (tested), so
    every draw does; its ``bit_generator.seed_seq`` is a stand-in that
    cannot spawn (nothing drawing a world spawns). Otherwise, and for an
    integer ``world_seed``, it is :func:`world_rng`.

    Examples
    --------
    >>> a = world_generator(None, np.random.default_rng(3)).random(2)
    >>> b = world_rng(None, np.random.default_rng(3)).random(2)
    >>> bool((a == b).all())
    True
    """
    loops = None
    if world_seed is None and "numba" in sys.modules:
        loops = compiled("osfb_gym.core._compiled_seeding")
    if loops is None:
        return world_rng(world_seed, np_random)
    seed = _child_seed(np_random)
    words = np.empty(4, dtype=np.uint64)
    loops.seed_words(seed, words)
    # (NumPy's stubs name SeedSequence; PCG64 takes any ISeedSequence)
    return np.random.Generator(np.random.PCG64(_SeedWords(seed, words)))  # type: ignore[arg-type]


def spawn_seed(seed: int, stream: int) -> int:
    """Derive an independent integer seed for another consumer of ``seed``.

    The runner seeds the environment with ``seed`` and the agent with
    ``spawn_seed(seed, 1)``: seeding both with the same integer would give
    them identical random streams.

    Examples
    --------
    >>> spawn_seed(0, 1) == spawn_seed(0, 1) != spawn_seed(0, 2)
    True
    """
    return int(np.random.SeedSequence((seed, stream)).generate_state(1, np.uint64)[0] >> 1)
