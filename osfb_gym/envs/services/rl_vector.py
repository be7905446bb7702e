"""A native vector env of ``MultiServiceChoice-RL-v0``: ``K`` worlds behind one vector step.

``gym.make_vec("MultiServiceChoice-RL-v0", num_envs=K)`` builds
:class:`ServicesRLVectorEnv` (through
:func:`osfb_gym.wrappers.vector.make_rl_vector_env`), and so do the views.
Sub-env ``i`` is the single RL id reset with its seed: the same
observations, rewards, terminations and feedback as
:class:`~gymnasium.vector.SyncVectorEnv` over ``gym.make(id)`` under the same
seeds and actions, autoresets included (tested, bit for bit).

What is batched and what is not: a world's step is its own compiled kernel
(the service placed at a user's preference, every user's loss there and
best service; worlds differ in their users and loss geometry), so each
sub-env's world steps by its single env, one sub-env at a time (with the
plain view, ``step_encoded``: the vector written in the compiled step, as
the single id's view has it). The vector step around it is batched: the feedback is
written into ``(K, n_users)`` arrays, the observations into one buffer, and
the infos are built once, not merged sub-env by sub-env as
``SyncVectorEnv`` merges them (most of its step on this family).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from osfb_gym.core.channels import strip_oracle
from osfb_gym.envs import _native_vector as _native
from osfb_gym.envs._native_vector import NativeRLVectorEnv
from osfb_gym.envs.services.env import MultiServiceChoiceEnv
from osfb_gym.envs.services.retention import MultiServiceChoiceRetentionEnv

#: the keywords the native step does not cover, each with the value it covers
SINGLE_ONLY: dict[str, Any] = {"render_mode": None}


def native_supported(kwargs: dict[str, Any]) -> str | None:
    """Return why ``kwargs`` of ``MultiServiceChoice-v0`` need the sync env, or None.

    Every world (synthetic or census) steps natively; renders are the single env's.
    """
    return _native.native_supported(kwargs, SINGLE_ONLY)


class ServicesRLVectorEnv(NativeRLVectorEnv):
    """``num_envs`` ``MultiServiceChoice-RL-v0`` episodes behind one vector step.

    It takes :class:`~osfb_gym.envs._native_vector.NativeRLVectorEnv`'s parameters;
    below, what is this env's own.

    Parameters
    ----------
    view
        Required: the plain view's vector encodes the observation ``Dict``
        (:func:`osfb_gym.wrappers.vector.make_rl_vector_env` hands it in).
    **kwargs
        Keywords of ``MultiServiceChoice-v0`` (``render_mode`` is the single
        env's only: ``gym.make_vec`` gives a sync env for it).

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("MultiServiceChoice-RL-v0", num_envs=3, n_users=8, n_services=2)
    >>> type(envs).__name__, envs.single_observation_space.shape
    ('ServicesRLVectorEnv', (25,))
    >>> obs, info = envs.reset(seed=0)
    >>> _ = envs.step(np.array([0, 1, 2]))
    >>> obs, reward, terminated, truncated, info = envs.step(np.array([3, 4, 5]))
    >>> terminated.tolist(), info["feedback"]["revealed"][:, 3:6].sum(axis=1).tolist()
    ([True, True, True], [1, 1, 1])
    """

    #: the plain view's vector is the view's (make_rl_vector_env hands the plain view in)
    needs_view = True
    #: the single env and the RL id its sub-envs are
    env_class: ClassVar[type[MultiServiceChoiceEnv]] = MultiServiceChoiceEnv
    rl_id = "MultiServiceChoice-RL-v0"
    single_only = SINGLE_ONLY
    records_episodes = True

    def _setup(self, first: Any) -> None:
        """Read the single env's parameters; make the spaces and the step's buffers."""
        if self._view_factory is None:
            raise TypeError(
                "view must be given: the plain view's vector encodes the observation Dict "
                f"(gym.make_vec({self.rl_id!r}, ...) hands it in)"
            )
        self.n_users = first.n_users
        self.horizon = getattr(first, "horizon", first.n_services)
        self.single_observation_space = first.observation_space  # (the view's replaces it)
        self.single_action_space = spaces.Discrete(self.n_users)
        k = self.num_envs
        self._raw: list[Any] = [None] * k
        # each step's feedback and other infos, (K, ...) each, made at the first step
        self._feedback: dict[str, np.ndarray] = {}
        self._others: dict[str, np.ndarray] = {}
        self._terminated = np.zeros(k, dtype=bool)
        self._truncated = np.zeros(k, dtype=bool)
        #: each sub-env's last step's oracle (with ``on_episode``: the metrics read it)
        self._oracles: list[dict[str, Any]] = [{} for _ in range(k)]
        self._obs = np.zeros((k, 0), dtype=np.float32)  # (the views' vectors are returned)

    def _finish_spaces(self) -> None:
        """Put the views on (the base's); find where each env writes the plain view's vector."""
        super()._finish_spaces()
        assert self._views is not None
        # the plain view: each env writes its vector in its compiled step (step_encoded), as
        # the single id's view has it do; a view that takes each step in is fed by the base
        plan = getattr(self._views[0], "plan", None)
        self._layouts = None if plan is None else [env.view_layout(plan) for env in self.envs]
        if self._layouts is not None and any(layout is None for layout in self._layouts):
            self._layouts = None

    def _reset_one(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` with its single env (its world drawn); keep its observation."""
        obs, info = self.envs[i].reset(seed=seed, options=options)
        self._raw[i] = obs
        self._terminated[i] = self._truncated[i] = False
        return strip_oracle(info)

    def _raw_obs(self, i: int) -> Any:
        """Sub-env ``i``'s observation ``Dict``, as its single env returned it."""
        return self._raw[i]

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Return ``(K,)`` user indices (``Discrete(n_users)`` each), or raise."""
        array = np.asarray(actions)
        if array.shape != (self.num_envs,) or array.dtype.kind not in "iu":
            raise TypeError(
                f"actions must be {self.num_envs} integers (Discrete({self.n_users}) each), "
                f"got shape {array.shape} and dtype {array.dtype}"
            )
        if ((array < 0) | (array >= self.n_users)).any():
            raise ValueError(f"actions must be users in [0, {self.n_users}), got {array.tolist()}")
        return array

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Step every sub-env that is not resetting by its single env; gather the feedback."""
        reward = np.zeros(self.num_envs)
        stepping = self._all
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            stepping = ~self._autoreset  # a sub-env that resets in this step is not stepped
        layouts, views = self._layouts, self._views
        assert views is not None
        recording = self._on_episode is not None
        for i in np.flatnonzero(stepping).tolist():
            env = self.envs[i]
            stepped = None
            if layouts is not None and not recording:
                stepped = env.step_encoded(actions[i], layouts[i])
            if stepped is None:
                # recording: the step with its oracle, kept for the metrics and taken out
                stepped = env.step(actions[i]) if recording else env.step_without_oracle(actions[i])
                if recording:
                    self._oracles[i] = stepped[4]["oracle"]
                    stepped = (*stepped[:4], strip_oracle(stepped[4]))
                if layouts is not None:  # (the plain view's vector, from the observation)
                    self._encoded[i] = views[i].encode(stepped[0])
            else:
                self._encoded[i] = stepped[0]
            obs, value, self._terminated[i], self._truncated[i], info = stepped
            self._raw[i] = obs
            reward[i] = value
            _write_row(self._feedback, info["feedback"], i, self.num_envs)
            _write_row(self._others, info, i, self.num_envs, skip="feedback")
        self._extras = {key: value.copy() for key, value in self._others.items()}
        return reward, {key: value.copy() for key, value in self._feedback.items()}

    def _oracle(self, actions: np.ndarray) -> list[dict[str, Any]]:
        """Return each sub-env's oracle, as its single env's ``step`` gave it (recording only)."""
        return self._oracles

    def _oracle_row(self, oracle: Any, i: int) -> dict[str, Any]:
        """Sub-env ``i``'s oracle dict, as its single env returned it."""
        return oracle[i]

    def _update_views(
        self, index: np.ndarray, actions: np.ndarray, reward: np.ndarray, feedback: dict
    ) -> None:
        """Feed the views their step, unless the plain view's vectors are written already."""
        if self._layouts is None:
            super()._update_views(index, actions, reward, feedback)

    def _advance(self, index: np.ndarray) -> None:
        """Nothing to draw: each single env moved on in its step (its observation kept)."""

    def _ends(self, stepped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(terminated, truncated)`` as each sub-env's single env gave them."""
        return stepped & self._terminated, stepped & self._truncated

    def _feedback_row(self, value: np.ndarray, i: int) -> Any:
        """Sub-env ``i``'s entry: its per-user row, or a Python scalar (``acted``)."""
        return value[i].copy() if value.ndim > 1 else value[i].item()


def _write_row(
    buffers: dict[str, np.ndarray], values: dict[str, Any], i: int, k: int, skip: str = ""
) -> None:
    """Write sub-env ``i``'s ``values`` into row ``i`` of ``buffers`` (made as SyncVectorEnv's).

    A buffer is ``(k, *shape)`` of the value's dtype: a Python ``bool``,
    ``int`` or ``float`` gives ``bool``, ``int64`` or ``float64``, as
    :meth:`gymnasium.vector.VectorEnv._add_info` types them.
    """
    for key, value in values.items():
        if key == skip:
            continue
        buffer = buffers.get(key)
        if buffer is None:
            array = np.asarray(value)
            buffer = buffers[key] = np.zeros((k, *array.shape), dtype=array.dtype)
        buffer[i] = value


class RetentionRLVectorEnv(ServicesRLVectorEnv):
    """``num_envs`` ``MultiServiceChoice-Retention-RL-v0`` episodes behind one vector step.

    As :class:`ServicesRLVectorEnv` (the same parameters), with the retention
    env's step: its NumPy step, one sub-env at a time, and its
    ``info["action_mask"]`` batched beside the feedback.

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("MultiServiceChoice-Retention-RL-v0", num_envs=2, n_users=6,
    ...                     n_services=2, horizon=3)
    >>> obs, info = envs.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = envs.step(np.array([0, 1]))
    >>> type(envs).__name__, info["action_mask"].shape, info["feedback"]["acted"].tolist()
    ('RetentionRLVectorEnv', (2, 6), [True, True])
    """

    env_class = MultiServiceChoiceRetentionEnv
    rl_id = "MultiServiceChoice-Retention-RL-v0"
