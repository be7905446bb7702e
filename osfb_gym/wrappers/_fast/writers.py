"""Write an observation's view encoding in place: :func:`make_writer`.

The plain and feedback views (:mod:`osfb_gym.wrappers.views`) encode every
observation an RL library sees; a writer fills one ``float32`` vector with
:func:`~osfb_gym.wrappers.views.encode`'s values, bit for bit, without the
intermediate ``float64`` arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from osfb_gym.core.spaces import _unbounded, encode_space
from osfb_gym.wrappers._fast.compiled import kernels

Writer = Callable[[Any, np.ndarray], None]
INT64 = np.dtype(np.int64)


def make_writer(space: gym.Space) -> tuple[int, Writer]:
    """Return ``(size, write)``: ``write(observation, out)`` fills ``out`` with its encoding.

    ``out`` is a ``float32`` vector of ``size`` entries; afterwards it holds
    :func:`encode` of ``observation``, bit for bit (the same ``float64``
    operations, each result cast to ``float32`` once, as ``encode``'s last
    cast does), written in place: a ``Dict`` is encoded without
    concatenating its entries' ``float64`` vectors and casting the result,
    and the codes of a ``MultiDiscrete`` of one size and no offset (the
    services' choices and groups) are looked up in a table of their
    ``float32`` values.

    Examples
    --------
    >>> space = spaces.Dict({"n": spaces.Discrete(5), "loss": spaces.Box(0, np.inf, (2,))})
    >>> size, write = make_writer(space)
    >>> out = np.empty(size, dtype=np.float32)
    >>> write({"n": 2, "loss": np.array([0.0, 3.0])}, out)
    >>> out.tolist()
    [0.0, 0.75, 0.5]
    """
    size = int(encode_space(space).shape[0])
    compiled = kernels()  # numba's loops, or None: the same bits either way
    for kind, build in _BUILDERS:
        if isinstance(space, kind):
            return size, build(space, compiled)
    raise TypeError(f"cannot encode an observation of {space}")


def _box_writer(space: spaces.Box, compiled: Any) -> Writer:
    """Return a ``Box``'s writer: squashed when unbounded, else its values cast once."""
    if _unbounded(space):

        def write_squashed(observation: Any, out: np.ndarray) -> None:
            # squash: v / (1 + |v|) in float64 (|v| + 1 is the same sum), cast once
            if type(observation) is not np.ndarray:
                observation = np.asarray(observation)
            if (
                compiled is not None
                and observation.ndim == 1
                and observation.dtype.char in "fd"
                and observation.flags.c_contiguous
            ):
                compiled.squash(observation, out)
                return
            # (astype is faster than asarray's dtype=; values is only read)
            values = observation.astype(np.float64, copy=False)
            if values.ndim != 1:
                values = values.reshape(-1)
            squashed = np.abs(values)
            squashed += 1.0
            np.divide(values, squashed, out=squashed)
            out[:] = squashed

        return write_squashed

    def write_box(observation: Any, out: np.ndarray) -> None:
        values = np.asarray(observation)
        if values.dtype.char not in "fd":  # float32 and float64 cast to float32 directly
            values = values.astype(np.float64)
        out[:] = values.reshape(-1)

    return write_box


def _discrete_writer(space: spaces.Discrete, compiled: Any) -> Writer:
    """Return a ``Discrete``'s writer: ``(n - start) / (n - 1)``."""
    start, scale = int(space.start), max(int(space.n) - 1, 1)

    def write_discrete(observation: Any, out: np.ndarray) -> None:
        out[0] = (int(observation) - start) / scale

    return write_discrete


def _multi_discrete_writer(space: spaces.MultiDiscrete, compiled: Any) -> Writer:
    """Return a ``MultiDiscrete``'s writer: a table look-up (one size, no offset) or arithmetic."""
    low, scale = space.start, np.maximum(space.nvec - 1, 1)
    uniform = _code_table(space)
    if uniform is not None:
        # one size m and no offset: (v - 0) / s is v / s, so each code's float32
        # value is looked up in a table of the m codes, computed as encode does;
        # int64 codes only, and only when every code is in [0, m): read as uint64
        # a negative code is beyond m too, so one maximum bounds them all (an index
        # of -1 would read the table's last entry); otherwise the arithmetic itself
        divisor, table = uniform
        m = table.size

        def write_uniform(observation: Any, out: np.ndarray) -> None:
            values = np.asarray(observation)
            # (an int64 dtype that is not numpy's own object goes the general way)
            if values.dtype is INT64 and values.size:
                if values.ndim != 1:
                    values = values.reshape(-1)
                if compiled is not None and values.flags.c_contiguous:
                    if compiled.codes(values, table, out):  # False: a code out of range
                        return
                # (the ufunc's reduce and the method: no Python wrappers around them)
                elif np.maximum.reduce(values.view(np.uint64)) < m:
                    table.take(values, out=out, mode="wrap")  # nothing to wrap
                    return
            out[:] = (np.asarray(values, dtype=np.float64) / divisor).reshape(-1)

        return write_uniform

    def write_multi(observation: Any, out: np.ndarray) -> None:
        out[:] = ((np.asarray(observation, dtype=np.float64) - low) / scale).reshape(-1)

    return write_multi


def _binary_writer(space: spaces.MultiBinary, compiled: Any) -> Writer:
    """Return a ``MultiBinary``'s writer: its bits as they are."""

    def write_binary(observation: Any, out: np.ndarray) -> None:
        out[:] = np.asarray(observation, dtype=np.float64).reshape(-1)

    return write_binary


def _dict_writer(space: spaces.Dict, compiled: Any) -> Writer:
    """Return a ``Dict``'s writer: each entry's writer on its slice, fused where it can be."""
    parts, stop = [], 0
    for key, sub in space.spaces.items():
        width, writer = make_writer(sub)
        parts.append((key, stop, stop + width, writer))
        stop += width

    def write_dict(observation: Any, out: np.ndarray) -> None:
        for key, begin, end, writer in parts:
            writer(observation[key], out[begin:end])

    fused = _fused_dict_writer(space, write_dict, compiled)
    return write_dict if fused is None else fused


#: the space types a writer is built for, and how (a subclass matches its base)
_BUILDERS: tuple[tuple[type, Callable[[Any, Any], Writer]], ...] = (
    (spaces.Box, _box_writer),
    (spaces.Discrete, _discrete_writer),
    (spaces.MultiDiscrete, _multi_discrete_writer),
    (spaces.MultiBinary, _binary_writer),
    (spaces.Dict, _dict_writer),
)


def _code_table(space: spaces.MultiDiscrete) -> tuple[float, np.ndarray] | None:
    """``(divisor, table)`` of a ``MultiDiscrete`` of one size ``m`` and no offset, else None.

    ``table[v]`` is code ``v``'s ``float32`` encoding, ``v / divisor`` as
    :func:`encode` computes it, for ``v`` in ``[0, m)``.
    """
    low, scale = space.start, np.maximum(space.nvec - 1, 1)
    if not (space.nvec.size and not low.any() and (scale == scale.flat[0]).all()):
        return None
    divisor, m = float(scale.flat[0]), int(space.nvec.flat[0])
    return divisor, (np.arange(m, dtype=np.float64) / divisor).astype(np.float32)


class DictPlan(NamedTuple):
    """How a ``Dict`` of 1-D vectors and counts is encoded: which entry goes where, and how.

    ``squashed``: ``(key, at, shape)`` of each unbounded 1-D ``Box``
    (:func:`~osfb_gym.wrappers.views.squash`, then ``float32``); ``coded``:
    ``(key, at, shape, table, divisor)`` of each 1-D ``MultiDiscrete`` of
    one size and no offset (code ``v`` is ``table[v]`` in the table, else
    ``v / divisor``); ``discrete``: ``(key, at, start, scale)`` of each
    ``Discrete`` (``(v - start) / scale``); ``size``: the vector's. ``at``
    is where an entry's values start in the vector.
    """

    squashed: tuple[tuple[str, int, tuple[int, ...]], ...]
    coded: tuple[tuple[str, int, tuple[int, ...], np.ndarray, float], ...]
    discrete: tuple[tuple[str, int, int, int], ...]
    size: int
    float_type: np.dtype


def dict_plan(space: gym.Space) -> DictPlan | None:
    """Return the :class:`DictPlan` of ``space``, or None for a space it does not describe.

    A ``Dict`` whose entries are 1-D unbounded ``Box`` es of one float
    dtype, 1-D ``MultiDiscrete`` s of one size and no offset and
    ``Discrete`` s, with at least one of the first two kinds each (the
    services' observation: losses, choices, groups and the count).
    """
    if not isinstance(space, spaces.Dict):
        return None
    squashed, coded, discrete = [], [], []
    float_types = set()
    begin = 0
    for key, sub in space.spaces.items():
        width = int(encode_space(sub).shape[0])
        if isinstance(sub, spaces.Box) and _unbounded(sub) and len(sub.shape) == 1:
            squashed.append((key, begin, sub.shape))
            float_types.add(np.dtype(sub.dtype))
        elif isinstance(sub, spaces.MultiDiscrete) and len(sub.shape) == 1:
            uniform = _code_table(sub)
            if uniform is None:
                return None
            coded.append((key, begin, sub.shape, uniform[1], uniform[0]))
        elif isinstance(sub, spaces.Discrete):
            discrete.append((key, begin, int(sub.start), max(int(sub.n) - 1, 1)))
        else:
            return None
        begin += width
    if not (squashed and coded) or len(float_types) != 1:
        return None
    float_type = float_types.pop()
    if float_type.char not in "fd":  # float32, float64
        return None
    return DictPlan(tuple(squashed), tuple(coded), tuple(discrete), begin, float_type)


def _fused_dict_writer(space: spaces.Dict, write_dict: Writer, compiled: Any) -> Writer | None:
    """Return ``write_dict`` in one compiled call, for the ``Dict`` spaces it can take; else None.

    The spaces of a :class:`DictPlan` (:func:`dict_plan`): the entries'
    vectors are written by one call of the compiled ``entries`` loop, the
    same loops as the entries' own writers, instead of a call, a slice and
    the checks of each entry. An observation whose vectors are not
    C-contiguous, of their space's shape and of the dtype the loop was
    typed for (the Box's float dtype, ``int64`` codes), or with a code
    outside its table, is written by ``write_dict`` instead: the same bits
    (tested).
    """
    plan = dict_plan(space)
    if compiled is None or plan is None:
        return None
    squashed, coded, discrete = plan.squashed, plan.coded, plan.discrete
    squashed_at = np.array([at for _, at, _ in squashed], dtype=np.int64)
    coded_at = np.array([at for _, at, *_ in coded], dtype=np.int64)
    tables = tuple(table for *_, table, _ in coded)
    checks = [(key, plan.float_type, shape) for key, _, shape in squashed]
    checks += [(key, INT64, shape) for key, _, shape, _, _ in coded]
    entries = compiled.entries

    def write_fused(observation: Any, out: np.ndarray) -> None:
        vectors = []
        for key, dtype, shape in checks:
            values = observation[key]
            if not (
                type(values) is np.ndarray
                and values.dtype is dtype
                and values.shape == shape
                and values.flags.c_contiguous
            ):
                write_dict(observation, out)
                return
            vectors.append(values)
        split = len(squashed)
        if not entries(
            tuple(vectors[:split]), squashed_at, tuple(vectors[split:]), tables, coded_at, out
        ):
            write_dict(observation, out)  # a code outside its table
            return
        for key, at, start, scale in discrete:
            out[at] = (int(observation[key]) - start) / scale

    return write_fused
