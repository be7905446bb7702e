"""A native vector env of ``OneSidedLending-RL-v0``: ``K`` synthetic worlds stepped in NumPy.

``gym.make_vec("OneSidedLending-RL-v0", num_envs=K)`` builds
:class:`LendingRLVectorEnv` (through
:func:`osfb_gym.wrappers.vector.make_rl_vector_env`, the RL ids' vector
entry point). Sub-env ``i`` is the single RL id (plain view, oracle hidden)
reset with its seed: the same observations, rewards, terminations,
truncations and feedback as Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv`
over ``gym.make("OneSidedLending-RL-v0")`` under the same seeds and actions,
autoresets included (tested). The difference is the cost: one step scores
every world's batch and computes every next batch's ``mu`` with a few array
operations, where the sync env runs ``K`` Python wrapper stacks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from osfb_gym.core.channels import strip_oracle
from osfb_gym.envs import _native_vector as _native
from osfb_gym.envs._native_vector import NativeRLVectorEnv, check_autoreset_mode
from osfb_gym.envs.lending.env import OneSidedLendingEnv
from osfb_gym.envs.lending.vector import _check_actions
from osfb_gym.envs.lending.world import FEATURE_BOUND

__all__ = ["LendingRLVectorEnv", "check_autoreset_mode", "native_supported"]


#: the keywords the native step does not cover, each with the value it covers
SINGLE_ONLY: dict[str, Any] = {"dataset": None, "scenario": "gaussian", "render_mode": None}


def native_supported(kwargs: dict[str, Any]) -> str | None:
    """Return why ``kwargs`` of ``OneSidedLending-v0`` need the sync env, or None if native.

    The native step draws Gaussian applicants; a dataset's stream, the greedy
    trap's applicant ``v`` and renders are the single env's (the vector
    entry point falls back to :class:`~gymnasium.vector.SyncVectorEnv` for them).
    """
    return _native.native_supported(kwargs, SINGLE_ONLY)


class LendingRLVectorEnv(NativeRLVectorEnv):
    """``num_envs`` synthetic ``OneSidedLending-RL-v0`` episodes stepped as arrays.

    It takes :class:`~osfb_gym.envs._native_vector.NativeRLVectorEnv`'s parameters;
    below, what is this env's own.

    Parameters
    ----------
    **kwargs
        Keywords of ``OneSidedLending-v0`` for a synthetic Gaussian world
        (``dataset``, ``scenario="greedy_trap"`` and ``render_mode`` are the
        single env's only: ``gym.make_vec`` gives a sync env for them).

    Notes
    -----
    Each sub-env owns a :class:`~osfb_gym.envs.lending.OneSidedLendingEnv`
    that resets it (world, warm start, first batch: the single env's own
    code) and whose generator draws its applicants, in the single env's
    order; the step draws with those generators, takes each world's score
    ``x . beta*`` with the single env's own product (``np.dot``, one world
    at a time: a batched product may round differently in the last bit) and
    computes the rest for all sub-envs at once, with the same elementwise
    operations. Observations, rewards, feedback, terminations and
    truncations equal the sync env's bit for bit (tested).

    Examples
    --------
    >>> import gymnasium as gym, numpy as np, osfb_gym
    >>> envs = gym.make_vec("OneSidedLending-RL-v0", num_envs=4, horizon=3)
    >>> type(envs).__name__, envs.metadata["autoreset_mode"].value
    ('LendingRLVectorEnv', 'NextStep')
    >>> obs, info = envs.reset(seed=0)
    >>> obs.shape, obs.dtype, sorted(info["feedback"])[:3]
    ((4, 5), dtype('float32'), ['_cutoff', '_link', '_warm_start'])
    >>> obs, reward, terminated, truncated, info = envs.step(np.ones((4, 1), np.int8))
    >>> info["feedback"]["revealed"].ravel().tolist()
    [True, True, True, True]
    """

    env_class = OneSidedLendingEnv
    rl_id = "OneSidedLending-RL-v0"
    single_only = SINGLE_ONLY
    records_episodes = True

    def _setup(self, first: Any) -> None:
        """Read the single env's parameters; make the plain spaces and the arrays."""
        self.batch_size, self.dim, self.cutoff = first.batch_size, first.dim, first.cutoff
        self.horizon = first.horizon
        self._logistic = first.link.name == "logistic"
        self._mean = first.link.mean
        self._noise_std = first.noise_std
        self._one_sided = first.feedback_mode == "one_sided"
        size = self.batch_size * self.dim
        # the plain view of the RL id: the (batch, dim) matrix flattened, float32
        self.single_observation_space = spaces.Box(
            -FEATURE_BOUND, FEATURE_BOUND, shape=(size,), dtype=np.float32
        )
        self.single_action_space = spaces.MultiBinary(self.batch_size)
        shape = (self.num_envs, self.batch_size)
        self._obs = np.zeros((self.num_envs, size), dtype=np.float32)
        self._mu = np.zeros(shape)
        self._y = np.zeros(shape)
        self._beta = np.zeros((self.num_envs, self.dim))
        self._valid = np.ones(shape, dtype=bool)
        self._valid.flags.writeable = False
        # the draw buffers, and each sub-env's views of them (its generator set at reset)
        self._x = np.zeros((self.num_envs, self.batch_size, self.dim))
        self._observed = np.zeros(self._x.shape, dtype=np.float32)
        self._exact = np.zeros(self._x.shape)
        self._noise = np.zeros(shape)
        self._scores = np.zeros(shape)
        self._rows: list[list[Any]] = [
            [None, self._x[i], self._noise[i], self._exact[i], self._beta[i], self._scores[i]]
            for i in range(self.num_envs)
        ]

    # ------------------------------------------------------------------ reset
    def _reset_one(
        self, i: int, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Reset sub-env ``i`` with its single env; copy its state into the arrays."""
        env = self.envs[i]
        obs, info = env.reset(seed=seed, options=options)
        self._obs[i] = obs.reshape(-1)
        self._mu[i] = env._mu
        self._y[i] = env._y
        assert env._world is not None
        self._beta[i] = env._world.beta
        self._rows[i][0] = env.np_random  # a seeded reset makes a new generator
        return strip_oracle(info)

    # ------------------------------------------------------------------ step
    def _advance(self, index: np.ndarray) -> None:
        """Draw the next batch of the sub-envs ``index``, as each single env would.

        Each sub-env's generator fills its rows of the draw buffers in the
        single env's order (the features, then the outcomes' noise: the values
        ``standard_normal((n, d))`` and ``random(n)`` return); its score
        ``x . beta*`` is the single env's own product (``np.dot``, or ``@`` for
        a batch), one world at a time: a batched product (``einsum``) may round
        differently in the last bit, which a linear ``y = mu + noise`` shows.
        The rest is elementwise over every sub-env at once.
        """
        if index.size == 0:
            return
        logistic, rows = self._logistic, self._rows
        for i in index.tolist():
            rng, x, noise, _, _, _ = rows[i]
            rng.standard_normal(out=x)
            if logistic:
                rng.random(out=noise)
            else:
                rng.standard_normal(out=noise)
        x = self._x
        if np.abs(x).max() > FEATURE_BOUND:
            np.clip(x, -FEATURE_BOUND, FEATURE_BOUND, out=x)
        observed = self._observed
        np.copyto(observed, x, casting="same_kind")  # x.astype(float32)
        np.copyto(self._exact, observed)  # and back: exact
        dot = np.dot if self.batch_size == 1 else np.matmul
        for i in index.tolist():
            _, _, _, exact, beta, score = rows[i]
            dot(exact, beta, out=score)
        mu = np.asarray(self._mean(self._scores), dtype=np.float64)
        noise = self._noise
        y = (noise < mu).astype(np.float64) if logistic else mu + self._noise_std * noise
        flat = observed.reshape(self.num_envs, -1)
        if index.size == self.num_envs:
            self._mu, self._y, self._obs = mu, y, flat.copy()
        else:
            self._mu[index], self._y[index], self._obs[index] = mu[index], y[index], flat[index]

    def _raw_obs(self, i: int) -> np.ndarray:
        """Sub-env ``i``'s ``(batch_size, dim)`` matrix, as the single env returns it."""
        return self._obs[i].reshape(self.batch_size, self.dim).copy()

    def _check_actions(self, actions: Any) -> np.ndarray:
        """Return the ``(K, batch_size)`` 0/1 actions as ``int8`` (``MultiBinary`` rows)."""
        return _check_actions(actions, (self.num_envs, self.batch_size))

    def _decide(self, actions: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Score every sub-env's batch as the single env's ``score_batch`` does."""
        approved = actions == 1
        revealed = approved if self._one_sided else np.ones_like(approved)
        y = self._y
        reward = np.where(approved, y - self.cutoff, 0.0).sum(axis=-1)
        feedback = {
            "revealed": revealed,
            "y": np.where(revealed, y, 0.0),
            "valid": self._valid.copy(),
        }
        return reward, feedback

    def _oracle(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Return the single env's oracle of every sub-env's batch (``score_batch``'s operations).

        ``mu``, ``y``, the Bayes decisions ``1{mu > c}`` and the one-sided loss
        ``sum |mu - c| * 1{bayes != approved}`` over each batch (every row is
        valid in a synthetic world).
        """
        mu = self._mu
        above = mu > self.cutoff
        loss = (np.abs(mu - self.cutoff) * (above != (actions == 1))).sum(axis=-1)
        return {"mu": mu, "y": self._y, "bayes_action": above.astype(np.int8), "loss": loss}

    def _feedback_row(self, value: np.ndarray, i: int) -> np.ndarray:
        """Sub-env ``i``'s row (the single env's feedback arrays are per batch)."""
        return value[i].copy()
