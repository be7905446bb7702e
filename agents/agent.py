"""The :class:`Agent` base class on scikit-learn's ``BaseEstimator``, and :func:`all_agents`.

Re-exported by :mod:`agents.base`, the contract's public module.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError

from agents.validation import SpaceCheck, check_finite_numbers, check_seed

__all__ = ["Agent", "NotResetError", "all_agents"]


class NotResetError(NotFittedError):
    """An agent was asked to act or learn before :meth:`Agent.reset` started an episode."""


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
    >>> from agents.base import Integral, Interval
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
