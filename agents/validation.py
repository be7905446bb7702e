"""The checks an agent makes of its hyperparameters and of what it is given.

``Interval`` (scikit-learn's constraint without its silent coercions) for
the hyperparameters' ``_parameter_constraints`` tables, and the cheap,
naming checks of a step's inputs: finite arrays and numbers, seeds, an
action in a Gymnasium space, an observation as a float array. Every error
names the argument (and the agent) at fault. Re-exported by
:mod:`agents.base`, where agents import them from.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import Options, StrOptions

__all__ = [
    "Integral",
    "Interval",
    "Options",
    "Real",
    "SpaceCheck",
    "StrOptions",
    "check_finite",
    "check_finite_numbers",
    "check_seed",
    "example_dim",
    "float_array",
]


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, without its two silent coercions.

    A bool is not a number here (``horizon=True`` is refused, where
    scikit-learn takes it as 1), and a real must be finite (an unbounded
    side excludes infinity, as the printed ``[0, inf)`` says).

    Examples
    --------
    >>> Interval(Integral, 1, None, closed="left").is_satisfied_by(True)
    False
    >>> Interval(Real, 0, None, closed="left").is_satisfied_by(float("inf"))
    False
    >>> Interval(Real, 0, None, closed="left").is_satisfied_by(np.float32(0.5))
    True
    """

    def is_satisfied_by(self, val: Any) -> bool:
        """Whether ``val`` is a finite number of the interval's type inside it."""
        if isinstance(val, bool | np.bool_):
            return False
        return bool(super().is_satisfied_by(val)) and math.isfinite(val)


def check_finite(values: np.ndarray, name: str, owner: str) -> None:
    """Raise a ``ValueError`` naming ``name`` if ``values`` holds NaN or an infinity.

    ``owner`` (the agent's class name) starts the message. ``values`` is a
    numeric array (or scalar); the check is one pass over it, cheap enough
    for every step.

    Examples
    --------
    >>> check_finite(np.array([1.0, np.nan]), "observation", "Greedy")
    Traceback (most recent call last):
    ...
    ValueError: Greedy: observation must be finite, got nan at index (1,)
    """
    # x . x is finite exactly when every entry is (NaN and infinities propagate and
    # squares never cancel): one BLAS call, faster than isfinite().all() on small arrays
    if math.isfinite(np.vdot(values, values)):
        return
    array = np.asarray(values)
    bad = ~np.isfinite(array)
    if bad.any():  # (else the squares overflowed: huge, but finite)
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{owner}: {name} must be finite, got {array[where]} at index {where}")


#: the exact types of an integer action, as ``osfb_gym.core.validation.INTEGER_TYPES`` (agents
#: import nothing of ``osfb_gym``: the grader's agent process must not load the envs)
_INTEGER_TYPES = frozenset(
    (int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp)
)


def _check_binary(value: Any, name: str, shape: tuple[int, ...]) -> None:
    """Raise unless ``value`` is an array of 0/1 entries (integer, boolean, float) of ``shape``."""
    try:
        array = np.asarray(value)
    except Exception as error:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of shape {shape}, got {value!r}") from error
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of 0/1 numbers of shape {shape}, got {value!r}")
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {array.shape}")
    if not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name} must hold only 0 and 1, got {value!r}")


def check_seed(seed: Any, name: str) -> int | None:
    """Return ``seed`` as an int (None stays None) if it is an integer >= 0; else raise naming it.

    Examples
    --------
    >>> check_seed(np.int64(3), "seed")
    3
    >>> check_seed(-1, "Greedy.reset: seed")
    Traceback (most recent call last):
    ...
    ValueError: Greedy.reset: seed must be an integer >= 0, got -1
    """
    if seed is None:
        return None
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, Integral):
        raise TypeError(
            f"{name} must be an integer >= 0 or None, got {seed!r} ({type(seed).__name__})"
        )
    if seed < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {seed!r}")
    return int(seed)


def check_finite_numbers(value: Any, name: str) -> None:
    """Raise ``ValueError`` naming the entry if a number inside ``value`` is NaN or infinite.

    ``value`` is a number, or a dict, list or tuple holding numbers (nested
    any deep); the name of a bad entry reads like its access path
    (``feedback['cutoff']``). Arrays and other objects are left to their
    owners' checks (one pass over a big array is theirs to decide).

    Examples
    --------
    >>> check_finite_numbers({"cutoff": float("nan"), "link": "linear"}, "feedback")
    Traceback (most recent call last):
    ...
    ValueError: feedback['cutoff'] must be a finite number, got nan
    """
    if isinstance(value, Real) and not isinstance(value, bool | np.bool_):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_finite_numbers(item, f"{name}[{key!r}]")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_finite_numbers(item, f"{name}[{index}]")


