"""The grader's arguments: checked here, each error naming the parameter."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from osfb_gym.core.family import FAMILIES, Family
from osfb_gym.core.family import family_of as _family_of
from osfb_gym.core.validation import check_float, check_int
from osfb_gym.grade import cache as _cache
from osfb_gym.grade.boundary import Limits


def family_of(env_id: str) -> Family:
    """Return the :class:`~osfb_gym.core.family.Family` of a registered env id.

    The grader reads the one family record (objective, direction, reference
    agents, grading kwargs) that sweeps and tables read too.
    """
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a registered osfb-gym id (a str), got {env_id!r}")
    try:
        return _family_of(env_id)
    except ValueError:
        known = ", ".join(family.env_id for family in FAMILIES.values())
        raise ValueError(
            f"env_id must be a registered osfb-gym id ({known}), got {env_id!r}"
        ) from None


def held_out_seeds(n_seeds: int, seed: int | None = None) -> list[int]:
    """Return ``n_seeds`` episode seeds drawn from ``seed`` (None: fresh entropy, secret).

    The seeds are what keeps a submission from rebuilding the grading worlds
    in its own process (``gym.make`` and ``reset(seed)`` are public), so by
    default every grading draws new ones from the operating system. Pass
    ``seed`` (kept private) to reproduce a grading.

    Examples
    --------
    >>> held_out_seeds(2, seed=7) == held_out_seeds(2, seed=7) != held_out_seeds(2)
    True
    """
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    if seed is not None:
        seed = check_int(seed, "seed", minimum=0)
    state = np.random.SeedSequence(seed).generate_state(n_seeds, dtype=np.uint64)
    return [int(value >> np.uint64(1)) for value in state]  # within int64, for tables


def check_limits(time_limit: Any, memory_limit: Any, n_episodes: int) -> Limits:
    """Return the :class:`Limits` of the agent's process for ``n_episodes`` episodes."""
    time_limit = check_float(time_limit, "time_limit", low=0, low_inclusive=False)
    memory_limit = check_int(memory_limit, "memory_limit", minimum=256)
    # CPU time over the process's life: the wall-clock budget of every stage, and a second
    cpu_limit = int(np.ceil(time_limit * (n_episodes + 1))) + 1
    return Limits(time_limit=time_limit, memory_limit=memory_limit, cpu_limit=cpu_limit)


def check_path(value: Any, name: str) -> Path:
    """Return ``value`` as a Path; ``TypeError`` naming ``name`` if it is no path."""
    if isinstance(value, bool) or not isinstance(value, str | os.PathLike):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {value!r}")
    return Path(value)


def check_env_kwargs(env_kwargs: Any, family: Family) -> dict[str, Any]:
    """Return a copy of ``env_kwargs`` (None: the family's grading defaults)."""
    if env_kwargs is None:
        return dict(family.grade_kwargs)
    if not isinstance(env_kwargs, dict) or not all(isinstance(key, str) for key in env_kwargs):
        raise TypeError(
            f"env_kwargs must be a dict of argument names to values, or None; got {env_kwargs!r}"
        )
    return dict(env_kwargs)


def check_class_name(class_name: Any) -> str | None:
    """Return ``class_name`` if it is an identifier or None."""
    if class_name is not None and not (isinstance(class_name, str) and class_name.isidentifier()):
        raise ValueError(
            f"class_name must be a class name (an identifier) or None, got {class_name!r}"
        )
    return class_name


def check_cache(cache: Any) -> Path | None:
    """Return the cache folder: True the user's, False or None none, else a path."""
    if cache is True:
        return _cache.default_folder()
    if cache is False or cache is None:
        return None
    return check_path(cache, "cache")
