"""The pipe between the grader and the agent's process: frames, payloads, actions.

Both sides use this module. The grader imports it as
:mod:`osfb_gym.grade.wire`; the agent's process, which runs
:mod:`osfb_gym.grade.sandbox` as a script and must not import the grader's
package, loads this file beside it. It imports only the standard library
and numpy.

A message is a frame: its length (8 bytes, big-endian) and its payload.
A payload is a pickle (protocol 5, first byte ``0x80``) or a **binary
frame** (first bytes :data:`FRAME_TAG`), which is what every step of an
episode sends (:func:`pack`, :func:`unpack`): the observation, the action,
the reward and the feedback as raw bytes, without pickle's cost (about
30 us a step, most of the grader's side of the pipe). A binary frame holds
one value, encoded as one type byte and its data (little-endian):

====  ===========================================================
byte  value
====  ===========================================================
N     None
T, F  True, False
i     int (8 bytes, signed)
f     float (8 bytes, IEEE)
s, y  str (utf-8), bytes: a 4-byte length, then the bytes
t     tuple: a 4-byte count, then the values
d     dict with str keys: a 4-byte count, then (key, value) pairs
a, g  numpy array, numpy scalar: the dtype string (1-byte length),
      the number of dimensions (1 byte), each dimension (8 bytes),
      then the C-ordered data
====  ===========================================================

Anything else (a list, a string array, an object array, a subclass, a
non-contiguous array) is not packed: the sender pickles that message. The
grader's requests are trusted by the agent's process; the agent's replies
are never pickled objects (:func:`loads_plain`) and its action is rebuilt
from plain data (:func:`decode_action`).
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

#: the first bytes of a binary frame (a pickle starts with 0x80)
FRAME_TAG = b"W1"
#: numpy kinds a binary frame carries: bool, integers, floats, complex
FRAME_DTYPE_KINDS = "biufc"
#: how deep tuples and dicts may nest in a binary frame
FRAME_DEPTH = 16
_LENGTH, _INT, _FLOAT, _DIM = struct.Struct("<I"), struct.Struct("<q"), struct.Struct("<d"), "<Q"


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


# ---------------------------------------------------------------------------- binary frames
def pack(message: Any) -> bytes | None:
    """Return ``message`` as a binary frame, or None when some value has no binary form.

    Examples
    --------
    >>> frame = pack(("act", np.array([[0.5, -1.0]]), {"y": np.zeros(1), "cutoff": 0.5}))
    >>> unpack(frame)
    ('act', array([[ 0.5, -1. ]]), {'y': array([0.]), 'cutoff': 0.5})
    >>> pack(("act", [1, 2])) is None  # a list: pickled instead
    True
    """
    parts = [FRAME_TAG]
    try:
        _pack(message, parts, 0)
    except _NotPackable:
        return None
    return b"".join(parts)


class _NotPackable(Exception):
    pass


def _pack(value: Any, parts: list[bytes], depth: int) -> None:
    kind = type(value)
    if kind is np.ndarray or isinstance(value, np.generic):
        array = np.asarray(value)
        dtype = array.dtype
        if (
            dtype.kind not in FRAME_DTYPE_KINDS
            or dtype.fields is not None
            or not array.flags.c_contiguous
            or type(array) is not np.ndarray
        ):
            raise _NotPackable
        code = dtype.str.encode("ascii")
        head = b"a" if kind is np.ndarray else b"g"
        dims = struct.pack(f"<{array.ndim}Q", *array.shape)
        parts += [head, bytes((len(code),)), code, bytes((array.ndim,)), dims, array.tobytes()]
    elif value is None:
        parts.append(b"N")
    elif kind is bool:
        parts.append(b"T" if value else b"F")
    elif kind is int and -(2**63) <= value < 2**63:
        parts += [b"i", _INT.pack(value)]
    elif kind is float:
        parts += [b"f", _FLOAT.pack(value)]
    elif kind is str or kind is bytes:
        data = value.encode("utf-8") if kind is str else value
        parts += [b"s" if kind is str else b"y", _LENGTH.pack(len(data)), data]
    elif (kind is tuple or kind is dict) and depth < FRAME_DEPTH:
        parts += [b"t" if kind is tuple else b"d", _LENGTH.pack(len(value))]
        for item in value.items() if kind is dict else value:
            if kind is dict:
                if type(item[0]) is not str:
                    raise _NotPackable
                _pack(item[0], parts, depth + 1)
                _pack(item[1], parts, depth + 1)
            else:
                _pack(item, parts, depth + 1)
    else:
        raise _NotPackable


def unpack(payload: bytes) -> Any:
    """Return the value of a binary frame; ``ValueError`` ("malformed frame: ...") if it is none.

    Every length is checked against the payload before anything is built,
    so a frame cannot ask for more memory than its own size.
    """
    if payload[: len(FRAME_TAG)] != FRAME_TAG:
        raise ValueError("malformed frame: no binary frame tag")
    reader = _Reader(payload, len(FRAME_TAG))
    value = reader.value(0)
    if reader.at != len(payload):
        raise ValueError(f"malformed frame: {len(payload) - reader.at} bytes after its value")
    return value


class _Reader:
    """Read the values of a binary frame from ``data``, starting at ``at``."""

    def __init__(self, data: bytes, at: int) -> None:
        self.data, self.at = data, at

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise ValueError(f"malformed frame: {size} bytes asked for, fewer left")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def value(self, depth: int) -> Any:
        if depth > FRAME_DEPTH:
            raise ValueError(f"malformed frame: nested deeper than {FRAME_DEPTH}")
        head = self.take(1)
        if head in (b"N", b"T", b"F"):
            return {b"N": None, b"T": True, b"F": False}[head]
        if head == b"i":
            return _INT.unpack(self.take(8))[0]
        if head == b"f":
            return _FLOAT.unpack(self.take(8))[0]
        if head in (b"s", b"y", b"t", b"d"):
            (size,) = _LENGTH.unpack(self.take(4))
            if head == b"t":
                return tuple(self.value(depth + 1) for _ in range(size))
            if head == b"d":
                return {self.key(depth): self.value(depth + 1) for _ in range(size)}
            data = self.take(size)
            return data if head == b"y" else self.text(data)
        if head in (b"a", b"g"):
            return self.array(scalar=head == b"g")
        raise ValueError(f"malformed frame: unknown type byte {head!r}")

    def key(self, depth: int) -> str:
        key = self.value(depth + 1)
        if type(key) is not str:
            raise ValueError("malformed frame: a dict key that is no str")
        return key

    @staticmethod
    def text(data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("malformed frame: a str that is no utf-8") from None

    def array(self, *, scalar: bool) -> Any:
        code = self.text(self.take(self.take(1)[0]))
        try:
            dtype = np.dtype(code)
        except TypeError:
            raise ValueError(f"malformed frame: no dtype {code!r}") from None
        if dtype.kind not in FRAME_DTYPE_KINDS or dtype.fields is not None or dtype.subdtype:
            raise ValueError(f"malformed frame: an array of dtype {code!r}")
        ndim = self.take(1)[0]
        shape = struct.unpack(f"<{ndim}Q", self.take(8 * ndim))
        if scalar and ndim:
            raise ValueError("malformed frame: a scalar with dimensions")
        size = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
        try:  # a zero dimension beside a huge one: no data, yet no such array
            data = np.frombuffer(self.take(size), dtype=dtype).reshape(shape)
        except ValueError as error:
            raise ValueError(f"malformed frame: an array of shape {shape} ({error})") from None
        return data[()] if scalar else data.copy()  # a copy owns its data and is writeable


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
