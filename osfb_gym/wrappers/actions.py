"""Action wrappers that adapt osfb-gym action spaces to generic RL algorithms.

- :class:`DiscreteActions`: a ``Discrete`` view of a small ``MultiDiscrete``
  or ``MultiBinary(1)`` action space, for algorithms that only take
  ``Discrete`` actions (DQN): RejectOption's ``(decision, query)`` pairs
  become 6 actions, one lending applicant's approve/deny becomes 2.
- :class:`BinaryAsMultiDiscrete`: ``MultiBinary(n)`` as
  ``MultiDiscrete([2] * n)``, the same decisions in integer form
  (sb3-contrib 2.9's RecurrentPPO fails on ``MultiBinary``'s ``int8``
  actions in its padded rollout buffer).

The wrapped env keeps the honest-feedback contract: nothing is added to
what the agent sees.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: the most joint actions DiscreteActions enumerates
MAX_DISCRETE_ACTIONS = 64


class DiscreteActions(gym.ActionWrapper):
    """Expose a ``MultiDiscrete`` or ``MultiBinary(1)`` action space as ``Discrete(n)``.

    Action ``k`` is the ``k``-th joint action in row-major order
    (:func:`numpy.unravel_index` over ``nvec``); for ``MultiBinary(1)``,
    ``k`` is the bit itself. A ``MultiBinary(n)`` space with ``n > 1`` is
    refused: its ``2**n`` joint actions (every subset of a batch of
    applicants) are not a sensible output layer; make the env with
    ``batch_size=1`` (one applicant a step) instead.

    Examples
    --------
    >>> import osfb_gym
    >>> env = DiscreteActions(gym.make("RejectOption-v0", horizon=5))
    >>> env.action_space, env.action(5).tolist(), env.action(1).tolist()
    (Discrete(6), [2, 1], [0, 1])
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if isinstance(space, spaces.MultiBinary):
            n = int(np.prod(space.shape))
            if n != 1:
                raise ValueError(
                    f"DiscreteActions cannot enumerate MultiBinary({n}): {2**n} joint actions "
                    "(every subset of the batch); make the env with batch_size=1 for a "
                    "Discrete(2) decision per applicant, or use an algorithm that takes "
                    "MultiBinary actions (PPO, A2C)"
                )
            self._nvec = np.array([2])
            self._binary = True
        elif isinstance(space, spaces.MultiDiscrete):
            self._nvec = np.asarray(space.nvec).ravel()
            self._binary = False
            if int(np.prod(self._nvec)) > MAX_DISCRETE_ACTIONS:
                raise ValueError(
                    f"DiscreteActions enumerates at most {MAX_DISCRETE_ACTIONS} joint actions, "
                    f"{space} has {int(np.prod(self._nvec))}"
                )
        else:
            raise TypeError(
                "DiscreteActions adapts MultiDiscrete and MultiBinary(1) action spaces, "
                f"got {space}"
            )
        self._shape = space.shape
        self._dtype = space.dtype
        self._n = int(np.prod(self._nvec))
        self.action_space = spaces.Discrete(self._n)

    def action(self, action: Any) -> np.ndarray:
        """Return the wrapped env's action for the discrete index ``action``."""
        index = int(np.asarray(action))
        if not 0 <= index < self._n:
            raise ValueError(f"action must be in [0, {self._n}), got {action!r}")
        joint = np.array(np.unravel_index(index, tuple(self._nvec)))
        return joint.reshape(self._shape).astype(self._dtype)


class BinaryAsMultiDiscrete(gym.ActionWrapper):
    """Expose ``MultiBinary(n)`` as ``MultiDiscrete([2] * n)`` (the same 0/1 decisions).

    Examples
    --------
    >>> import osfb_gym
    >>> env = BinaryAsMultiDiscrete(gym.make("OneSidedLending-v0", batch_size=3))
    >>> env.action_space, env.action(np.array([1, 0, 1])).dtype
    (MultiDiscrete([2 2 2]), dtype('int8'))
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if not isinstance(space, spaces.MultiBinary):
            raise TypeError(f"BinaryAsMultiDiscrete adapts MultiBinary action spaces, got {space}")
        self._shape = space.shape
        self.action_space = spaces.MultiDiscrete(np.full(space.shape, 2))

    def action(self, action: Any) -> np.ndarray:
        """Return the 0/1 decisions as the wrapped env's ``int8`` array."""
        return np.asarray(action).reshape(self._shape).astype(np.int8)
