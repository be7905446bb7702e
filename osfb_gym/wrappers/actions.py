"""Action wrappers that adapt osfb-gym action spaces to generic RL algorithms.

- :class:`DiscreteActions`: a ``Discrete`` view of a small ``MultiDiscrete``
  or ``MultiBinary`` action space, for algorithms that only take
  ``Discrete`` actions (DQN, CleanRL's ``ppo.py`` and ``dqn.py``):
  RejectOption's ``(decision, query)`` pairs become 6 actions, a lending
  batch of ``N`` applicants ``2**N`` (2 for the default one applicant a
  step). The RL ids ``<Family>-RL-...-Discrete-v0`` are these.
- :class:`BinaryAsMultiDiscrete`: ``MultiBinary(n)`` as
  ``MultiDiscrete([2] * n)``, the same decisions in integer form
  (sb3-contrib 2.9's RecurrentPPO fails on ``MultiBinary``'s ``int8``
  actions in its padded rollout buffer).

The wrapped env keeps the honest-feedback contract: nothing is added to
what the agent sees, and the wrappers hold no state but the code table.
"""

from __future__ import annotations

import operator
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: the most joint actions DiscreteActions enumerates (a lending batch of 6 applicants)
MAX_DISCRETE_ACTIONS = 64


class DiscreteActions(gym.ActionWrapper):
    """Expose a ``MultiDiscrete`` or ``MultiBinary`` action space as ``Discrete(n)``.

    Action ``k`` is the ``k``-th joint action in row-major order
    (:func:`numpy.unravel_index` over ``nvec``, the first entry the most
    significant): RejectOption's ``k`` is ``(k // 2, k % 2)``, i.e.
    ``(decision, query)``; for a ``MultiBinary(N)`` lending batch ``k``
    written in ``N`` bits, the first applicant's decision the highest bit
    (``MultiBinary(1)``: ``k`` is the bit itself). At most
    :data:`MAX_DISCRETE_ACTIONS` joint actions: a lending batch of up to 6
    applicants; a larger batch is refused (its ``2**N`` subsets are not a
    sensible output layer: use ``batch_size=1``, the RL ids' default, or an
    algorithm that takes ``MultiBinary`` actions).

    The joint actions are tabled once; a step looks its action up (a copy,
    so an env may keep what it is given).

    Examples
    --------
    >>> import osfb_gym
    >>> env = DiscreteActions(gym.make("RejectOption-v0", horizon=5))
    >>> env.action_space, env.action(5).tolist(), env.action(1).tolist()
    (Discrete(6), [2, 1], [0, 1])
    >>> env = DiscreteActions(gym.make("OneSidedLending-v0", batch_size=3, horizon=5))
    >>> env.action_space, env.action(6).tolist()   # 6 = 0b110: approve the first two
    (Discrete(8), [1, 1, 0])
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.action_space
        if isinstance(space, spaces.MultiBinary):
            size = int(np.prod(space.shape))
            nvec = np.full(size, 2)
        elif isinstance(space, spaces.MultiDiscrete):
            nvec = np.asarray(space.nvec).ravel()
        else:
            raise TypeError(
                f"DiscreteActions adapts MultiDiscrete and MultiBinary action spaces, got {space}"
            )
        n = int(np.prod(nvec))
        if n > MAX_DISCRETE_ACTIONS:
            advice = (
                "; make the env with a batch_size of at most 6 (batch_size=1: a Discrete(2) "
                "decision per applicant), or use an algorithm that takes MultiBinary actions "
                "(PPO, A2C)"
                if isinstance(space, spaces.MultiBinary)
                else ""
            )
            raise ValueError(
                f"DiscreteActions enumerates at most {MAX_DISCRETE_ACTIONS} joint actions, "
                f"{space} has {n}{advice}"
            )
        self._nvec = nvec
        self._shape = space.shape
        self._dtype = space.dtype
        self._n = n
        joints = np.array(np.unravel_index(np.arange(n), tuple(int(v) for v in nvec))).T
        #: joint action k of the wrapped env, in its shape and dtype
        self._table = joints.reshape((n, *space.shape)).astype(space.dtype)
        self._table.flags.writeable = False
        self.action_space = spaces.Discrete(n)

    def action(self, action: Any) -> np.ndarray:
        """Return the wrapped env's action for the discrete index ``action``."""
        try:
            index = operator.index(action)  # Python and numpy integers, 0-d integer arrays
        except TypeError:
            value = np.asarray(action) if not isinstance(action, str) else None
            if value is None or value.size != 1 or value.dtype.kind not in "iu":
                raise ValueError(
                    f"action must be an integer in [0, {self._n}) (an index of "
                    f"{self.action_space}), got {action!r:.80}"
                ) from None
            index = int(value.reshape(()))
        if not 0 <= index < self._n:
            raise ValueError(f"action must be in [0, {self._n}), got {action!r}")
        return self._table[index].copy()

    def code(self, joint: Any) -> int:
        """Return the discrete index of the wrapped env's action ``joint`` (``action``'s inverse).

        Examples
        --------
        >>> import osfb_gym
        >>> env = DiscreteActions(gym.make("RejectOption-v0", horizon=5))
        >>> env.code([2, 1]), env.code(env.action(3))
        (5, 3)
        """
        values = np.asarray(joint).ravel()
        if values.shape != self._nvec.shape or np.any(values < 0) or np.any(values >= self._nvec):
            raise ValueError(f"joint must be an action of {self.env.action_space}, got {joint!r}")
        return int(np.ravel_multi_index(tuple(int(v) for v in values), tuple(self._nvec)))


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
