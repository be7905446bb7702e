"""What the families' native vector envs share: seeds, resets, autoreset and the infos.

A native vector env steps ``K`` sub-envs of one RL id as arrays. Each
sub-env owns the family's single env, which resets it (its own code: the
world, the warm start, the first observation) and whose generator draws its
stream in the single env's order; the subclass decides every sub-env's
current example at once (:meth:`NativeRLVectorEnv._decide`) and moves the
sub-envs on (:meth:`NativeRLVectorEnv._advance`). This class does the rest
as Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv` does it: seeds
(``s, s + 1, ...`` for an int), ``NEXT_STEP`` or ``SAME_STEP`` autoreset,
and infos with ``_key`` masks, so that sub-env ``i`` equals the single RL id
under the same seed and actions.

The views and the action adapters of the RL ids are this class's too, handed
in by :func:`osfb_gym.wrappers.vector.make_rl_vector_env` (the envs sit below
the wrappers): with a ``view`` factory each sub-env keeps the view the single
id puts on its env (the previous step's feedback, or a principled learner's
statistics), fed with that sub-env's step and encoding its observation, one
sub-env at a time (a view is a sequential learner); the worlds' step stays
batched. With an ``actions`` adapter the action space is the adapter's
(``Discrete(n)`` looked up in its table of joint actions, or
``MultiDiscrete([2] * n)`` for ``MultiBinary(n)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, cast

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from osfb_gym.core.channels import FEEDBACK, strip_oracle
from osfb_gym.core.seeding import vector_seeds
from osfb_gym.core.validation import check_int

#: the autoreset modes the native envs implement (Gymnasium's default first)
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)

_Step = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
#: a single env -> the action space the RL id shows, and its table of joint actions
#: (row ``k``: the env's action for action ``k``; None: the same actions)
ActionAdapter = Callable[[Any], tuple[spaces.Space, np.ndarray | None]]


def native_supported(kwargs: Mapping[str, Any], single_only: Mapping[str, Any]) -> str | None:
    """Return the first keyword of ``kwargs`` that needs the single env, or None if native.

    Parameters
    ----------
    kwargs
        The keywords of the single env the vector env is asked for.
    single_only
        The family's keywords the native step does not cover, each with the
        one value it covers (its default), in the order they are reported:
        a keyword absent from ``kwargs`` or given that value is native. For a
        None default, any other value (a dataset, an array) needs the
        single env; otherwise a value that differs by ``!=`` does.

    Examples
    --------
    >>> single_only = {"dataset": None, "order": "random", "render_mode": None}
    >>> native_supported({"order": "random", "horizon": 5}, single_only) is None
    True
    >>> native_supported({"order": "adversarial", "render_mode": "human"}, single_only)
    'order'
    """
    for name, native in single_only.items():
        value = kwargs.get(name, native)
        if value is not native and (native is None or value != native):
            return name
    return None


def check_autoreset_mode(mode: Any) -> AutoresetMode:
    """Return ``mode`` (an :class:`~gymnasium.vector.AutoresetMode` or its value) as the enum.

    Examples
    --------
    >>> check_autoreset_mode("SameStep")
    <AutoresetMode.SAME_STEP: 'SameStep'>
    """
    try:
        value = AutoresetMode(mode)
    except ValueError:
        value = None
    if value not in AUTORESET_MODES:
        names = ", ".join(repr(m.value) for m in AUTORESET_MODES)
        raise ValueError(f"autoreset_mode must be one of {names}, got {mode!r}")
    return cast("AutoresetMode", value)


class NativeRLVectorEnv(VectorEnv):
    """Base of the native vector envs: the sync env's protocol around a batched step.

    Every subclass's constructor takes the parameters below (its docstring
    says what it adds, and its family's single-env-only keywords).

    Parameters
    ----------
    num_envs
        Number of sub-envs.
    autoreset_mode
        ``AutoresetMode.NEXT_STEP`` (Gymnasium's default): the step after an
        episode's end resets that sub-env (its action is ignored, its reward
        0). ``AutoresetMode.SAME_STEP``: the ending step returns the next
        episode's first observation, with the last one in
        ``info["final_obs"]`` and the step's info in ``info["final_info"]``
        (stable-baselines3's semantics; see
        :class:`osfb_gym.wrappers.sb3.SB3VecEnv`). Declared in
        ``metadata["autoreset_mode"]``.
    view, actions
        The RL id's view factory and action adapter (None: the plain view,
        the env's actions), as :func:`osfb_gym.wrappers.vector.make_rl_vector_env`
        hands them in from the id's ``view``, ``discrete_actions`` and
        ``binary_as_multidiscrete``.
    on_episode
        What :class:`osfb_gym.runner.EpisodeRecorder` does for the single
        id (``rl_env(..., on_episode=...)``): each sub-env's episode is
        scored by its family's metrics, fed every step with the oracle the
        sub-env's step computes (:meth:`_oracle`; never in ``info``), and
        ``on_episode(metrics)`` is called when it ends: every finished
        episode once, with the single env's values, in the order of
        SB3's ``DummyVecEnv`` (by step, then by sub-env index). Only the
        families that implement :meth:`_oracle` take it
        (:attr:`records_episodes`).
    **kwargs
        Keywords of the family's single env. Those the native step does not
        cover (the family's :func:`native_supported` names them: ``render_mode``
        always, a dataset or a scenario in some families) are the single
        env's only: the vector env refuses them with a ``ValueError``, and
        ``gym.make_vec`` gives a sync env for them.

    Subclasses set :attr:`env_class`, :attr:`rl_id` and :attr:`single_only`;
    in :meth:`_setup` they read the first single env and set ``horizon``, the
    plain view's single spaces and ``_obs`` (the current plain observations,
    ``(K, ...)``); and they
    implement :meth:`_reset_one`, :meth:`_check_actions`, :meth:`_decide`,
    :meth:`_advance` and :meth:`_feedback_row` (and :meth:`_raw_obs` where
    the env's observation is not its plain row).
    """

    envs: list[Any]
    horizon: int
    _obs: np.ndarray

    #: the single env each sub-env owns, and the RL id the sub-envs are
    env_class: ClassVar[Callable[..., Any]]
    rl_id: ClassVar[str]
    #: the single env's keywords the native step does not cover, each with the value it
    #: covers (:func:`native_supported`); ``gym.make_vec`` gives a sync env for the others
    single_only: ClassVar[Mapping[str, Any]] = {"render_mode": None}
    #: whether the family computes the oracle (:meth:`_oracle`), so takes ``on_episode``
    records_episodes: ClassVar[bool] = False

    def __init__(
        self,
        num_envs: int = 1,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        view: Callable[[Any], Any] | None = None,
        actions: ActionAdapter | None = None,
        on_episode: Callable[[dict[str, float]], None] | None = None,
        **kwargs: Any,
    ) -> None:
        self.num_envs = check_int(num_envs, "num_envs", minimum=1)
        mode = check_autoreset_mode(autoreset_mode)
        for name, value in (("view", view), ("actions", actions)):
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be None or a callable of a single env, got {value!r}")
        if on_episode is not None:
            if not callable(on_episode):
                raise TypeError(f"on_episode must be None or callable, got {on_episode!r}")
            if not self.records_episodes:
                raise ValueError(
                    f"on_episode is not supported by {type(self).__name__} (its step computes "
                    "no oracle); gym.make_vec(..., native=False) records episodes"
                )
        self._on_episode = on_episode
        #: each sub-env's episode metrics (with ``on_episode``), made at its reset
        self._metrics: list[Any] = [None] * self.num_envs
        self._view_factory = view
        self._action_adapter = actions
        self._views: list[Any] | None = None
        #: a step's infos beside the feedback, ``(K, ...)`` each (retention's action mask)
        self._extras: dict[str, np.ndarray] = {}
        self._table: np.ndarray | None = None
        self.metadata = {"autoreset_mode": mode}
        self.autoreset_mode = mode
        self._t = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._all = np.ones(self.num_envs, dtype=bool)
        self._all.flags.writeable = False
        self._running = False
        self._setup(self._make_envs(kwargs))
        self._finish_spaces()

    def _make_envs(self, kwargs: dict[str, Any]) -> Any:
        """Make the ``num_envs`` single envs the sub-envs reset with; return the first.

        A keyword of :attr:`single_only` the native path does not cover is
        refused (``gym.make_vec(rl_id, ...)`` gives a sync env for it); the
        first env validates every keyword before the others are made.
        """
        reason = native_supported(kwargs, self.single_only)
        if reason is not None:
            raise ValueError(
                f"{reason}={kwargs[reason]!r} is not supported by the native vector env; "
                f"use gym.make_vec({self.rl_id!r}, ...), which gives a sync env for it"
            )
        self.envs = [self.env_class(**kwargs)]
        self.envs += [self.env_class(**kwargs) for _ in range(self.num_envs - 1)]
        return self.envs[0]

    def _finish_spaces(self) -> None:
        """Put the view and the action adapter on the plain spaces; batch the spaces.

        One view per sub-env, made by the ``view`` factory from its single
        env; the action space the ``actions`` adapter gives for the single
        env, with its table of joint actions (None: the same actions).
        """
        if self._view_factory is not None:
            self._views = [self._view_factory(env) for env in self.envs]
            space = self._views[0].observation_space
            self.single_observation_space = space
            self._encoded = np.zeros((self.num_envs, *space.shape), dtype=np.float32)
            self._last: list[Any] = [None] * self.num_envs
        if self._action_adapter is not None:
            self.single_action_space, self._table = self._action_adapter(self.envs[0])
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    # ------------------------------------------------------------------ subclass hooks
    def _setup(self, first: Any) -> None:
        """Read the family's parameters off the first single env; make the plain spaces and arrays.

        Sets ``horizon``, ``single_observation_space``, ``single_action_space``
        and ``_obs`` (the view and the action adapter are put on after it).
        """
        raise NotImplementedError

    def _reset_one(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` with its single env, load its state; return its info."""
        raise NotImplementedError

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Return the batch of actions validated, or raise naming ``actions``."""
        raise NotImplementedError

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score every sub-env's current example: rewards ``(K,)`` and the feedback arrays."""
        raise NotImplementedError

    def _advance(self, index: np.ndarray) -> None:
        """Move the sub-envs ``index`` on to their next example (``_obs`` rows included)."""
        raise NotImplementedError

    def _feedback_row(self, value: np.ndarray, i: int) -> Any:
        """Sub-env ``i``'s entry of a feedback array, as the single env gives it."""
        raise NotImplementedError

    def _oracle(self, actions: np.ndarray) -> Any:
        """Return the oracle of every sub-env's decided example, as arrays over the sub-envs.

        Called after :meth:`_decide` and before :meth:`_advance`, only with
        ``on_episode``; sub-env ``i``'s entries (:meth:`_oracle_row`) are
        the single env's ``info["oracle"]`` values its metrics read (a family
        whose single envs step one at a time may keep their oracle dicts and
        override :meth:`_oracle_row`). Families that implement it set
        :attr:`records_episodes`.
        """
        raise NotImplementedError

    def _ends(self, stepped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(terminated, truncated)``: a ``stepped`` sub-env at its horizon truncates."""
        return np.zeros(self.num_envs, dtype=bool), stepped & (self._t >= self.horizon)

    def _raw_obs(self, i: int) -> Any:
        """Sub-env ``i``'s observation as its single env returns it (a copy)."""
        return self._obs[i].copy()

    # ------------------------------------------------------------------ views and actions
    def _reset_sub(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` and its view (with the reset feedback); return its info."""
        info = self._reset_one(i, seed, options)
        if self._on_episode is not None:
            self._metrics[i] = self.envs[i].metrics_class()
        if self._views is not None:
            view = self._views[i]
            view.reset(info.get(FEEDBACK) or {}, seed=seed)
            self._last[i] = last = self._raw_obs(i)
            self._encoded[i] = view.encode(last)
        return info

    def _update_views(
        self, index: np.ndarray, actions: np.ndarray, reward: np.ndarray, feedback: dict
    ) -> None:
        """Feed the views of the sub-envs ``index`` their step; encode their next observation."""
        assert self._views is not None
        for i in index.tolist():
            view = self._views[i]
            row = {key: self._feedback_row(value, i) for key, value in feedback.items()}
            view.update(self._last[i], actions[i], float(reward[i]), row)
            self._last[i] = last = self._raw_obs(i)
            self._encoded[i] = view.encode(last)

    def _observations(self) -> np.ndarray:
        """Return a copy of the batch of observations (the views', or the plain rows)."""
        return (self._obs if self._views is None else self._encoded).copy()

    def _joint_actions(self, actions: Any) -> Any:
        """Return ``Discrete(n)`` actions as the plain space's joint actions (the twin's table)."""
        table = self._table
        if table is None:
            return actions
        array = np.asarray(actions)
        n = table.shape[0]
        if array.shape != (self.num_envs,) or array.dtype.kind not in "iu":
            raise TypeError(
                f"actions must be {self.num_envs} integers (Discrete({n}) each), got "
                f"shape {array.shape} and dtype {array.dtype}"
            )
        if ((array < 0) | (array >= n)).any():
            raise ValueError(f"actions must be in [0, {n}), got {array.tolist()}")
        return table[array]

    # ------------------------------------------------------------------ protocol
    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        return vector_seeds(seed, self.num_envs)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env (``seed``: None, an int ``s`` for ``s, s+1, ...``, or a list)."""
        infos: dict[str, Any] = {}
        for i, value in enumerate(self._seeds(seed)):
            self._t[i] = 0
            infos = self._add_info(infos, self._reset_sub(i, value, options), i)
        self._autoreset[:] = False
        self._running = True
        return self._observations(), infos

    def step(self, actions: Any) -> _Step:
        """Decide every sub-env's example; autoreset as ``metadata["autoreset_mode"]`` says."""
        if not self._running:
            raise RuntimeError("call reset() before step()")
        actions = self._check_actions(self._joint_actions(actions))
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        resetting = self._autoreset.copy() if next_step else np.zeros(self.num_envs, dtype=bool)
        reward, feedback = self._decide(actions)
        index = np.flatnonzero(~resetting)
        self._t[index] += 1
        terminated, truncated = self._ends(~resetting)
        if self._on_episode is not None:
            self._record(index, actions, reward, feedback, terminated | truncated)
        # the single env moves on to its next example even when the episode is cut there
        self._advance(index)
        if self._views is not None:
            self._update_views(index, actions, reward, feedback)
        if not resetting.any() and not (terminated | truncated).any():
            batched: dict[str, Any] = {}
            for key, value in feedback.items():
                batched[key] = value
                batched[f"_{key}"] = self._all.copy()
            infos = {FEEDBACK: batched, f"_{FEEDBACK}": self._all.copy()}
            for key, value in self._extras.items():
                infos[key] = value
                infos[f"_{key}"] = self._all.copy()
            return self._observations(), reward, terminated, truncated, infos
        return self._step_with_resets(resetting, feedback, reward, terminated, truncated)

    def _record(
        self,
        index: np.ndarray,
        actions: np.ndarray,
        reward: np.ndarray,
        feedback: dict[str, np.ndarray],
        done: np.ndarray,
    ) -> None:
        """Feed the stepped sub-envs' metrics; hand each finished episode's to ``on_episode``.

        Each sub-env's metrics get what :class:`~osfb_gym.runner.EpisodeRecorder`
        gives them on the single env: its action, reward, feedback and oracle.
        """
        assert self._on_episode is not None
        oracle, row = self._oracle(actions), self._feedback_row
        for i in index.tolist():
            metrics = self._metrics[i]
            metrics.update(
                actions[i],
                float(reward[i]),
                {key: row(value, i) for key, value in feedback.items()},
                self._oracle_row(oracle, i),
            )
            if done[i]:
                self._on_episode(metrics.get())
                self._metrics[i] = None

    def _oracle_row(self, oracle: Any, i: int) -> dict[str, Any]:
        """Sub-env ``i``'s oracle (its entry of each of :meth:`_oracle`'s arrays)."""
        return {key: self._feedback_row(value, i) for key, value in oracle.items()}

    def _step_with_resets(
        self,
        resetting: np.ndarray,
        feedback: dict[str, np.ndarray],
        reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> _Step:
        """Step when a sub-env resets or an episode ends: the infos built as SyncVectorEnv's."""
        infos: dict[str, Any] = {}
        done = terminated | truncated
        reward = np.where(resetting, 0.0, reward)
        for i in range(self.num_envs):
            if resetting[i]:
                self._t[i] = 0
                infos = self._add_info(infos, self._reset_sub(i), i)
                continue
            step_info = {
                FEEDBACK: {key: self._feedback_row(value, i) for key, value in feedback.items()},
                **{key: self._feedback_row(value, i) for key, value in self._extras.items()},
            }
            if done[i] and self.autoreset_mode == AutoresetMode.SAME_STEP:
                final_obs = (self._obs if self._views is None else self._encoded)[i].copy()
                final = {"final_obs": final_obs, "final_info": step_info}
                infos = self._add_info(infos, final, i)
                self._t[i] = 0
                step_info = self._reset_sub(i)
            infos = self._add_info(infos, step_info, i)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = done.copy()
        return self._observations(), reward, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sub-envs' single envs."""
        for env in self.envs:
            env.close()


class ChunkedStreamRLVectorEnv(NativeRLVectorEnv):
    """A native vector env over synthetic streams the single envs draw in chunks.

    For the families whose single env keeps a chunk of examples (``_x``,
    ``_labels``), its place in it (``_pos``) and the current label (``_y``),
    and draws the next chunk with ``_world.sample(chunk, np_random)``
    (``AppleTasting``, ``RejectOption``). Each sub-env's chunk is copied at
    reset and drawn by its own single env's world and generator, so the
    stream is the single env's; a step reads every sub-env's example at once.
    Subclasses call :meth:`_init_stream` in their constructor.

    Where the oracle scores each example against a reference (reject: Chow's
    rule's risk; apple: the Bayes decision's loss), the single env keeps it
    per chunk in :attr:`reference_attr` and :meth:`_reference` computes it for
    a drawn chunk; while recording episodes, the chunks' references are kept
    beside the examples and :meth:`_current_reference` reads them.
    """

    #: the single env's attribute holding its chunk's per-example references (None: none)
    reference_attr: ClassVar[str | None] = None

    def _init_stream(self, dim: int, chunk: int) -> None:
        """Make each sub-env's chunk, its place in it and its current label (and ``_obs``)."""
        self._chunk = chunk
        self._chunk_x = np.zeros((self.num_envs, chunk, dim), dtype=np.float32)
        self._chunk_y = np.zeros((self.num_envs, chunk), dtype=np.int8)
        self._chunk_reference = np.zeros((self.num_envs, chunk))
        self._pos = np.zeros(self.num_envs, dtype=np.intp)
        self._label = np.zeros(self.num_envs, dtype=np.int64)
        self._obs = np.zeros((self.num_envs, dim), dtype=np.float32)

    def _reference(self, i: int, extra: Any) -> np.ndarray:
        """Return the references of sub-env ``i``'s drawn chunk from what its world drew."""
        raise NotImplementedError

    def _current_reference(self) -> np.ndarray:
        """Return every sub-env's reference of the example just decided (recording only)."""
        # the example just decided is the one before the chunk's position
        return self._chunk_reference[np.arange(self.num_envs), self._pos - 1]

    def _recording_references(self) -> bool:
        return self.reference_attr is not None and self._on_episode is not None

    def _reset_one(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` with its single env (its world and first chunk); load them."""
        env = self.envs[i]
        obs, info = env.reset(seed=seed, options=options)
        self._chunk_x[i] = env._x
        self._chunk_y[i] = env._labels
        self._pos[i] = env._pos
        self._label[i] = env._y
        self._obs[i] = obs
        if self._recording_references():
            self._chunk_reference[i] = getattr(env, str(self.reference_attr))
        return strip_oracle(info)

    def _drawn(self, i: int, extra: Any) -> None:
        """Keep the references of sub-env ``i``'s drawn chunk (when recording)."""
        if self._recording_references():
            self._chunk_reference[i] = self._reference(i, extra)

    def _advance(self, index: np.ndarray) -> None:
        """Move the sub-envs ``index`` to their next example, drawing a chunk where one ends."""
        if index.size == 0:
            return
        pos, chunk = self._pos, self._chunk
        for i in index[pos[index] >= chunk].tolist():
            env = self.envs[i]
            # the single env's draw: its world, its generator, a chunk of examples
            self._chunk_x[i], self._chunk_y[i], extra = env._world.sample(chunk, env.np_random)
            self._drawn(i, extra)
            pos[i] = 0
        at = pos[index]
        self._obs[index] = self._chunk_x[index, at]
        self._label[index] = self._chunk_y[index, at]
        pos[index] += 1
