"""The Agent contract on scikit-learn's ``BaseEstimator``.

An agent stores its hyperparameters in ``__init__`` and nothing else;
learned state (trailing underscore) is created in :meth:`Agent.reset`.
``BaseEstimator`` gives ``get_params(deep=True)``, nested ``set_params``
(``LabelEfficient(MarginPerceptron()).set_params(base__m=5)``),
``sklearn.base.clone`` and the HTML repr in notebooks; a declarative table,
``_parameter_constraints`` (scikit-learn's own format), says what each
hyperparameter may be and is checked once per episode, at ``reset``.
:func:`check_agent` is the whole contract as one function, used by the
project's tests and by the grader.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pickle
import pkgutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import Any, ClassVar, cast

import gymnasium as gym
import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import Options, StrOptions, validate_parameter_constraints

__all__ = [
    "Agent",
    "AgentContractError",
    "Interval",
    "NotResetError",
    "Options",
    "StrOptions",
    "all_agents",
    "check_agent",
    "SpaceCheck",
    "check_finite",
    "check_finite_numbers",
    "check_seed",
    "float_array",
    "Integral",
    "Real",
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


class NotResetError(NotFittedError):
    """An agent was asked to act or learn before :meth:`Agent.reset` started an episode."""


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
            entries = value.tolist() if value.ndim == 1 else value.ravel().tolist()
            for entry, low, high in zip(entries, self.lows, self.highs):  # noqa: B905 (same size)
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


class Agent(BaseEstimator):
    """Base class of every decision maker.

    Subclasses declare hyperparameters as keyword arguments of ``__init__``,
    store each unchanged under its own name, declare what each may be in
    ``_parameter_constraints`` (scikit-learn's table: ``Interval``,
    ``StrOptions``, ``"boolean"``, ``None``, a type, or ``"no_validation"``),
    and implement :meth:`act` (and :meth:`update` if they learn).
    ``env_ids`` lists the environments the agent is made for. A shared base
    class that is not meant to be used itself sets ``abstract = True`` in
    its own body, so the generic test suite skips it.

    Examples
    --------
    >>> class Always(Agent):
    ...     env_ids = ("OneSidedLending-v0",)
    ...     _parameter_constraints = {"value": [Interval(Integral, 0, 1, closed="both")]}
    ...     def __init__(self, value: int = 1):
    ...         self.value = value
    ...     def act(self, observation):
    ...         return np.full(len(observation), self.value, dtype=np.int8)
    >>> Always(value=0)
    Always(value=0)
    >>> Always().get_params()
    {'value': 1}
    >>> Always(value=2).reset(gym.spaces.Box(0, 1, (1, 2)), gym.spaces.MultiBinary(1))
    Traceback (most recent call last):
    ...
    sklearn.utils._param_validation.InvalidParameterError: The 'value' parameter of Always \
