"""NumPy's ``SeedSequence(seed).generate_state(4, np.uint64)`` in one compiled loop (numba).

Imported only through :func:`osfb_gym.core.seeding.world_generator` (by
:func:`osfb_gym.core.optional.compiled`). The hash is NumPy's
(``numpy/random/bit_generator.pyx``: ``hashmix``, ``mix``,
``mix_entropy`` with a pool of 4 words, then ``generate_state``) for an
entropy of one integer ``0 <= seed < 2**64`` (two 32-bit words, low word
first), in unsigned 64-bit arithmetic masked to 32 bits, which is the
32-bit arithmetic of NumPy's C code. Its words equal NumPy's for every
seed tested (``tests/osfb_gym/core/test_seeding.py``). Cached on disk
(``cache=True``): a new process loads it instead of compiling it.
"""

from __future__ import annotations

import numba
import numpy as np

# numpy/random/bit_generator.pyx's constants
INIT_A = 0x43B0D7E5
MULT_A = 0x931E8875
INIT_B = 0x8B51F9DD
MULT_B = 0x58F38DED
MIX_MULT_L = 0xCA01F9DD
MIX_MULT_R = 0x4973F715
XSHIFT = 16


@numba.njit(nogil=True, cache=True)
def seed_words(seed, out):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Write ``SeedSequence(seed).generate_state(4, np.uint64)`` in ``out``, ``0 <= seed < 2**63``.

    (In place, not returned: boxing a returned array costs a call more than
    the hash.)
    """
    m32 = np.uint64(0xFFFFFFFF)
    shift = np.uint64(XSHIFT)
    entropy = np.uint64(seed)
    pool = np.empty(4, np.uint64)
    hash_const = np.uint64(INIT_A)
    # mix_entropy: hashmix each entropy word (0 past the entropy) into the pool...
    for i in range(4):
        if i == 0:
            value = entropy & m32
        elif i == 1:
            value = entropy >> np.uint64(32)
        else:
            value = np.uint64(0)
        value ^= hash_const
        hash_const = (hash_const * np.uint64(MULT_A)) & m32
        value = (value * hash_const) & m32
        pool[i] = value ^ (value >> shift)
    # ... then mix every word into every other
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                value = pool[i_src] ^ hash_const
                hash_const = (hash_const * np.uint64(MULT_A)) & m32
                value = (value * hash_const) & m32
                value ^= value >> shift
                mixed = (np.uint64(MIX_MULT_L) * pool[i_dst] - np.uint64(MIX_MULT_R) * value) & m32
                pool[i_dst] = mixed ^ (mixed >> shift)
    # generate_state: 8 words of 32 bits from the pool, paired little-endian into 4 of 64
    hash_const = np.uint64(INIT_B)
    for j in range(4):
        low = pool[(2 * j) & 3] ^ hash_const
        hash_const = (hash_const * np.uint64(MULT_B)) & m32
        low = (low * hash_const) & m32
        low ^= low >> shift
        high = pool[(2 * j + 1) & 3] ^ hash_const
        hash_const = (hash_const * np.uint64(MULT_B)) & m32
        high = (high * hash_const) & m32
        high ^= high >> shift
        out[j] = low | (high << np.uint64(32))
