"""World seeding.

A *world* is the hidden truth of an episode (beta*, a user population, a
dataset's order). ``world_seed=None`` draws a fresh world at every reset
from the environment's own generator, so ``reset(seed=s)`` fixes it; an
integer ``world_seed`` fixes the world across all resets while the stream
(which applicants arrive, their noise) still follows the reset seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import cast

import numpy as np

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


def vector_seeds(seed: int | Sequence[int | None] | None, num_envs: int) -> list[int | None]:
    """Return one reset seed per sub-env of a vector env, as ``SyncVectorEnv`` reads ``seed``.

    None seeds none; an int ``s`` gives ``s, s + 1, ...``; a sequence must
    hold ``num_envs`` seeds (each None or an int >= 0).

    Examples
    --------
    >>> vector_seeds(3, 2), vector_seeds([None, 7], 2), vector_seeds(None, 2)
    ([3, 4], [None, 7], [None, None])
    """
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, Integral):
        first = check_int(seed, "seed", minimum=0)
        return [first + i for i in range(num_envs)]  # Gymnasium's SyncVectorEnv convention
    seeds = list(cast("Sequence[int | None]", seed))
    if len(seeds) != num_envs:
        raise ValueError(
            f"seed must be None, an int or a sequence of num_envs={num_envs} seeds, "
            f"got {len(seeds)} seeds"
        )
    return [None if value is None else check_int(value, "seed", minimum=0) for value in seeds]
