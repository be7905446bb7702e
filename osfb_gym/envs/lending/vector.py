"""OneSidedLending's vector entry point: Gymnasium's vector env, or lockstep replicas.

``gym.make_vec("OneSidedLending-v0", num_envs=K, **kwargs)`` calls
:func:`make_vector_env`. By default it is Gymnasium's own
:class:`~gymnasium.vector.SyncVectorEnv` of ``K`` single envs, with the
default ``NEXT_STEP`` autoreset and the ``_key`` masks of vector infos, so
Gymnasium's vector wrappers and any RL library take it as they take any
other id.

``lockstep=True`` asks for the replicas the benchmark's bulk is made of:
the same stream decided by many agents (one per method and hyperparameter
of a paper's grid). A lending stream does not depend on the decisions,
only on the reset seed, so sub-envs reset with the same seed share one
stream there instead of each holding and stepping its own copy; what each
sub-env reveals and scores is still computed from its own actions alone,
exactly as a single env would (:class:`OneSidedLendingVectorEnv`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

from osfb_gym.core.channels import FEEDBACK, ORACLE
from osfb_gym.core.seeding import vector_seeds
from osfb_gym.core.validation import check_binary_array, check_int
from osfb_gym.envs.lending._fast.one_stream import step_one_stream
from osfb_gym.envs.lending.env import OneSidedLendingEnv
from osfb_gym.envs.lending.metrics import (
    LendingMetrics,
    bayes_decision,
    one_sided_loss,
    revealed_reward,
)

ENV_ID = "OneSidedLending-v0"


_UNSIGNED = {np.dtype(t).itemsize: np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}


def _check_actions(actions: Any, shape: tuple[int, ...]) -> np.ndarray:
    """:func:`~osfb_gym.core.validation.check_binary_array` without its conversions.

    An ``ndarray`` of ``shape`` and a boolean, integer or floating dtype whose
    entries are all 0 or 1 comes back as ``int8`` (what the validator returns;
    an ``int8`` array itself, which the step only reads); anything else goes to
    the validator and its error. An integer's (or a boolean's) entries are 0
    or 1 exactly when their bytes, read as unsigned, are at most 1: one
    comparison.
    """
    if type(actions) is np.ndarray and actions.shape == shape:
        kind = actions.dtype.kind
        if kind in "biu":
            binary = (actions.view(_UNSIGNED[actions.dtype.itemsize]) <= 1).all()
        else:
            binary = kind == "f" and ((actions == 0) | (actions == 1)).all()
        if binary:
            return actions if actions.dtype == np.int8 else actions.astype(np.int8)
    return check_binary_array(actions, "actions", shape)


def make_vector_env(num_envs: int = 1, *, lockstep: bool = False, **kwargs: Any) -> VectorEnv:
    """Return ``num_envs`` OneSidedLending envs as one vector env (the id's vector entry point).

    Parameters
    ----------
    num_envs
        Number of sub-envs.
    lockstep
        False (default): Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv`
        of single envs made by ``gym.make``: ``NEXT_STEP`` autoreset,
        ``_key`` masks in the infos, sub-envs independent of each other.
        True: :class:`OneSidedLendingVectorEnv`, lockstep replicas (no
        autoreset; sub-envs reset with one seed share one stream), for
        running many agents on one stream (the paper suites).
    **kwargs
        Keywords of ``OneSidedLending-v0``.

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("OneSidedLending-v0", num_envs=4, horizon=20)
    >>> type(envs).__name__, envs.metadata["autoreset_mode"]
    ('SyncVectorEnv', <AutoresetMode.NEXT_STEP: 'NextStep'>)
    >>> replicas = gym.make_vec("OneSidedLending-v0", num_envs=4, horizon=20, lockstep=True)
    >>> type(replicas).__name__
    'OneSidedLendingVectorEnv'
    """
    if not isinstance(lockstep, bool):
        raise TypeError(f"lockstep must be True or False, got {lockstep!r}")
    if lockstep:
        return OneSidedLendingVectorEnv(num_envs, **kwargs)
    num_envs = check_int(num_envs, "num_envs", minimum=1)
    return SyncVectorEnv([partial(gym.make, ENV_ID, **kwargs) for _ in range(num_envs)])


class OneSidedLendingVectorEnv(VectorEnv):
    """``num_envs`` episodes of :class:`~osfb_gym.envs.lending.OneSidedLendingEnv` in lockstep.

    ``gym.make_vec("OneSidedLending-v0", num_envs=K, lockstep=True, **kwargs)``
    builds it; every other keyword is the single env's. Sub-env ``i`` behaves exactly as a
    single env made with the same keywords, reset with its seed and given
    its actions: the same observations, rewards, feedback and oracle (the
    equality is tested). Sub-envs reset with the same seed share one
    stream, which is what makes replicas cheap.

    Every sub-env's episode has the same length (a dataset's stream, or the
    horizon), so all end at the same step; there is no autoreset
    (``AutoresetMode.DISABLED``): call ``reset`` for the next episodes.
    The infos are the single envs' values stacked along a first sub-env
    axis, without ``_key`` masks (every sub-env is in step). Gymnasium's
    vector wrappers expect an autoresetting env: use the default
    (``lockstep=False``) with them.

    Parameters
    ----------
    num_envs
        Number of sub-envs.
    **kwargs
        Keywords of ``OneSidedLending-v0`` (``render_mode`` excepted).

    Attributes
    ----------
    metrics_class
        :class:`~osfb_gym.envs.lending.LendingMetrics`, built with
        ``num_envs`` by :func:`osfb_gym.runner.run_vector_episode`.

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("OneSidedLending-v0", num_envs=3, horizon=10, lockstep=True)
    >>> obs, info = envs.reset(seed=[7, 7, 8])
    >>> obs.shape, bool((obs[0] == obs[1]).all()), bool((obs[0] == obs[2]).all())
    ((3, 1, 5), True, False)
    >>> obs, reward, terminated, truncated, info = envs.step(np.array([[1], [0], [1]]))
    >>> info["feedback"]["revealed"].ravel().tolist()
    [True, False, True]
    """

    metadata = {"autoreset_mode": AutoresetMode.DISABLED}  # noqa: RUF012
    metrics_class = LendingMetrics

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = check_int(num_envs, "num_envs", minimum=1)
        if kwargs.get("render_mode") is not None:
            raise ValueError(
                "render_mode is not supported by the vector env; render a single "
                f"OneSidedLending-v0 instead, got render_mode={kwargs['render_mode']!r}"
            )
        self._kwargs = kwargs
        # the first stream's env also validates every keyword, before any reset
        self._streams: list[OneSidedLendingEnv] = [OneSidedLendingEnv(**kwargs)]
        template = self._streams[0]
        self.cutoff = template.cutoff
        self.batch_size = template.batch_size
        self.feedback_mode = template.feedback_mode
        self.single_observation_space = template.observation_space
        self.single_action_space = template.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # sub-env i reads the stream self._streams[self._slot[i]]
        self._slot = np.zeros(self.num_envs, dtype=np.intp)
        # the one-stream step's constants: all-below and all-above Bayes actions of one
        # applicant, and an all-true mask (read-only; the step hands out copies)
        shape = (self.num_envs, self.batch_size)
        self._constants = (
            np.zeros(shape, dtype=np.int8),
            np.ones(shape, dtype=np.int8),
            np.ones(shape, dtype=bool),
        )
        for constant in self._constants:
            constant.flags.writeable = False
        self._assigned = False
        self._running = False

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        return vector_seeds(seed, self.num_envs)

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env; sub-envs given the same seed share one stream.

        ``seed=None`` resets each stream from its own generator, as
        ``reset()`` does a single env, so sub-envs that shared a stream go
        on sharing one (they would draw alike as separate envs too).
        """
        seeds = self._seeds(seed)
        if seed is not None or not self._assigned:
            self._assign_streams(seeds)
        first_seed: dict[int, int | None] = {}
        for slot, value in zip(self._slot.tolist(), seeds, strict=True):
            first_seed.setdefault(slot, value)
        results = [
            stream.reset(seed=first_seed[index], options=options)
            for index, stream in enumerate(self._streams)
        ]
        obs = np.stack([results[slot][0] for slot in self._slot])
        feedback = [results[slot][1][FEEDBACK] for slot in self._slot]
        info = {
            FEEDBACK: {
                "warm_start": {key: self._stack_warm(feedback, key) for key in ("X", "y")},
                "cutoff": np.full(self.num_envs, self.cutoff),
                "link": np.array([fb["link"] for fb in feedback], dtype=object),
            },
            ORACLE: {"beta": np.stack([results[slot][1][ORACLE]["beta"] for slot in self._slot])},
        }
        self._running = True
        return obs, info

    def _stack_warm(self, feedback: list[dict[str, Any]], key: str) -> np.ndarray:
        """Stack the sub-envs' warm-start arrays (one read-only view when all share a stream)."""
        if len(self._streams) == 1:
            sample = feedback[0]["warm_start"][key]
            # a paper grid's replicas share one stream: no copy per sub-env
            return np.broadcast_to(sample, (self.num_envs, *sample.shape))
        return np.stack([fb["warm_start"][key] for fb in feedback])

    def _assign_streams(self, seeds: list[int | None]) -> None:
        """One stream per distinct seed, and one for each unseeded sub-env."""
        keys = [
            ("seed", value) if value is not None else ("own", i) for i, value in enumerate(seeds)
        ]
        first: dict[tuple[str, int | None], int] = {}
        self._slot = np.array([first.setdefault(key, len(first)) for key in keys], dtype=np.intp)
        while len(self._streams) < len(first):
            self._streams.append(OneSidedLendingEnv(**self._kwargs))
        del self._streams[len(first) :]
        self._assigned = True

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Decide every sub-env's batch; each reveals what its own actions reveal."""
        if not self._running:
            raise RuntimeError(
                "the episodes have ended (or never started); call reset() for new ones"
            )
        actions = _check_actions(actions, (self.num_envs, self.batch_size))
        first = self._streams[0]
        # a full batch's mask is the env's all-true constant (else the general path decides)
        if len(self._streams) == 1 and first._valid is first._all_valid:
            return step_one_stream(self, actions)
        # the streams are this family's own envs: their current batch is read directly
        mu = np.stack([stream._mu for stream in self._streams])[self._slot]
        y = np.stack([stream._y for stream in self._streams])[self._slot]
        # every stream is at the same step of the same length: one mask for all
        valid = np.broadcast_to(self._streams[0]._valid, actions.shape)
        approved = actions == 1
        if valid.all():
            revealed = approved if self.feedback_mode == "one_sided" else np.ones_like(approved)
            bayes = bayes_decision(mu, self.cutoff)
            loss = one_sided_loss(mu, self.cutoff, actions)
        else:
            # a padded last batch: padding is never approved, revealed or scored
            approved &= valid
            revealed = approved if self.feedback_mode == "one_sided" else valid.copy()
            bayes = bayes_decision(mu, self.cutoff) * valid
            wrong = (bayes != actions) & valid
            loss = np.sum(np.abs(mu - self.cutoff) * wrong, axis=-1)
        info = {
            FEEDBACK: {
                "revealed": revealed,
                "y": np.where(revealed, y, 0.0),
                "valid": np.array(valid),
            },
            ORACLE: {"mu": mu, "y": y, "bayes_action": bayes.astype(np.int8), "loss": loss},
        }
        reward = revealed_reward(y, self.cutoff, approved)
        advanced = [stream._advance() for stream in self._streams]
        obs = np.stack([advanced[slot][0] for slot in self._slot])
        terminated = np.array([advanced[slot][1] for slot in self._slot])
        truncated = np.array([advanced[slot][2] for slot in self._slot])
        if (terminated | truncated).any():
            self._running = False
        return obs, reward, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Close the streams' envs."""
        for stream in self._streams:
            stream.close()
