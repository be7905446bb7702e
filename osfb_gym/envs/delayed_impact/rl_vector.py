"""A native vector env of ``DelayedImpactLending-RL-v0``: ``K`` reacting worlds stepped as arrays.

``gym.make_vec("DelayedImpactLending-RL-v0", num_envs=K)`` builds
:class:`ImpactRLVectorEnv` (through
:func:`osfb_gym.wrappers.vector.make_rl_vector_env`), and so do the
``-Discrete`` twin and the views. Sub-env ``i`` is the single RL id reset
with its seed: the same observations, rewards, truncations and feedback as
:class:`~gymnasium.vector.SyncVectorEnv` over ``gym.make(id)`` under the same
seeds and actions, autoresets included (tested, bit for bit).

Each sub-env keeps its groups' score distributions (``pi``, which its
approved loans move); a step draws each sub-env's uniforms with its own
generator (one call, in the single env's order), then picks every
sub-env's groups, scores and outcomes, scores the decisions and moves the
mass of the approved loans for all sub-envs at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import strip_oracle
from osfb_gym.envs import _native_vector as _native
from osfb_gym.envs._native_vector import NativeRLVectorEnv
from osfb_gym.envs.delayed_impact.env import DelayedImpactLendingEnv

#: the keywords the native step does not cover, each with the value it covers
SINGLE_ONLY: dict[str, Any] = {"render_mode": None}


def native_supported(kwargs: dict[str, Any]) -> str | None:
    """Return why ``kwargs`` of ``DelayedImpactLending-v0`` need the sync env, or None.

    Every world (the synthetic ones and the FICO tables) is native; renders
    are the single env's.
    """
    return _native.native_supported(kwargs, SINGLE_ONLY)


class ImpactRLVectorEnv(NativeRLVectorEnv):
    """``num_envs`` ``DelayedImpactLending-RL-v0`` episodes stepped as arrays.

    It takes :class:`~osfb_gym.envs._native_vector.NativeRLVectorEnv`'s parameters;
    below, what is this env's own.

    Parameters
    ----------
    **kwargs
        Keywords of ``DelayedImpactLending-v0`` (``render_mode`` is the single
        env's only: ``gym.make_vec`` gives a sync env for it).

    Notes
    -----
    The single env draws a batch as ``random(n)`` for the groups, ``random(n)``
    for the scores and ``random(n)`` for the outcomes (or three ``random()``
    calls for one applicant: the same doubles); here each sub-env's
    generator fills its ``3 n`` uniforms in one call, the same values in the
    same order. The groups and scores are picked with the single env's
    comparisons (``searchsorted`` and a count of a cumulative distribution's
    entries below the draw, ``np.cumsum`` of the same row), and the mass moves
    applicant by applicant in the batch's order, so every value is the
    single env's bit for bit.

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("DelayedImpactLending-RL-v0", num_envs=3, horizon=2)
    >>> type(envs).__name__, envs.single_observation_space.shape
    ('ImpactRLVectorEnv', (2,))
    >>> obs, info = envs.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = envs.step(np.ones((3, 1), np.int8))
    >>> info["feedback"]["revealed"].ravel().tolist()
    [True, True, True]
    """

    env_class = DelayedImpactLendingEnv
    rl_id = "DelayedImpactLending-RL-v0"
    single_only = SINGLE_ONLY
    records_episodes = True

    def _setup(self, first: Any) -> None:
        """Read the single env's parameters; make the plain spaces and the arrays."""
        self.batch_size, self.horizon = first.batch_size, first.horizon
        self._gain, self._lose = first.config.loan_gain, first.config.default_loss
        self._mass = first.config.shift_mass
        self._full = first.feedback_mode == "full"
        self._scores, self._rho = first.scores, first._rho
        self._up, self._down = first._up, first._down
        self._group_cdf = first._group_cdf
        space = first.observation_space
        self.single_observation_space = spaces.Box(
            space.low.ravel(), space.high.ravel(), dtype=np.float32
        )
        self.single_action_space = spaces.MultiBinary(self.batch_size)
        k, n = self.num_envs, self.batch_size
        self._pi = np.zeros((k, *first._pi.shape))
        self._group = np.zeros((k, n), dtype=np.intp)
        self._bin = np.zeros((k, n), dtype=np.intp)
        self._y = np.zeros((k, n))
        self._uniforms = np.zeros((k, 3 * n))
        self._obs = np.zeros((k, 2 * n), dtype=np.float32)
        self._before = np.zeros((k, first._pi.shape[0]))  # group means before a step

    def _reset_one(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` with its single env (its distributions, first batch); load them."""
        env = self.envs[i]
        obs, info = env.reset(seed=seed, options=options)
        self._pi[i] = env._pi
        self._group[i], self._bin[i], self._y[i] = env._group, env._bin, env._y
        self._obs[i] = obs.reshape(-1)
        return strip_oracle(info)

    def _raw_obs(self, i: int) -> np.ndarray:
        """Sub-env ``i``'s ``(batch_size, 2)`` ``(group, score)`` rows, as the single env's."""
        return self._obs[i].reshape(self.batch_size, 2).copy()

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Return the ``(K, batch_size)`` 0/1 actions as ``int8`` (``MultiBinary`` rows)."""
        array = np.asarray(actions)
        shape = (self.num_envs, self.batch_size)
        if array.shape != shape or array.dtype.kind not in "biuf":
            raise TypeError(
                f"actions must be a {shape} array of 0/1 (MultiBinary({self.batch_size}) "
                f"rows), got shape {array.shape} and dtype {array.dtype}"
            )
        if not ((array == 0) | (array == 1)).all():
            raise ValueError(f"actions must hold 0 or 1 only, got {array.tolist()}")
        return array.astype(np.int8)

    def _means(self) -> np.ndarray:
        """Each sub-env's group mean scores, ``(K, G)``: the single env's ``pi @ scores``."""
        return np.stack([pi @ self._scores for pi in self._pi])

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score every sub-env's batch as ``score_batch``; move the approved loans' mass."""
        if self._on_episode is not None:
            self._before = self._means()  # the oracle's score_change is from here
        approved = actions == 1
        y = self._y
        reward = np.where(approved, np.where(y == 1.0, self._gain, -self._lose), 0.0).sum(axis=-1)
        revealed = np.ones_like(approved) if self._full else approved
        feedback = {"revealed": revealed, "y": np.where(revealed, y, 0.0)}
        pi, rows = self._pi, np.arange(self.num_envs)
        for j in range(self.batch_size):  # the batch's order: a later loan sees the earlier's move
            who = rows[approved[:, j]]
            if who.size == 0:
                continue
            group, bins = self._group[who, j], self._bin[who, j]
            target = np.where(y[who, j] == 1.0, self._up[bins], self._down[bins])
            moved = np.minimum(self._mass, pi[who, group, bins])
            pi[who, group, bins] -= moved
            pi[who, group, target] += moved
        return reward, feedback

    def _advance(self, index: np.ndarray) -> None:
        """Draw the next batch of the sub-envs ``index`` from their current distributions."""
        if index.size == 0:
            return
        uniforms, n = self._uniforms, self.batch_size
        for i in index.tolist():
            self.envs[i].np_random.random(out=uniforms[i])
        u = uniforms[index]
        shares = self._group_cdf
        group = np.minimum(
            np.searchsorted(shares, u[:, :n] * shares[-1], side="right"), shares.size - 1
        )
        cdf = np.cumsum(self._pi[index[:, None], group], axis=-1)
        draws = u[:, n : 2 * n] * cdf[..., -1]
        bins = np.minimum((cdf <= draws[..., None]).sum(axis=-1), self._scores.size - 1)
        self._y[index] = (u[:, 2 * n :] < self._rho[group, bins]).astype(np.float64)
        self._group[index], self._bin[index] = group, bins
        obs = np.stack([group.astype(np.float32), self._scores[bins].astype(np.float32)], axis=-1)
        self._obs[index] = obs.reshape(index.size, -1)

    def _oracle(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Return the single env's oracle of every sub-env's batch (``score_batch``'s terms).

        The repayment probabilities, outcomes and groups of the decided batch,
        the Bayes decisions and one-sided loss, and the groups' mean scores
        after the step, their change and the distributions.
        """
        rho = self._rho[self._group, self._bin]
        profit = rho * self._gain - (1.0 - rho) * self._lose
        bayes = profit > 0
        loss = np.where(bayes != (actions == 1), np.abs(profit), 0.0).sum(axis=-1)
        after = self._means()
        return {
            "repay_prob": rho,
            "y": self._y,
            "group": self._group,
            "bayes_action": bayes.astype(np.int8),
            "loss": loss,
            "mean_score": after,
            "score_change": after - self._before,
            "pi": self._pi,
        }

    def _feedback_row(self, value: np.ndarray, i: int) -> np.ndarray:
        """Sub-env ``i``'s row (the single env's feedback arrays are per batch)."""
        return value[i].copy()
