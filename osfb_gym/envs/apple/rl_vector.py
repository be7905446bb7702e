"""A native vector env of ``AppleTasting-RL-v0``: ``K`` synthetic streams stepped as arrays.

``gym.make_vec("AppleTasting-RL-v0", num_envs=K)`` builds
:class:`AppleRLVectorEnv` (through
:func:`osfb_gym.wrappers.vector.make_rl_vector_env`). Sub-env ``i`` is the
single RL id (plain view, oracle hidden) reset with its seed: the same
observations, rewards, terminations, truncations and feedback as
:class:`~gymnasium.vector.SyncVectorEnv` over ``gym.make("AppleTasting-RL-v0")``
under the same seeds and actions, autoresets included (tested). A synthetic
stream is drawn in chunks of examples by each sub-env's own world and
generator (the single env's code); a step reads every sub-env's example and
scores every decision with a few array operations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.envs import _native_vector as _native
from osfb_gym.envs._native_vector import ChunkedStreamRLVectorEnv
from osfb_gym.envs.apple.env import AppleTastingEnv
from osfb_gym.envs.apple.metrics import FALSE_NEGATIVE, FALSE_POSITIVE
from osfb_gym.envs.apple.world import CHUNK

#: the keywords the native step does not cover, each with the value it covers
SINGLE_ONLY: dict[str, Any] = {"dataset": None, "order": "random", "render_mode": None}


def native_supported(kwargs: dict[str, Any]) -> str | None:
    """Return why ``kwargs`` of ``AppleTasting-v0`` need the sync env, or None if native.

    The native step reads a synthetic stream in random order; a dataset, the
    adversarial order (the whole episode sorted at reset) and renders are
    the single env's.
    """
    return _native.native_supported(kwargs, SINGLE_ONLY)


class AppleRLVectorEnv(ChunkedStreamRLVectorEnv):
    """``num_envs`` synthetic ``AppleTasting-RL-v0`` episodes stepped as arrays.

    It takes :class:`~osfb_gym.envs._native_vector.NativeRLVectorEnv`'s parameters;
    below, what is this env's own.

    Parameters
    ----------
    **kwargs
        Keywords of ``AppleTasting-v0`` for a synthetic world in random
        order (``dataset``, ``order="adversarial"`` and ``render_mode`` are the
        single env's only: ``gym.make_vec`` gives a sync env for them).

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("AppleTasting-RL-v0", num_envs=3, dim=4, horizon=5)
    >>> type(envs).__name__, envs.metadata["autoreset_mode"].value
    ('AppleRLVectorEnv', 'NextStep')
    >>> obs, info = envs.reset(seed=0)
    >>> obs.shape, obs.dtype
    ((3, 4), dtype('float32'))
    >>> obs, reward, terminated, truncated, info = envs.step(np.array([1, 0, 1]))
    >>> info["feedback"]["revealed"].tolist()
    [True, False, True]
    """

    env_class = AppleTastingEnv
    rl_id = "AppleTasting-RL-v0"
    single_only = SINGLE_ONLY
    records_episodes = True
    reference_attr = "_bayes"

    def _setup(self, first: Any) -> None:
        """Read the single env's parameters; make the plain spaces and the arrays."""
        self.dim, self.horizon = first.dim, first.horizon
        self.gain, self.cost_fp = first.gain, first.cost_fp
        self._one_sided = first.feedback_mode == "one_sided"
        # the plain view of the RL id: the features, float32 (the env's own Box)
        self.single_observation_space = spaces.Box(
            first.observation_space.low,
            first.observation_space.high,
            shape=(self.dim,),
            dtype=np.float32,
        )
        self.single_action_space = spaces.Discrete(2)
        self._init_stream(self.dim, CHUNK)

    def _reference(self, i: int, extra: Any) -> np.ndarray:
        """Return the Bayes decision's expected loss on the drawn chunk (``extra``: its scores)."""
        return self.envs[i]._world.bayes_loss(extra, self.gain, self.cost_fp)

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Return ``(K,)`` integer or boolean 0/1 actions (``Discrete(2)``), or raise."""
        array = np.asarray(actions)
        if array.shape != (self.num_envs,) or array.dtype.kind not in "biu":
            raise TypeError(
                f"actions must be {self.num_envs} integers 0 or 1 (Discrete(2) each), got "
                f"shape {array.shape} and dtype {array.dtype}"
            )
        if array.dtype.kind != "b" and ((array < 0) | (array > 1)).any():
            raise ValueError(f"actions must be 0 or 1, got {array.tolist()}")
        return array

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score every decision as the single env's ``outcome``: gain, -cost_fp or 0.0."""
        taste = actions == 1
        positive = self._label == 1
        reward = np.where(taste, np.where(positive, self.gain, -self.cost_fp), 0.0)
        revealed = taste if self._one_sided else np.ones(self.num_envs, dtype=bool)
        feedback = {"revealed": revealed, "y": np.where(revealed, self._label, 0)}
        return reward, feedback

    def _oracle(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Return the single env's oracle of every decision: y, mistake, loss, Bayes loss."""
        taste, positive = actions == 1, self._label == 1
        mistake = np.where(
            taste & ~positive, FALSE_POSITIVE, np.where(~taste & positive, FALSE_NEGATIVE, 0)
        )
        loss = np.where(mistake == FALSE_POSITIVE, self.cost_fp, 0.0)
        loss = np.where(mistake == FALSE_NEGATIVE, self.gain, loss)
        bayes = self._current_reference()
        return {"y": self._label, "mistake": mistake, "loss": loss, "bayes_loss": bayes}

    def _feedback_row(self, value: np.ndarray, i: int) -> Any:
        """Sub-env ``i``'s entry as a Python ``bool`` or ``int``, as the single env gives it."""
        return value[i].item()