must be an int in the range [0, 1]. Got 2 instead.
    """

    env_ids: ClassVar[tuple[str, ...]] = ()
    abstract: ClassVar[bool] = True  # concrete agents leave this out of their class body
    _parameter_constraints: ClassVar[dict[str, Any]] = {}

    # ------------------------------------------------------------------ contract
    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Start an episode: validate the hyperparameters, forget what was learned, seed.

        ``feedback`` is the reset's ``info["feedback"]`` (a warm-start
        sample, the task's public terms). Subclasses call ``super().reset``
        first and then build their state from ``feedback``.

        Checked here, once for every agent: the hyperparameters (the
        constraints table, then that no number inside one, a dict's values
        included, is NaN or infinite), the spaces (Gymnasium spaces; the
        observation space may be None for an agent that does not read it),
        ``seed`` (None or an integer >= 0, a numpy one too) and every number
        of ``feedback`` (finite: a task's ``cutoff=nan`` would make every
        comparison false). Its arrays are the family's to check.
        """
        owner = type(self).__name__
        self._validate_params()
        for name, value in self.get_params(deep=False).items():
            check_finite_numbers(value, f"{owner} hyperparameter {name}")
        self._check_params()
        # (an agent that reads no observation space may be given None)
        spaces = {"observation_space": observation_space, "action_space": action_space}
        for name, space in spaces.items():
            if not isinstance(space, gym.Space) and (space is not None or name == "action_space"):
                raise TypeError(
                    f"{owner}.reset: {name} must be a gymnasium Space (the env's "
                    f"{name}), got {space!r} ({type(space).__name__})"
                )
        if seed is not None:
            seed = check_seed(seed, f"{owner}.reset: seed")
        if feedback is not None and not isinstance(feedback, Mapping):
            raise TypeError(
                f"{owner}.reset: feedback must be the reset's info['feedback'] "
                f"(a dict) or None, got {type(feedback).__name__}"
            )
        if feedback is not None:
            check_finite_numbers(dict(feedback), f"{owner}.reset: feedback")
        self.observation_space_ = observation_space
        self.action_space_ = action_space
        self.rng_ = np.random.default_rng(seed)
        self._action_check = SpaceCheck(action_space)

    def _check_params(self) -> None:
        """Check what the table cannot say: relations between hyperparameters (default: none)."""

    def _require_reset(self, method: str) -> None:
        """Raise :class:`NotResetError` unless :meth:`reset` has started an episode."""
        if "rng_" not in self.__dict__:
            raise NotResetError(
                f"{type(self).__name__}.{method}() was called before reset(); call "
                "reset(observation_space, action_space, seed=..., feedback=...) first"
            )

    def _check_update(
        self, action: Any, reward: Any, feedback: Any, keys: tuple[str, ...] = ("revealed", "y")
    ) -> None:
        """Check what :meth:`update` is given, cheaply enough for every step; raise naming it.

        Also raises :class:`NotResetError` before :meth:`reset`. ``action``
        must lie in the action space the agent was reset with (as the env's
        ``step`` checks it), ``reward`` be a finite number and ``feedback``
        a dict holding ``keys`` (the step's ``info["feedback"]``). The
        families' ``update`` methods call it first.
        """
        self._require_reset("update")
        owner = type(self).__name__
        self._action_check(action, f"{owner}.update: action")
        try:
            finite = math.isfinite(reward)
        except TypeError:
            raise TypeError(
                f"{owner}.update: reward must be a number, got {reward!r:.80} "
                f"({type(reward).__name__})"
            ) from None
        if not finite:
            raise ValueError(f"{owner}.update: reward must be finite, got {reward!r}")
        if type(feedback) is not dict and not isinstance(feedback, Mapping):
            raise TypeError(
                f"{owner}.update: feedback must be the step's info['feedback'] (a dict), got "
                f"{feedback!r:.80} ({type(feedback).__name__})"
            )
        for key in keys:
            if key not in feedback:
                raise ValueError(
                    f"{owner}.update: feedback must hold {', '.join(map(repr, keys))} (the "
                    f"step's info['feedback']), got keys {sorted(map(str, feedback))}"
                )

    def act(self, observation: Any) -> Any:
        """Return an action in ``action_space`` for ``observation``."""
        raise NotImplementedError(f"{type(self).__name__} must implement act()")

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Learn from what the step revealed (never the oracle). Default: nothing."""

    # ------------------------------------------------------------------ parameters
    def clone(self, **overrides: Any) -> Agent:
        """Return ``sklearn.base.clone(self)``, with ``overrides`` set on the copy.

        A fresh, unfitted agent with the same hyperparameters; a
        hyperparameter that is itself an agent (a wrapped base learner) is
        cloned too, so the copy shares no learned state with the original.
        """
        fresh: Agent = clone(self)
        return fresh.set_params(**overrides) if overrides else fresh


def all_agents() -> list[type[Agent]]:
    """Return every concrete :class:`Agent` subclass of the ``agents`` package.

    Every public module of the package is imported (not the private ones,
    ``_name``, such as the optional compiled loops: importing numba costs
    ~100 MB); shared bases (``abstract = True`` in their own body) and
    private classes (``_Name``) are left out.
    Sorted by module and name, so a ``Greedy`` of two families stays two
    classes. (scikit-learn's ``all_estimators``.)

    Examples
    --------
    >>> names = [cls.__name__ for cls in all_agents()]
    >>> "Adaptive" in names and "DSAL" in names and "CutoffAgent" not in names
    True
    """
    # the package's folder, not `import agents`: the package's __init__ imports this module
    for module in pkgutil.walk_packages([str(Path(__file__).resolve().parent)], prefix="agents."):
        if "._" not in module.name:
            importlib.import_module(module.name)
    found, stack = set(), list(Agent.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        concrete = not cls.__dict__.get("abstract", False) and not cls.__name__.startswith("_")
        if concrete and cls.__module__.startswith("agents."):
            found.add(cls)
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


# ---------------------------------------------------------------------------- check_agent
CHECK_STEPS = 40  # steps of each checking episode (a TimeLimit on the env's own defaults)


class AgentContractError(AssertionError):
    """Raised by :func:`check_agent`: the message names the agent and the failed check.

    ``check`` is the failed check's name (``"hyperparameters"``, ``"clone"``,
    ``"episode on <id>"``, ...), ``reason`` the message without the prefix.
    """

    def __init__(self, name: str, check: str, reason: str) -> None:
        super().__init__(f"check_agent({name}): {check}: {reason}")
        self.check, self.reason = check, reason


def _fail(name: str, check: str, message: str) -> AgentContractError:
    return AgentContractError(name, check, message)


def _same(a: Any, b: Any) -> bool:
    """Whether two hyperparameter values, actions or observations are equal."""
    if hasattr(a, "get_params") and hasattr(b, "get_params"):
        return type(a) is type(b) and _same(a.get_params(deep=False), b.get_params(deep=False))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b, equal_nan=True))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    try:
        return bool(a == b) or (a != a and b != b)  # NaN equals NaN here
    except Exception:  # noqa: BLE001  (an object without a usable ==)
        return repr(a) == repr(b)


def _episode(
    agent: Agent, env: gym.Env, seed: int, steps: int | None = None
) -> tuple[list[Any], Any]:
    """Run ``agent`` on ``env`` (the oracle withheld); return its actions and last observation."""
    observation, info = env.reset(seed=seed)
    agent.reset(env.observation_space, env.action_space, seed=seed, feedback=info.get("feedback"))
    actions: list[Any] = []
    done = False
    while not done and (steps is None or len(actions) < steps):
        action = agent.act(observation)
        if not env.action_space.contains(np.asarray(action, dtype=env.action_space.dtype)):
            raise AssertionError(f"act() returned {action!r}, not in {env.action_space}")
        actions.append(action)
        next_observation, reward, terminated, truncated, info = env.step(action)
        agent.update(observation, action, float(reward), info.get("feedback"))
        observation, done = next_observation, terminated or truncated
    return actions, observation


class _Subject:
    """What a check is about: the agent's class, the instance given (if any) and its name."""

    def __init__(self, agent_or_class: Any) -> None:
        instance: Agent | None
        if isinstance(agent_or_class, type):
            if not issubclass(agent_or_class, Agent):
                raise _fail(
                    repr(agent_or_class), "is an Agent", "not a subclass of agents.base.Agent"
                )
            cls, instance = agent_or_class, None
        elif isinstance(agent_or_class, Agent):
            # (Agent derives from the untyped BaseEstimator, so mypy cannot narrow here)
            instance = cast(Agent, agent_or_class)
            cls = type(instance)
        else:
            raise _fail(repr(agent_or_class), "is an Agent", "not an agents.base.Agent")
        self.cls: type[Agent] = cls
        self.instance = instance
        self.name = cls.__name__

    def names(self) -> list[str]:
        """Return the hyperparameters' names (a failure is the ``hyperparameters`` check's)."""
        return list(_run(self.name, "hyperparameters", lambda: self.cls._get_param_names()))

    def build(self) -> Agent:
        """Build a fresh agent: the class's defaults, or the instance's hyperparameters."""
        cls, name = self.cls, self.name
        try:
            if self.instance is None:
                return cls()
            return cls(**self.instance.get_params(deep=False))
        except TypeError as error:
            raise _fail(
                name,
                "hyperparameters",
                f"{name}() cannot be built from its hyperparameters ({error}); give every "
                "hyperparameter of __init__ a default value, e.g. `def __init__(self, alpha=0.5):`",
            ) from error
        except Exception as error:  # noqa: BLE001  (the diagnosis: __init__ itself raises)
            raise _fail(
                name, "init raises", f"{name}() raised {type(error).__name__}: {error} in __init__"
            ) from error


