"""Validation helpers: every error names the parameter and what was expected.

Nothing here clips or coerces: a value is either accepted as it is (numpy
scalars count as the Python number they hold) or rejected with a
``TypeError`` (wrong kind) or ``ValueError`` (right kind, bad value).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any, TypeVar

import gymnasium as gym
import numpy as np

from osfb_gym.core.family import load

T = TypeVar("T")

#: the exact types of an integer action as Python and RL libraries pass it: checked by
#: ``type(x) in INTEGER_TYPES`` on a step's fast path (bool and subclasses go the general way)
INTEGER_TYPES = frozenset(
    (int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp)
)


def check_int(
    value: Any,
    name: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """Return ``value`` as an ``int`` if it is an integer within bounds.

    Examples
    --------
    >>> check_int(3, "batch_size", minimum=1)
    3
    >>> check_int(0, "batch_size", minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_float(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite ``float`` within ``[low, high]``.

    The bounds are inclusive unless ``low_inclusive``/``high_inclusive`` say
    otherwise; NaN and infinities are always rejected.

    Examples
    --------
    >>> check_float(0.7, "cutoff_quantile", low=0, high=1, low_inclusive=False,
    ...             high_inclusive=False)
    0.7
    >>> check_float(float("nan"), "cutoff")
    Traceback (most recent call last):
    ...
    ValueError: cutoff must be a finite number, got nan
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if low is not None and (value < low or (value == low and not low_inclusive)):
        bound = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {bound} {low}, got {value}")
    if high is not None and (value > high or (value == high and not high_inclusive)):
        bound = "<=" if high_inclusive else "<"
        raise ValueError(f"{name} must be {bound} {high}, got {value}")
    return value


def check_data_home(data_home: Any, dataset: Any) -> str | None:
    """Return ``data_home``: None, or a folder (str) given together with a dataset.

    Examples
    --------
    >>> check_data_home(None, None) is None
    True
    >>> check_data_home("data", None)
    Traceback (most recent call last):
    ...
    ValueError: data_home applies with a dataset only, got data_home='data'
    """
    if data_home is not None and not isinstance(data_home, str):
        raise TypeError(f"data_home must be a path (str) or None, got {data_home!r}")
    if data_home is not None and dataset is None:
        raise ValueError(f"data_home applies with a dataset only, got data_home={data_home!r}")
    return data_home


def check_choice(value: Any, name: str, choices: Iterable[T]) -> T:
    """Return ``value`` if it is one of ``choices``, else raise naming them all.

    Examples
    --------
    >>> check_choice("logistic", "link", ("linear", "logistic"))
    'logistic'
    >>> check_choice("probit", "link", ("linear", "logistic"))
    Traceback (most recent call last):
    ...
    ValueError: link must be one of 'linear', 'logistic'; got 'probit'
    """
    options = tuple(choices)
    if not isinstance(value, str | int | float | type(None)) or value not in options:
        listed = ", ".join(repr(choice) for choice in options)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value  # type: ignore[return-value]


def check_binary_array(value: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``value`` as an ``int8`` array of 0/1 entries with exactly ``shape``.

    Integer, boolean and floating arrays are accepted when every entry is
    exactly 0 or 1 (stable-baselines3 hands MultiBinary actions over as
    floats); anything else, NaN included, is rejected, never rounded.

    Examples
    --------
    >>> check_binary_array([1, 0, 1], "action", (3,))
    array([1, 0, 1], dtype=int8)
    >>> check_binary_array([1, 0.5, 1], "action", (3,))
    Traceback (most recent call last):
    ...
    ValueError: action must hold only 0 and 1, got [1.  0.5 1. ]
    """
    try:
        array = np.asarray(value)
    except Exception as error:  # ragged lists and the like
        raise TypeError(f"{name} must be an array of shape {shape}, got {value!r}") from error
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be an array of 0/1 numbers of shape {shape}, got dtype {array.dtype}"
        )
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {array.shape}")
    if not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name} must hold only 0 and 1, got {array}")
    return array.astype(np.int8)


def check_rejection_cost(d: Any, name: str = "d") -> float:
    """Return the rejection cost ``d`` if it lies in (0, 0.5), else raise naming ``name``.

    At ``d >= 0.5`` rejecting is never cheaper than guessing (a coin flip
    costs 0.5 in expectation), so the reject option is void; ``d = 0``
    would make rejecting free.

    Examples
    --------
    >>> check_rejection_cost(0.25)
    0.25
    >>> check_rejection_cost(0.5)
    Traceback (most recent call last):
    ...
    ValueError: d must be < 0.5, got 0.5
    """
    return check_float(d, name, low=0.0, high=0.5, low_inclusive=False, high_inclusive=False)


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (a numpy bool too); else raise naming it.

    An integer is not a flag here: ``download=1`` or ``download="no"`` is refused.

    Examples
    --------
    >>> check_bool(np.True_, "download")
    True
    >>> check_bool("no", "download")
    Traceback (most recent call last):
    ...
    TypeError: download must be True or False, got 'no' (str)
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r} ({type(value).__name__})")
    return bool(value)


def check_options(options: Any, known: Iterable[str], owner: str) -> dict[str, Any] | None:
    """Return a reset's ``options`` if it is None or a dict of ``known`` keys; else raise.

    An unknown key would be ignored without a word (a typo as much as an
    option the env does not have), so it is an error naming the key and
    the keys ``owner`` (the env's name) knows.

    Examples
    --------
    >>> check_options({"foo": 1}, (), "AppleTasting-v0")
    Traceback (most recent call last):
    ...
    ValueError: options of AppleTasting-v0.reset has no key 'foo'; known keys: none
    """
    if options is None:
        return None
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {options!r}")
    valid = tuple(known)
    for key in options:
        if key not in valid:
            listed = ", ".join(repr(name) for name in valid) or "none"
            raise ValueError(f"options of {owner}.reset has no key {key!r}; known keys: {listed}")
    return options


#: the most memory a size may ask for when neither the machine nor a limit says less
_FALLBACK_MEMORY = 2**40


def memory_limit() -> int:
    """Return the bytes a process can hope to allocate: the RAM, or a lower address-space limit.

    Linux and macOS report the physical memory through ``os.sysconf``; the
    soft ``RLIMIT_AS`` of the process (a container's or a grader's cap) is
    taken when it is lower. Elsewhere, 1 TiB.
    """
    import os

    limit = _FALLBACK_MEMORY
    try:
        limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and 0 < soft < limit:
            limit = soft
    except (ImportError, ValueError, OSError):  # pragma: no cover - Windows
        pass
    return int(limit)


def check_memory(n_bytes: float, what: str, *, limit: int | None = None) -> None:
    """Raise ``ValueError`` if an allocation of about ``n_bytes`` cannot fit in memory.

    Called with an estimate before allocating, so a size such as
    ``n_users=10**9`` is refused at once, naming ``what`` (the parameters and
    the arithmetic), instead of ending in a ``MemoryError`` (or the
    kernel's OOM killer) after minutes. ``limit`` defaults to
    :func:`memory_limit`.

    Examples
    --------
    >>> check_memory(8 * 10**9 * 5, "batch_size x dim = 1000000000 x 5 float64", limit=2**34)
    Traceback (most recent call last):
    ...
    ValueError: batch_size x dim = 1000000000 x 5 float64 needs about 40.0 GB, more than the \
17.2 GB of memory this process can use; choose smaller sizes
    """
    available = memory_limit() if limit is None else limit
    if n_bytes > available:
        raise ValueError(
            f"{what} needs about {n_bytes / 1e9:.1f} GB, more than the {available / 1e9:.1f} GB "
            "of memory this process can use; choose smaller sizes"
        )


class RenderModes(list):  # type: ignore[type-arg]
    """An env's ``metadata["render_modes"]``: a list whose ``in`` refuses a non-string mode.

    ``gym.make(id, render_mode=1.5)`` tests ``render_mode in
    metadata["render_modes"]`` and then calls ``render_mode.endswith`` before
    the env is built, so the env's own check never runs and the user reads
    ``AttributeError: 'float' object has no attribute 'endswith'``. This
    list answers ``in`` for strings and None like any list and raises a
    ``TypeError`` naming ``render_mode`` for anything else.

    Examples
    --------
    >>> modes = RenderModes(["ansi", "rgb_array"])
    >>> "ansi" in modes, "human" in modes
    (True, False)
    >>> 1.5 in modes
    Traceback (most recent call last):
    ...
    TypeError: render_mode must be one of 'ansi', 'rgb_array' or None; got 1.5 (float)
    """

    def __contains__(self, value: object) -> bool:
        if value is not None and not isinstance(value, str):
            listed = ", ".join(repr(mode) for mode in self)
            raise TypeError(
                f"render_mode must be one of {listed} or None; got {value!r} "
                f"({type(value).__name__})"
            )
        return super().__contains__(value)


#: ``gym.make``'s own keywords (``max_episode_steps``, ...), which it takes beside the env's
MAKE_ARGUMENTS = tuple(
    p for p in inspect.signature(gym.make).parameters if p not in ("id", "kwargs")
)


def env_arguments(env_id: str) -> list[str] | None:
    """Return the keyword arguments the env of ``env_id`` takes; None when it takes any.

    None also for a creator registered as an object rather than a
    ``"module:Class"`` string, whose arguments the env checks itself, and for
    one that cannot be imported or has no signature, which ``gym.make`` reports.

    Examples
    --------
    >>> import osfb_gym
    >>> "world_seed" in env_arguments("OneSidedLending-v0")
    True
    """
    entry_point = gym.spec(env_id).entry_point
    if not isinstance(entry_point, str):
        return None
    try:
        parameters = inspect.signature(load(entry_point)).parameters.values()
    except (ImportError, AttributeError, ValueError, TypeError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters]


def check_env_kwargs(env_id: str, kwargs: Mapping[str, Any], name: str | None = None) -> None:
    """Refuse an argument the env of ``env_id`` does not take, naming it and those it takes.

    ``gym.make``'s own keywords (:data:`MAKE_ARGUMENTS`) pass.

    Gymnasium's own message (``X.__init__() got an unexpected keyword argument
    'y' was raised from the environment creator for ...``) names neither the
    caller's parameter ``name`` (``"env_kwargs"``, a CLI flag) nor the
    arguments there are; through an RL-ready id it came twice.

    Raises
    ------
    TypeError
        ``"<name>: <env_id> takes no argument 'y'; its arguments: ..."``.

    Examples
    --------
    >>> import osfb_gym
    >>> check_env_kwargs("AppleTasting-v0", {"horizon": 5})
    >>> check_env_kwargs("AppleTasting-v0", {"horizn": 5}, "env_kwargs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: env_kwargs: AppleTasting-v0 takes no argument 'horizn'; its arguments: ...
    """
    accepted = env_arguments(env_id)
    if accepted is None:
        return
    for key in kwargs:
        if key not in accepted and key not in MAKE_ARGUMENTS:
            raise TypeError(
                ("" if name is None else f"{name}: ")
                + f"{env_id} takes no argument {key!r}; its arguments: "
                f"{', '.join(a for a in accepted if a != 'render_mode')}"
            )
