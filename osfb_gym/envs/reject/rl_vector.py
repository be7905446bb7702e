"""A native vector env of ``RejectOption-RL-v0``: ``K`` synthetic streams stepped as arrays.

``gym.make_vec("RejectOption-RL-v0", num_envs=K)`` builds
:class:`RejectRLVectorEnv` (through
:func:`osfb_gym.wrappers.vector.make_rl_vector_env`), and so do the
``-Discrete`` twin and the views (``-RL-Features-``, ``-RL-Feedback-``).
Sub-env ``i`` is the single RL id reset with its seed: the same
observations, rewards, terminations, truncations and feedback as
:class:`~gymnasium.vector.SyncVectorEnv` over ``gym.make(id)`` under the same
seeds and actions, autoresets included (tested, bit for bit). Each sub-env's
stream is drawn in chunks of examples by its own world and generator (the
single env's code); a step scores every decision, asks for labels, holds
back the hidden losses and settles them at the episode's end with a few
array operations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.envs import _native_vector as _native
from osfb_gym.envs._native_vector import ChunkedStreamRLVectorEnv
from osfb_gym.envs.reject.env import RejectOptionEnv
from osfb_gym.envs.reject.metrics import REJECT
from osfb_gym.envs.reject.world import CHUNK, chow_risk

#: the keywords the native step does not cover, each with the value it covers
SINGLE_ONLY: dict[str, Any] = {"dataset": None, "render_mode": None}


def native_supported(kwargs: dict[str, Any]) -> str | None:
    """Return why ``kwargs`` of ``RejectOption-v0`` need the sync env, or None if native.

    The native step reads a synthetic stream; a dataset's rows and renders
    are the single env's.
    """
    return _native.native_supported(kwargs, SINGLE_ONLY)


class RejectRLVectorEnv(ChunkedStreamRLVectorEnv):
    """``num_envs`` synthetic ``RejectOption-RL-v0`` episodes stepped as arrays.

    It takes :class:`~osfb_gym.envs._native_vector.NativeRLVectorEnv`'s parameters;
    below, what is this env's own.

    Parameters
    ----------
    **kwargs
        Keywords of ``RejectOption-v0`` for a synthetic world (``dataset`` and
        ``render_mode`` are the single env's only: ``gym.make_vec`` gives a
        sync env for them).

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("RejectOption-RL-Discrete-v0", num_envs=3, dim=4, horizon=2)
    >>> type(envs).__name__, envs.single_action_space
    ('RejectRLVectorEnv', Discrete(6))
    >>> obs, info = envs.reset(seed=0)
    >>> obs.shape
    (3, 4)
    >>> _ = envs.step(np.array([2, 3, 5]))  # predict -1 and skip, reject and ask, +1 and ask
    >>> _, reward, _, truncated, info = envs.step(np.array([2, 2, 2]))  # reject, skip
    >>> truncated.tolist(), info["feedback"]["settled"].tolist()  # 0.25 per hidden rejection
    ([True, True, True], [0.5, 0.25, 0.25])
    """

    env_class = RejectOptionEnv
    rl_id = "RejectOption-RL-v0"
    single_only = SINGLE_ONLY
    records_episodes = True
    reference_attr = "_chow"

    def _setup(self, first: Any) -> None:
        """Read the single env's parameters; make the plain spaces and the arrays."""
        self.dim, self.horizon = first.dim, first.horizon
        self.d, self.query_cost = first.d, first.query_cost
        self._settle = first.settle == "episode_end"
        self._full = first.feedback_mode == "full"
        space = first.observation_space
        self.single_observation_space = spaces.Box(
            space.low, space.high, shape=(self.dim,), dtype=np.float32
        )
        self.single_action_space = spaces.MultiDiscrete([3, 2])
        self._init_stream(self.dim, CHUNK)
        self._hidden = np.zeros(self.num_envs)  # each sub-env's losses held back

    def _reset_one(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` (its stream loaded) with no loss held back."""
        self._hidden[i] = 0.0
        return super()._reset_one(i, seed, options)

    def _reference(self, i: int, extra: Any) -> np.ndarray:
        """Return Chow's risk of the drawn chunk's examples, from their posterior (``extra``)."""
        return chow_risk(extra, self.d)

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Return ``(K, 2)`` integer ``(decision, query)`` rows (``MultiDiscrete([3, 2])``)."""
        array = np.asarray(actions)
        if array.shape != (self.num_envs, 2) or array.dtype.kind not in "biu":
            raise TypeError(
                f"actions must be {self.num_envs} integer pairs (decision, query) "
                f"(MultiDiscrete([3, 2]) each), got shape {array.shape} and dtype {array.dtype}"
            )
        if array.dtype.kind != "b" and (
            (array < 0).any() or (array[:, 0] > 2).any() or (array[:, 1] > 1).any()
        ):
            raise ValueError(
                f"actions must be (decision 0-2, query 0-1) pairs, got {array.tolist()}"
            )
        return array.astype(np.int64)

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score every decision as the single env's ``step``: ``L_d``, the query, the settling.

        The single env's arithmetic, elementwise: ``loss = L_d + query_cost
        * query``, ``-loss`` if revealed else 0 (the loss held back), and at
        the episode's last step the held-back sum subtracted (``settle=
        "episode_end"``). The sums run in each env's own order, so equal bit
        for bit.
        """
        decision, query = actions[:, 0], actions[:, 1]
        y = self._label
        wrong = np.where(decision - 1 == y, 0.0, 1.0)  # predict -1 (0) or +1 (2)
        risk = np.where(decision == REJECT, self.d, wrong)
        loss = risk + self.query_cost * query
        revealed = (query == 1) | self._full
        reward = np.where(revealed, -loss, 0.0)
        self._hidden += np.where(revealed, 0.0, loss)
        ends = self._t + 1 >= self.horizon
        settled = np.where(ends, self._hidden, 0.0) if self._settle else np.zeros(self.num_envs)
        reward = reward - settled
        feedback = {"revealed": revealed, "y": np.where(revealed, y, 0), "settled": settled}
        return reward, feedback

    def _oracle(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Return the single env's oracle of every decision: ``L_d``, the loss, Chow's risk."""
        decision, query = actions[:, 0], actions[:, 1]
        y = self._label
        risk = np.where(decision == REJECT, self.d, np.where(decision - 1 == y, 0.0, 1.0))
        return {
            "y": y,
            "loss": risk + self.query_cost * query,
            "risk": risk,
            "misclassified": risk == 1.0,
            "rejected": decision == REJECT,
            "bayes_risk": self._current_reference(),
        }

    def _feedback_row(self, value: np.ndarray, i: int) -> Any:
        """Sub-env ``i``'s entry as a Python ``bool``, ``int`` or ``float``, as the single env's."""
        return value[i].item()