def check_hyperparameters(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``__init__`` lists the hyperparameters as keywords, with which it builds."""
    subject = _Subject(agent_or_class)
    subject.names()
    subject.build()


def check_init_stores_only(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``__init__`` stores each hyperparameter unchanged, and nothing else."""
    subject = _Subject(agent_or_class)
    names, fresh, name = subject.names(), subject.build(), subject.name
    stored = vars(fresh)
    for param in names:
        if param not in stored:
            raise _fail(
                name,
                "init stores only",
                f"__init__ does not store {param} under its own name "
                f"(write `self.{param} = {param}`)",
            )
    extra = sorted(set(stored) - set(names))
    if extra:
        raise _fail(
            name,
            "init stores only",
            f"__init__ sets {', '.join('self.' + attribute for attribute in extra)}, which "
            "are not hyperparameters; __init__ only stores its arguments: create learned "
            "state (names ending in _, e.g. `self.w_`) in reset(), so every episode starts "
            "afresh",
        )
    if subject.instance is None:
        defaults = {
            param: value.default
            for param, value in inspect.signature(subject.cls.__init__).parameters.items()  # type: ignore[misc]
            if param in names
        }
        for param in names:
            if not (stored[param] is defaults[param] or _same(stored[param], defaults[param])):
                raise _fail(
                    name,
                    "init stores only",
                    f"{param} is {stored[param]!r} after {name}(), not its default "
                    f"{defaults[param]!r}: store hyperparameters unchanged",
                )


def check_constraints_table(agent_or_class: Agent | type[Agent]) -> None:
    """Check ``_parameter_constraints``: it names every hyperparameter, and the values pass."""
    subject = _Subject(agent_or_class)
    names, fresh, name, cls = subject.names(), subject.build(), subject.name, subject.cls
    table = set(cls._parameter_constraints)
    if table != set(names):
        missing, unknown = sorted(set(names) - table), sorted(table - set(names))
        raise _fail(
            name,
            "constraints table",
            f"_parameter_constraints must name every hyperparameter and nothing else; "
            f"missing {missing}, unknown {unknown}",
        )
    _run(
        name,
        "constraints table",
        lambda: validate_parameter_constraints(
            cls._parameter_constraints, fresh.get_params(deep=False), caller_name=name
        ),
    )


def check_set_params(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``set_params`` refuses an unknown hyperparameter with a ``ValueError``."""
    subject = _Subject(agent_or_class)
    fresh = subject.build()
    try:
        clone(fresh).set_params(no_such_hyperparameter=1)
    except ValueError:
        return
    raise _fail(subject.name, "set_params", "set_params(no_such_hyperparameter=1) was accepted")


def check_clone(agent_or_class: Agent | type[Agent]) -> None:
    """Check that ``sklearn.base.clone`` gives an equal agent (class, parameters, repr), twice."""
    subject = _Subject(agent_or_class)
    fresh, name = subject.build(), subject.name

    def clone_twice() -> tuple[Agent, Agent]:
        first = clone(fresh)
        return first, clone(first)

    for copy in _run(name, "clone", clone_twice):
        if type(copy) is not subject.cls or not _same(
            copy.get_params(deep=False), fresh.get_params(deep=False)
        ):
            raise _fail(name, "clone", f"clone gives {copy!r}, not {fresh!r}")
        if repr(copy) != repr(fresh):
            raise _fail(name, "clone", f"clone's repr {copy!r} differs from {fresh!r}")


def _make_env(env_id: str, env_kwargs: Mapping[str, Any] | None, steps: int) -> gym.Env:
    # the id table only (agents stay below osfb_gym's envs); only episodes need it
    from envs_registry import register_all

    register_all()
    return gym.make(env_id, max_episode_steps=steps, **dict(env_kwargs or {}))


def check_episode(
    agent_or_class: Agent | type[Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    steps: int = CHECK_STEPS,
) -> None:
    """Check that a seeded episode on ``env_id`` runs, every action in the action space.

    It changes no hyperparameter, and a clone taken after it keeps no learned state.
    """
    subject = _Subject(agent_or_class)
    fresh, name, check = subject.build(), subject.name, f"episode on {env_id}"
    agent = clone(fresh)
    before = agent.get_params(deep=False)
    env = _make_env(env_id, env_kwargs, steps)
    try:
        actions, _ = _run(name, check, lambda: _episode(agent, env, seed=1))
    finally:
        env.close()
    if not actions:
        raise _fail(name, check, "the episode had no step")
    if not _same(agent.get_params(deep=False), before):
        raise _fail(
            name,
            check,
            "the episode changed hyperparameters; keep what is learned in attributes ending in _",
        )
    learned = sorted(key for key in vars(clone(agent)) if key.endswith("_"))
    if learned:
        raise _fail(name, "clone", f"a clone after an episode keeps learned {learned}")


def check_reproducible(
    agent_or_class: Agent | type[Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    steps: int = CHECK_STEPS,
) -> None:
    """Check that two runs on ``env_id`` with the same seed give the same actions."""
    subject = _Subject(agent_or_class)
    fresh, name = subject.build(), subject.name
    env = _make_env(env_id, env_kwargs, steps)
    try:
        # (the first run is the episode check's: a failure in it is that check's)
        actions, _ = _run(name, f"episode on {env_id}", lambda: _episode(clone(fresh), env, seed=1))
        check = f"reproducible on {env_id}"
        again, _ = _run(name, check, lambda: _episode(clone(fresh), env, seed=1))
    finally:
        env.close()
    if len(again) != len(actions) or not all(
        _same(a, b) for a, b in zip(actions, again, strict=False)
    ):
        raise _fail(
            name,
            check,
            "two runs with seed 1 acted differently; draw randomness only from the "
            "generator reset(seed=...) makes (self.rng_)",
        )


def check_pickle(
    agent_or_class: Agent | type[Agent],
    env_id: str,
    env_kwargs: Mapping[str, Any] | None = None,
    steps: int = CHECK_STEPS,
) -> None:
    """Check that a pickled copy taken mid-episode on ``env_id`` acts as the original."""
    subject = _Subject(agent_or_class)
    fresh, name = subject.build(), subject.name
    env = _make_env(env_id, env_kwargs, steps)
    try:
        _run(name, f"pickle on {env_id}", lambda: _check_pickle(clone(fresh), env, steps))
    finally:
        env.close()


_AGENT_FUNCTIONS: dict[str, Callable[[Any], None]] = {
    "hyperparameters": check_hyperparameters,
    "init stores only": check_init_stores_only,
    "constraints table": check_constraints_table,
    "set_params": check_set_params,
    "clone": check_clone,
}
_ENV_FUNCTIONS: dict[str, Callable[..., None]] = {
    "episode": check_episode,
    "reproducible": check_reproducible,
    "pickle": check_pickle,
}


#: The checks of the Agent contract, in the order :func:`check_agent` runs them:
#: (name, what passing means, whether ``require_constraints=False`` skips it).
#: The grader (:mod:`osfb_gym.grade.gradescope`) reports from this list.
AGENT_CHECKS: tuple[tuple[str, str, bool], ...] = (
    (
        "hyperparameters",
        "the class is built with no arguments: every hyperparameter has a default",
        False,
    ),
    (
        "init stores only",
        "__init__ stores each hyperparameter under its own name, nothing else",
        False,
    ),
    (
        "constraints table",
        "_parameter_constraints names every hyperparameter and nothing else; the values pass it",
        True,
    ),
    ("set_params", "set_params refuses an unknown hyperparameter", False),
    ("clone", "sklearn.base.clone gives an equal agent, twice over", False),
)
#: The checks run once per env id, named ``<name> on <env id>``: (name, what passing means).
ENV_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "episode",
        "a seeded episode runs, every action in the action space; it changes no "
        "hyperparameter and a clone after it keeps no learned state",
    ),
    ("reproducible", "two runs with the same seed give the same actions"),
    ("pickle", "a copy pickled mid-episode acts as the original"),
)


class NamedCheck:
    """One check of the Agent contract, callable on an agent (class or instance).

    ``name`` is the check's name as :class:`AgentContractError` reports it
    (``"clone"``, ``"episode on OneSidedLending-v0"``, ...); calling it
    returns None or raises :class:`AgentContractError`.
    """

    def __init__(self, name: str, function: Callable[..., None], **bound: Any) -> None:
        self.name, self._function, self._bound = name, function, bound

    def __call__(self, agent_or_class: Agent | type[Agent]) -> None:
        self._function(agent_or_class, **self._bound)

    def __repr__(self) -> str:
        return f"NamedCheck({self.name!r})"


def yield_checks(
    agent_or_class: Agent | type[Agent],
    *,
    env_ids: Sequence[str] | None = None,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int = CHECK_STEPS,
    require_constraints: bool = True,
) -> Iterator[NamedCheck]:
    """Yield the named checks of the Agent contract for an agent, in order.

    scikit-learn's ``_yield_all_checks`` and River's ``yield_checks``: each
    check is one rule and runs on its own (it builds the agent afresh), so a
    test can give each one its own id (:func:`parametrize_with_checks`) and
    the grader can report them one by one. :func:`check_agent` runs them
    all. The parameters are :func:`check_agent`'s.

    Examples
    --------
    >>> from agents.lending import Greedy
    >>> [check.name for check in yield_checks(Greedy, env_ids=())]
    ['hyperparameters', 'init stores only', 'constraints table', 'set_params', 'clone']
    """
    subject = _Subject(agent_or_class)
    name, cls = subject.name, subject.cls
    for check, _, optional in AGENT_CHECKS:
        if require_constraints or not optional:
            yield NamedCheck(check, _AGENT_FUNCTIONS[check])
    # (after the agent's own checks, as check_agent always reported them first)
    if env_ids is None:
        if not cls.env_ids:
            raise _fail(name, "env_ids", "declares no env_ids (the envs it is made for)")
        env_ids = cls.env_ids
    elif isinstance(env_ids, str) or not set(env_ids) <= set(cls.env_ids):
        raise ValueError(f"env_ids must be a list of ids among {name}.env_ids, got {env_ids!r}")
    kwargs_by_id = dict(env_kwargs or {})
    for env_id in env_ids:
        for check, _ in ENV_CHECKS:
            yield NamedCheck(
                f"{check} on {env_id}",
                _ENV_FUNCTIONS[check],
                env_id=env_id,
                env_kwargs=kwargs_by_id.get(env_id, {}),
                steps=steps,
            )


def parametrize_with_checks(
    agents: Sequence[Agent | type[Agent]],
    *,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int = CHECK_STEPS,
    require_constraints: bool = True,
) -> Any:
    """Return a ``pytest.mark.parametrize`` over (agent, check): one test id per pair.

    scikit-learn's ``parametrize_with_checks``: the test takes ``agent``
    and ``check`` and calls ``check(agent)``; ids read ``<Agent>-<check>``.
    Needs pytest (imported here only).

    Examples
    --------
    >>> from agents.lending import Greedy
    >>> @parametrize_with_checks([Greedy])  # doctest: +SKIP
    ... def test_contract(agent, check):
    ...     check(agent)
    """
    import pytest

    def label(agent: Any, check: NamedCheck) -> str:
        owner = agent.__name__ if isinstance(agent, type) else repr(agent)
        return f"{owner}-{check.name}"

    return pytest.mark.parametrize(
        ("agent", "check"),
        [
            pytest.param(agent, check, id=label(agent, check))
            for agent in agents
            for check in yield_checks(
                agent, env_kwargs=env_kwargs, steps=steps, require_constraints=require_constraints
            )
        ],
    )


def check_agent(
    agent_or_class: Agent | type[Agent],
    *,
    env_ids: Sequence[str] | None = None,
    env_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int = CHECK_STEPS,
    require_constraints: bool = True,
) -> Agent:
    """Check an agent (class or instance) against the Agent contract; raise on the first failure.

    River's ``check_estimator`` idea: one function runs every check (the
    named checks of :func:`yield_checks`, listed in :data:`AGENT_CHECKS` and
    :data:`ENV_CHECKS`), so the project's tests, the grader and a student's
    own tests check the same contract. For a class, the checks build it with its defaults; for an
    instance (e.g. a wrapper around a trained model), with its
    hyperparameters. In order:

    1. ``hyperparameters``: ``__init__`` lists them as explicit keywords;
       the class can be built from them (a class: with no arguments);
    2. ``init stores only``: ``__init__`` stores each hyperparameter
       unchanged under its own name (a class: the default itself) and sets
       nothing else;
    3. ``constraints table``: ``_parameter_constraints`` names every
       hyperparameter and nothing else, and the values pass it
       (skipped with ``require_constraints=False``);
    4. ``set_params``: an unknown name is refused with a ``ValueError``;
    5. ``clone``: ``sklearn.base.clone`` gives the same class and equal
       parameters, twice over (idempotent), and the same repr;
    6. ``episode on <id>``: for every id of ``env_ids``, a seeded episode
       of at most ``steps`` steps runs and every action is in the action
       space; the episode changes no hyperparameter, and a
       clone taken after it has no learned state;
    7. ``reproducible on <id>``: a second run with the same seed gives the
       same actions;
    8. ``pickle on <id>``: a pickled copy taken mid-episode acts as the
       original.

    Parameters
    ----------
    agent_or_class
        An :class:`Agent` subclass or instance.
    env_ids
        The envs to run episodes on (each among the class's ``env_ids``);
        None: every id of the class's ``env_ids`` (there must be one); empty:
        no episode, checks 1-5 only (what the grader checks before running
        its own episodes in a sandbox).
    env_kwargs
        Keyword arguments of ``gym.make`` per env id (e.g. small sizes);
        ids not named get the registered defaults.
    steps
        Most steps of each checking episode.
    require_constraints
        Whether the ``constraints table`` check runs (the project's agents:
        yes; a student's agent may leave the table out).

    Returns
    -------
    Agent
        The checked agent, built from the class's defaults (or the
        instance's hyperparameters), never run.

    Raises
    ------
    AgentContractError
        An ``AssertionError`` naming the agent and the failed check.

    Examples
    --------
    >>> from agents.lending import Greedy
    >>> check_agent(Greedy, env_kwargs={"OneSidedLending-v0": {"horizon": 20}})
    Greedy()
    >>> class Forgetful(Greedy):
    ...     def __init__(self, l2: float = 1.0, solver: str = "incremental"):
    ...         self.l2 = l2
    >>> check_agent(Forgetful)
    Traceback (most recent call last):
    ...
    agents.base.AgentContractError: check_agent(Forgetful): init stores only: __init__ does not \
store solver under its own name (write `self.solver = solver`)
    """
    subject = _Subject(agent_or_class)
    for check in yield_checks(
        agent_or_class,
        env_ids=env_ids,
        env_kwargs=env_kwargs,
        steps=steps,
        require_constraints=require_constraints,
    ):
        check(agent_or_class)
    return subject.build()


def _run(name: str, check: str, body: Callable[[], Any]) -> Any:
    try:
        return body()
    except AgentContractError:
        raise
    except Exception as error:  # noqa: BLE001  (any failure is the check's diagnosis)
        raise _fail(name, check, f"{type(error).__name__}: {error}") from error


def _check_pickle(agent: Agent, env: gym.Env, steps: int) -> None:
    """Pickle ``agent`` mid-episode; the copy must act as the original on the next observation."""
    _, observation = _episode(agent, env, seed=2, steps=max(1, min(5, steps - 1)))
    copy = pickle.loads(pickle.dumps(agent))
    if not _same(agent.act(observation), copy.act(observation)):
        raise AssertionError("a pickled copy acts differently from the original")
