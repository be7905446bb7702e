"""The Agent contract (DESIGN section 5), with scikit-learn-style parameters.

An agent stores its hyperparameters in ``__init__`` and nothing else;
learned state (trailing underscore) is created in :meth:`Agent.reset`. A
signature-based :meth:`Agent.get_params` lets the benchmark sweep
hyperparameters by name and build a fresh agent per seed with
:meth:`Agent.clone`.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np


class Agent:
    """Base class of every decision maker.

    Subclasses declare hyperparameters as keyword arguments of ``__init__``,
    store each unchanged under its own name, and implement :meth:`act`
    (and :meth:`update` if they learn). ``env_ids`` lists the environments
    the agent is made for. A shared base class that is not meant to be
    used itself sets ``abstract = True`` in its own body, so the generic
    test suite skips it.

    Examples
    --------
    >>> class Always(Agent):
    ...     env_ids = ("OneSidedLending-v0",)
    ...     def __init__(self, value: int = 1):
    ...         self.value = value
    ...     def act(self, observation):
    ...         return np.full(len(observation), self.value, dtype=np.int8)
    >>> Always(value=0)
    Always(value=0)
    >>> Always().get_params()
    {'value': 1}
    """

    env_ids: ClassVar[tuple[str, ...]] = ()
    abstract: ClassVar[bool] = True  # concrete agents leave this out of their class body

    # ------------------------------------------------------------------ contract
    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Start an episode: forget what was learned, seed the generator.

        ``feedback`` is the reset's ``info["feedback"]`` (a warm-start
        sample, the task's public terms). Subclasses call ``super().reset``
        first and then build their state from ``feedback``.
        """
        self.observation_space_ = observation_space
        self.action_space_ = action_space
        self.rng_ = np.random.default_rng(seed)

    def act(self, observation: Any) -> Any:
        """Return an action in ``action_space`` for ``observation``."""
        raise NotImplementedError(f"{type(self).__name__} must implement act()")

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Learn from what the step revealed (never the oracle). Default: nothing."""

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _param_names(cls) -> list[str]:
        if cls.__init__ is object.__init__:  # no __init__ anywhere: no hyperparameters
            return []
        signature = inspect.signature(cls.__init__)
        names = []
        for name, parameter in signature.parameters.items():
            if name == "self":
                continue
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(
                    f"{cls.__name__}.__init__ must list its hyperparameters explicitly, not *{name}"
                )
            names.append(name)
        return names

    def get_params(self) -> dict[str, Any]:
        """Return the hyperparameters, by name, as given to ``__init__``."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Agent:
        """Set hyperparameters by name; unknown names raise a ``ValueError``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"{type(self).__name__} has no hyperparameter {name!r}; "
                    f"valid: {', '.join(valid) or 'none'}"
                )
            setattr(self, name, value)
        return self

    def clone(self, **overrides: Any) -> Agent:
        """Return a fresh, unfitted agent with the same (or overridden) hyperparameters.

        A hyperparameter that is itself an agent (a wrapped base learner) is
        cloned too, so the copy shares no learned state with the original.
        """
        params = {
            name: value.clone() if isinstance(value, Agent) else copy.deepcopy(value)
            for name, value in self.get_params().items()
        }
        params.update(overrides)
        return type(self)(**params)

    def __repr__(self) -> str:
        params = ", ".join(f"{name}={value!r}" for name, value in self.get_params().items())
        return f"{type(self).__name__}({params})"
