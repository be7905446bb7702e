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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from osfb_gym.core.channels import FEEDBACK
from osfb_gym.core.seeding import vector_seeds
from osfb_gym.core.validation import check_int

#: the autoreset modes the native envs implement (Gymnasium's default first)
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)

_Step = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]


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

    Subclasses set ``envs`` (the single envs), ``horizon``, the spaces and
    ``_obs`` (the current observations, ``(K, ...)``), and implement
    :meth:`_reset_one`, :meth:`_check_actions`, :meth:`_decide`,
    :meth:`_advance` and :meth:`_feedback_row`.
    """

    envs: list[Any]
    horizon: int
    _obs: np.ndarray

    def _init_vector(self, num_envs: int, autoreset_mode: Any) -> None:
        self.num_envs = check_int(num_envs, "num_envs", minimum=1)
        mode = check_autoreset_mode(autoreset_mode)
        self.metadata = {"autoreset_mode": mode}
        self.autoreset_mode = mode
        self._t = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._all = np.ones(self.num_envs, dtype=bool)
        self._all.flags.writeable = False
        self._running = False

    def _make_envs(
        self,
        env_class: Callable[..., Any],
        rl_id: str,
        kwargs: dict[str, Any],
        unsupported: Callable[[dict[str, Any]], str | None],
    ) -> Any:
        """Make the ``num_envs`` single envs the sub-envs reset with; return the first.

        ``unsupported(kwargs)`` names an argument the native path does not
        cover (then ``gym.make_vec(rl_id, ...)`` gives a sync env for it);
        the first env validates every keyword before the others are made.
        """
        reason = unsupported(kwargs)
        if reason is not None:
            raise ValueError(
                f"{reason}={kwargs[reason]!r} is not supported by the native vector env; "
                f"use gym.make_vec({rl_id!r}, ...), which gives a sync env for it"
            )
        self.envs = [env_class(**kwargs)]
        self.envs += [env_class(**kwargs) for _ in range(self.num_envs - 1)]
        return self.envs[0]

    # ------------------------------------------------------------------ subclass hooks
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
            infos = self._add_info(infos, self._reset_one(i, value, options), i)
        self._autoreset[:] = False
        self._running = True
        return self._obs.copy(), infos

    def step(self, actions: Any) -> _Step:
        """Decide every sub-env's example; autoreset as ``metadata["autoreset_mode"]`` says."""
        if not self._running:
            raise RuntimeError("call reset() before step()")
        actions = self._check_actions(actions)
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        resetting = self._autoreset.copy() if next_step else np.zeros(self.num_envs, dtype=bool)
        reward, feedback = self._decide(actions)
        index = np.flatnonzero(~resetting)
        self._t[index] += 1
        truncated = ~resetting & (self._t >= self.horizon)
        terminated = np.zeros(self.num_envs, dtype=bool)
        # the single env moves on to its next example even when the episode is cut there
        self._advance(index)
        if not resetting.any() and not truncated.any():
            batched: dict[str, Any] = {}
            for key, value in feedback.items():
                batched[key] = value
                batched[f"_{key}"] = self._all.copy()
            infos = {FEEDBACK: batched, f"_{FEEDBACK}": self._all.copy()}
            return self._obs.copy(), reward, terminated, truncated, infos
        return self._step_with_resets(resetting, feedback, reward, terminated, truncated)

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
                infos = self._add_info(infos, self._reset_one(i), i)
                continue
            step_info = {
                FEEDBACK: {key: self._feedback_row(value, i) for key, value in feedback.items()}
            }
            if done[i] and self.autoreset_mode == AutoresetMode.SAME_STEP:
                final = {"final_obs": self._obs[i].copy(), "final_info": step_info}
                infos = self._add_info(infos, final, i)
                self._t[i] = 0
                step_info = self._reset_one(i)
            infos = self._add_info(infos, step_info, i)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = done.copy()
        return self._obs.copy(), reward, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sub-envs' single envs."""
        for env in self.envs:
            env.close()
