"""The pipe between the grader and the agent's process: frames, payloads, actions.

Both sides use this module. The grader imports it as
:mod:`osfb_gym.grade.wire`; the agent's process, which runs
:mod:`osfb_gym.grade.sandbox` as a script and must not import the grader's
package, loads this file beside it. It imports only the standard library
and numpy.

A message is a frame: its length (8 bytes, big-endian) and its payload, a
pickle. The grader's requests are trusted by the agent's process; the
agent's replies are never unpickled into objects (:func:`loads_plain`) and
its action is rebuilt from plain data (:func:`decode_action`).

The grader pickles with :func:`dumps`: numpy's own pickle of an array,
with its dtype written as a string instead of a pickled dtype object. It
reads back as the very same array, and a lending step's request costs
about half as much to write and three quarters as much to read
(``timeit`` on a busy 2-core VM, twice: 12 and 17 us against pickle's 26
and 30 us; 10 and 14 us against 12.5 and 18 us). A hand-written binary
format was tried too and dropped: 15.7 us to write, but 32 us to read back
in Python.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import select
import struct
import time
from typing import Any

import numpy as np

#: a message on the pipe is its length (8 bytes, big-endian) and then its pickle
HEADER = struct.Struct("!Q")
#: the longest message either side accepts (an observation batch is far smaller)
MAX_MESSAGE_BYTES = 64 * 2**20
#: what an action may be made of on its way to the grader: numpy's plain kinds
ACTION_DTYPE_KINDS = "biuf"  # bool, signed and unsigned integer, float


# ---------------------------------------------------------------------------- framing
def write_message(fd: int, payload: bytes, deadline: float | None = None) -> None:
    """Write one framed message to the file descriptor ``fd``.

    With a monotonic ``deadline`` (the grader's side, whose ``fd`` is
    non-blocking) a reader that stops reading cannot hold the writer:
    ``TimeoutError`` once the deadline passes with the pipe still full.
    """
    view = memoryview(HEADER.pack(len(payload)) + payload)
    poller = None
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except BlockingIOError:  # a full non-blocking pipe: wait for room, on the clock
            pass
        if poller is None:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
        if deadline is None:
            poller.poll()
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not poller.poll(max(1, int(remaining * 1000))):
            raise TimeoutError


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    poller = None
    while size:
        if deadline is not None:
            if poller is None:
                poller = select.poll()
                poller.register(fd, select.POLLIN)
            remaining = deadline - time.monotonic()
            # a reply cut off half way blocks here too, not only a missing one
            if remaining <= 0 or not poller.poll(max(1, int(remaining * 1000))):
                raise TimeoutError
        chunk = os.read(fd, min(size, 2**20))
        if not chunk:
            raise EOFError
        if not chunks and len(chunk) == size:  # the usual case: all of it at once
            return chunk
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int, deadline: float | None = None) -> bytes:
    """Read one framed message from ``fd``; ``TimeoutError`` past the monotonic ``deadline``.

    ``EOFError`` when the writer has gone; ``ValueError`` for a message over
    :data:`MAX_MESSAGE_BYTES`.
    """
    (size,) = HEADER.unpack(_read_exactly(fd, HEADER.size, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise ValueError(f"a message of {size} bytes, over the {MAX_MESSAGE_BYTES} allowed")
    return _read_exactly(fd, size, deadline)


# ---------------------------------------------------------------------------- requests
#: numpy's own function that rebuilds an array from its bytes (what its pickles call)
_FROMBUFFER = np.zeros(1).__reduce_ex__(5)[0]


class _Pickler(pickle.Pickler):
    """Pickle numeric C-ordered arrays as numpy does, with the dtype as a string.

    numpy pickles an array as ``_frombuffer(buffer, dtype, shape, order)``
    with the dtype as a pickled object, most of the cost for a small array;
    ``np.dtype`` reads the string (``"<f8"``) back as the same dtype. The
    reader gets what numpy's pickle gives: a C-ordered array of the same
    dtype, shape and bytes, writeable (over a bytearray) where the original is.
    """

    def reducer_override(self, obj: Any) -> Any:
        dtype = getattr(obj, "dtype", None)
        if (
            type(obj) is np.ndarray
            and dtype is not None
            and dtype.kind in "biufc"
            and dtype.fields is None
            and dtype.metadata is None
            and obj.flags.c_contiguous
        ):
            # a read-only array reads back read-only, as numpy's pickle has it (bytes)
            # (through .data: bytearray(a 0-d integer array) would read it as a length)
            data = bytearray(obj.data) if obj.flags.writeable else bytes(obj.data)
            return _FROMBUFFER, (data, dtype.str, obj.shape, "C")
        return NotImplemented  # everything else as pickle does it


def dumps(message: Any) -> bytes:
    """Pickle ``message`` (protocol 5) for the agent's process, arrays the cheap way.

    Examples
    --------
    >>> request = ("act", np.arange(4.0).reshape(2, 2), {"y": np.ones(2, dtype=bool)})
    >>> pickle.loads(dumps(request))
    ('act', array([[0., 1.],
           [2., 3.]]), {'y': array([ True,  True])})
    """
    stream = io.BytesIO()
    _Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
    return stream.getvalue()


# ---------------------------------------------------------------------------- actions
def describe(action: Any) -> str:
    """Say what ``action`` is, for a diagnosis (its repr, type, and dtype and shape of arrays)."""
    if isinstance(action, np.ndarray):
        text = f"{action!r} (a numpy array of dtype {action.dtype}, shape {action.shape})"
    else:
        text = f"{action!r} (a {type(action).__name__})"
    return text if len(text) <= 300 else text[:300] + "..."


def encode_action(action: Any) -> tuple[Any, ...]:
    """Turn ``action`` into plain data the grader can rebuild without running any of its code.

    ``("plain", value)`` for None, bool, int, float and str;
    ``("array", dtype, shape, bytes, is_scalar)`` for numpy arrays and
    scalars of a plain kind (lists and tuples become arrays, as the action
    spaces read them); ``("other",)`` for anything else.
    """
    if type(action) in (type(None), bool, int, float, str):
        return ("plain", action)
    if type(action) in (list, tuple):
        try:
            action = np.asarray(action)
        except Exception:  # noqa: BLE001  (a ragged list is no action)
            return ("other",)
    if isinstance(action, np.ndarray | np.generic) and action.dtype.kind in ACTION_DTYPE_KINDS:
        array = np.array(action, order="C")  # ascontiguousarray would make a scalar 1-d
        return (
            "array",
            array.dtype.str,
            tuple(int(n) for n in array.shape),
            array.tobytes(),
            isinstance(action, np.generic),
        )
    return ("other",)


# ---------------------------------------------------------------------------- replies
class _PlainData(pickle.Unpickler):
    """Unpickles built-in data only: a reply naming any class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def loads_plain(payload: bytes) -> Any:
    """Unpickle ``payload`` if it holds only built-in data (no class, no function).

    Examples
    --------
    >>> loads_plain(pickle.dumps(("ok", 1, b"x")))
    ('ok', 1, b'x')
    >>> loads_plain(pickle.dumps(len))
    Traceback (most recent call last):
    ...
    _pickle.UnpicklingError: builtins.len is not plain data
    """
    return _PlainData(io.BytesIO(payload)).load()


