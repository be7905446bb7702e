"""The encoding of spaces: any Gymnasium space as one flat, bounded ``float32`` vector.

Pure functions of a space (and an observation of it), so both the RL views
(:mod:`osfb_gym.wrappers`) and the agents that wrap a trained model
(:class:`agents.rl.SB3Agent`) read them from here; ``osfb_gym.wrappers``
re-exports them under their old names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: a Box bound beyond this counts as unbounded (services' losses use float32's max)
UNBOUNDED = 1e30


def squash(value: Any) -> np.ndarray:
    """Map values to (-1, 1) by ``v / (1 + |v|)``: monotone, invertible, bounded.

    Examples
    --------
    >>> squash(np.array([-3.0, 0.0, 1.0])).tolist()
    [-0.75, 0.0, 0.5]
    """
    v = np.asarray(value, dtype=np.float64)
    return v / (1.0 + np.abs(v))


def _squash_bound(bound: np.ndarray) -> np.ndarray:
    bound = np.asarray(bound, dtype=np.float64)
    big = np.abs(bound) > UNBOUNDED
    return np.where(big, np.sign(bound), squash(np.where(big, 0.0, bound)))


def _unbounded(space: spaces.Box) -> bool:
    return bool(np.any(np.abs(space.low) > UNBOUNDED) or np.any(np.abs(space.high) > UNBOUNDED))


def encode_space(space: gym.Space) -> spaces.Box:
    """Return the ``float32``, bounded, 1-D Box that :func:`encode` maps ``space`` into.

    A bounded ``Box`` is flattened as it is; an unbounded one is squashed
    (:func:`squash`). ``Discrete(n)`` and ``MultiDiscrete`` entries become
    one number each, ``value / (n - 1)`` in [0, 1] (an ordinal code: far
    narrower than one-hot, no information lost); ``MultiBinary`` entries
    stay 0/1. A ``Dict`` is the concatenation of its entries in its order.

    Examples
    --------
    >>> encode_space(spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Box(0, 1, (2, 2))}))
    Box(0.0, 1.0, (5,), float32)
    """
    low, high = _bounds(space)
    return spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)


def _bounds(space: gym.Space) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(space, spaces.Box):
        low, high = space.low.ravel().astype(np.float64), space.high.ravel().astype(np.float64)
        if _unbounded(space):
            return _squash_bound(low), _squash_bound(high)
        return low, high
    if isinstance(space, spaces.Discrete):
        return np.zeros(1), np.ones(1)
    if isinstance(space, spaces.MultiDiscrete | spaces.MultiBinary):
        size = int(np.prod(space.shape))
        return np.zeros(size), np.ones(size)
    if isinstance(space, spaces.Dict):
        parts = [_bounds(sub) for sub in space.spaces.values()]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    raise TypeError(
        f"space must be a Box, Discrete, MultiDiscrete, MultiBinary or a Dict of them, got {space}"
    )


def encode(space: gym.Space, observation: Any) -> np.ndarray:
    """Return ``observation`` of ``space`` as the ``float32`` vector of :func:`encode_space`.

    Examples
    --------
    >>> space = spaces.Dict({"n": spaces.Discrete(5), "loss": spaces.Box(0, np.inf, (2,))})
    >>> encode(space, {"n": 2, "loss": np.array([0.0, 3.0])}).tolist()  # keys sorted
    [0.0, 0.75, 0.5]
    """
    return _encode(space, observation).astype(np.float32)


def _encode(space: gym.Space, observation: Any) -> np.ndarray:
    if isinstance(space, spaces.Box):
        values = np.asarray(observation, dtype=np.float64).ravel()
        return squash(values) if _unbounded(space) else values
    if isinstance(space, spaces.Discrete):
        return np.array([(int(observation) - int(space.start)) / max(int(space.n) - 1, 1)])
    if isinstance(space, spaces.MultiDiscrete):
        values = np.asarray(observation, dtype=np.float64) - space.start
        return (values / np.maximum(space.nvec - 1, 1)).ravel()
    if isinstance(space, spaces.MultiBinary):
        return np.asarray(observation, dtype=np.float64).ravel()
    if isinstance(space, spaces.Dict):
        return np.concatenate([_encode(sub, observation[key]) for key, sub in space.spaces.items()])
    raise TypeError(f"cannot encode an observation of {space}")


def make_encoder(space: gym.Space) -> Callable[[Any], np.ndarray]:
    """Return a function encoding observations of ``space``, its constants computed once.

    The same operations as :func:`encode` before its ``float32`` cast (so the
    same values, bit for bit), without re-reading the space's bounds and
    sizes at every call. The function is a :func:`functools.partial` of
    module-level functions, so it pickles (a lambda would not).

    Examples
    --------
    >>> space = spaces.Dict({"n": spaces.Discrete(5), "loss": spaces.Box(0, np.inf, (2,))})
    >>> make_encoder(space)({"n": 2, "loss": np.array([0.0, 3.0])}).tolist()
    [0.0, 0.75, 0.5]
    """
    if isinstance(space, spaces.Box):
        return functools.partial(_encode_box, _unbounded(space))
    if isinstance(space, spaces.Discrete):
        return functools.partial(_encode_discrete, int(space.start), max(int(space.n) - 1, 1))
    if isinstance(space, spaces.MultiDiscrete):
        return functools.partial(_encode_multi, space.start, np.maximum(space.nvec - 1, 1))
    if isinstance(space, spaces.MultiBinary):
        return _encode_binary
    if isinstance(space, spaces.Dict):
        parts = tuple((key, make_encoder(sub)) for key, sub in space.spaces.items())
        return functools.partial(_encode_dict, parts)
    raise TypeError(f"cannot encode an observation of {space}")


def _encode_box(squashed: bool, observation: Any) -> np.ndarray:
    values = np.asarray(observation, dtype=np.float64).ravel()
    return squash(values) if squashed else values


def _encode_discrete(start: int, scale: int, observation: Any) -> np.ndarray:
    return np.array([(int(observation) - start) / scale])


def _encode_multi(low: np.ndarray, scale: np.ndarray, observation: Any) -> np.ndarray:
    return ((np.asarray(observation, dtype=np.float64) - low) / scale).ravel()


def _encode_binary(observation: Any) -> np.ndarray:
    return np.asarray(observation, dtype=np.float64).ravel()


def _encode_dict(
    parts: tuple[tuple[str, Callable[[Any], np.ndarray]], ...], observation: Any
) -> np.ndarray:
    return np.concatenate([part(observation[key]) for key, part in parts])