class SpaceCheck:
    """Whether a value is an element of a Gymnasium space: built once, called every step.

    The checks an env's ``step`` makes of its action, for an agent's
    ``update`` to make of the action it is told was taken: ``Discrete``
    takes an integer (a bool too, as the envs do), ``MultiBinary`` an array
    of 0/1 entries (integer, boolean, or floats exactly 0 or 1, as
    stable-baselines3 hands them over), ``MultiDiscrete`` an integer array,
    each of the space's shape and inside it. The common cases (a Python or
    numpy integer; an integer array of the right shape) cost a few
    comparisons; other spaces fall back to ``space.contains``. Picklable.

    Examples
    --------
    >>> from gymnasium import spaces
    >>> check = SpaceCheck(spaces.MultiDiscrete([3, 2]))
    >>> check(np.array([2, 1]), "action")
    >>> check([5, 1], "action")
    Traceback (most recent call last):
    ...
    ValueError: action must lie in MultiDiscrete([3 2]), got [5, 1]
    """

    def __init__(self, space: Any) -> None:
        from gymnasium import spaces

        self.space = space
        self.kind = "other"
        self.shape: tuple[int, ...] = tuple(getattr(space, "shape", None) or ())
        self.low = self.high = 0
        # a small integer array is checked as a Python list (a few hundred nanoseconds where
        # NumPy's reductions cost microseconds each): its entries' bounds, flattened
        self.lows: list[int] = []
        self.highs: list[int] = []
        if isinstance(space, spaces.Discrete):
            self.kind, self.low = "discrete", int(space.start)
            self.high = self.low + int(space.n)
        elif isinstance(space, spaces.MultiBinary):
            self.kind = "binary"
            size = int(np.prod(self.shape))
            self.lows, self.highs = [0] * size, [2] * size
        elif isinstance(space, spaces.MultiDiscrete):
            self.kind = "multi"
            self.lows = np.ravel(space.start).astype(int).tolist()
            self.highs = np.ravel(space.start + space.nvec).astype(int).tolist()

    def __call__(self, value: Any, name: str) -> None:
        """Return None if ``value`` lies in the space; else raise naming ``name``."""
        kind = self.kind
        if kind == "discrete":
            if type(value) in _INTEGER_TYPES and self.low <= value < self.high:
                return
            item = value
            if isinstance(item, np.ndarray) and item.shape == () and item.dtype.kind in "biu":
                item = item.item()
            if not isinstance(item, Integral):
                raise TypeError(
                    f"{name} must be an integer in {self.space}, got {value!r} "
                    f"({type(value).__name__})"
                )
            if not self.low <= int(item) < self.high:
                raise ValueError(f"{name} must lie in {self.space}, got {value!r}")
            return
        if (
            self.lows
            and type(value) is np.ndarray
            and value.size <= 16
            and value.shape == self.shape
            and value.dtype.kind in "iu"
        ):
            if value.size == 1:  # one entry (a lending agent's decision, every step)
                if self.lows[0] <= value.item() < self.highs[0]:
                    return
            else:
                entries = value.tolist() if value.ndim == 1 else value.ravel().tolist()
                for entry, low, high in zip(entries, self.lows, self.highs):  # noqa: B905
                    if not low <= entry < high:
                        break
                else:
                    return
        if kind == "binary":
            if not (
                type(value) is np.ndarray
                and value.shape == self.shape
                and value.dtype.kind in "biu"
                and ((value == 0) | (value == 1)).all()
            ):
                _check_binary(value, name, self.shape)
            return
        try:
            array = np.asarray(value)
        except Exception as error:  # ragged lists and the like
            raise TypeError(f"{name} must be an element of {self.space}, got {value!r}") from error
        if kind == "multi":
            if array.dtype.kind not in "biu":
                raise TypeError(
                    f"{name} must be an integer array of shape {self.shape}, got {value!r}"
                )
            if array.shape != self.shape:
                raise ValueError(f"{name} must have shape {self.shape}, got shape {array.shape}")
        elif array.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be an element of {self.space}, got {value!r}")
        try:
            inside = self.space.contains(array.astype(self.space.dtype))
        except Exception:  # noqa: BLE001  (a space that cannot test it: not an element)
            inside = False
        if not inside:
            raise ValueError(f"{name} must lie in {self.space}, got {value!r}")


def float_array(value: Any, name: str, owner: str) -> np.ndarray:
    """Return ``value`` as a float array, or raise a ``TypeError`` naming ``name``.

    NumPy's own message for ``np.asarray("x", dtype=float)`` names neither the
    argument nor the agent; this one does. ``owner`` starts the message.

    Examples
    --------
    >>> float_array("x", "observation", "Greedy.act")
    Traceback (most recent call last):
    ...
    TypeError: Greedy.act: observation must be an array of numbers, got 'x' (str)
    """
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"{owner}: {name} must be an array of numbers, got {value!r:.80} "
            f"({type(value).__name__})"
        ) from None


def example_dim(observation_space: Any, owner: str) -> int:
    """Return the number of features of a stream's observation space: a 1-D ``Box``; else raise.

    The stream families (apple tasting, reject option) show one example per
    step. ``owner`` (the agent's class name) starts the message.

    Examples
    --------
    >>> from gymnasium import spaces
    >>> example_dim(spaces.Box(-1, 1, (3,)), "DSOL")
    3
    >>> example_dim(spaces.Box(-1, 1, (2, 3)), "DSOL")
    Traceback (most recent call last):
    ...
    ValueError: DSOL needs a one-dimensional Box observation_space (one example per step), \
got Box(-1.0, 1.0, (2, 3), float32)
    """
    from gymnasium import spaces

    shape = getattr(observation_space, "shape", None)
    if not isinstance(observation_space, spaces.Box) or shape is None or len(shape) != 1:
        raise ValueError(
            f"{owner} needs a one-dimensional Box observation_space (one example per step), "
            f"got {observation_space}"
        )
    return int(shape[0])