def decode_action(encoded: Any) -> Any:
    """Rebuild an action from :func:`osfb_gym.grade.sandbox.encode_action`'s plain data.

    Raises ``ValueError`` when ``encoded`` is not a well-formed encoding.

    Examples
    --------
    >>> from osfb_gym.grade.sandbox import encode_action
    >>> decode_action(encode_action(np.array([1, 0], dtype=np.int8)))
    array([1, 0], dtype=int8)
    >>> scalar = decode_action(encode_action(np.int64(2)))
    >>> type(scalar).__name__, int(scalar), decode_action(encode_action([1, 0]))
    ('int64', 2, array([1, 0]))
    """
    if not isinstance(encoded, tuple) or not encoded:
        raise ValueError("not an encoded action")
    if encoded[0] == "plain" and len(encoded) == 2:
        if type(encoded[1]) in (type(None), bool, int, float, str):
            return encoded[1]
    elif encoded[0] == "array" and len(encoded) == 5:
        _, dtype_name, shape, data, scalar = encoded
        if not (
            isinstance(dtype_name, str)
            and isinstance(shape, tuple)
            and all(type(n) is int and n >= 0 for n in shape)
            and isinstance(data, bytes)
            and isinstance(scalar, bool)
        ):
            raise ValueError("a malformed array")
        dtype = np.dtype(dtype_name)
        if dtype.kind not in ACTION_DTYPE_KINDS or math.prod(shape) * dtype.itemsize != len(data):
            raise ValueError("a malformed array")
        array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
        return array[()] if scalar and not shape else array
    raise ValueError("an action that is no number, string or numeric array")
