"""A Gymnasium vector env as a stable-baselines3 ``VecEnv``: :class:`SB3VecEnv`.

stable-baselines3 trains on its own ``VecEnv`` API, not Gymnasium's
``VectorEnv`` (DLR-RM/stable-baselines3#1745 asks for an adapter; none is
built in). :class:`SB3VecEnv` is that adapter, for a vector env with
``AutoresetMode.SAME_STEP``, whose semantics are SB3's own: the step that
ends an episode returns the next episode's first observation, the last one
goes to ``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]``
says whether the end was a truncation (PPO and A2C bootstrap there), and the
reset's info goes to ``reset_infos[i]``. So::

    import gymnasium as gym
    from stable_baselines3 import PPO

    import osfb_gym
    from osfb_gym.wrappers.sb3 import SB3VecEnv

    envs = gym.make_vec("OneSidedLending-RL-v0", num_envs=16, autoreset_mode="SameStep")
    PPO("MlpPolicy", SB3VecEnv(envs), n_steps=128).learn(100_000)

trains on the native vector env exactly as on ``DummyVecEnv`` over sixteen
``gym.make("OneSidedLending-RL-v0")`` (the same observations, rewards,
dones and infos under the same seeds: tested), in a fraction of the time.

:func:`make_sb3_vec_env` picks it for you: the native vector env behind
this adapter where an RL id has one, SB3's ``DummyVecEnv`` otherwise.

This module imports stable-baselines3 (the ``rl`` extra); the rest of
:mod:`osfb_gym.wrappers` does not.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from osfb_gym.core.optional import require
from osfb_gym.core.validation import check_int

require("stable_baselines3", "osfb_gym.wrappers.sb3")

from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # noqa: E402
from stable_baselines3.common.vec_env.base_vec_env import (  # noqa: E402
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)


def unbatch_infos(infos: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Split a Gymnasium vector info (arrays and their ``_key`` masks) into per-env dicts.

    Sub-env ``i`` gets ``key: value[i]`` for every key whose mask is True at
    ``i`` (every key without a mask), nested dicts split the same way.

    Examples
    --------
    >>> infos = {"a": np.array([1, 2]), "_a": np.array([True, False]), "b": {"c": np.zeros(2)}}
    >>> unbatch_infos(infos, 2)
    [{'a': np.int64(1), 'b': {'c': np.float64(0.0)}}, {'b': {'c': np.float64(0.0)}}]
    """
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in infos.items():
        if key.startswith("_") and key[1:] in infos:
            continue
        mask = infos.get(f"_{key}")
        # list(array): the rows, as array[i] gives them, in one call
        rows = unbatch_infos(value, num_envs) if isinstance(value, dict) else list(value)
        if mask is None or mask.all():
            for info, row in zip(out, rows, strict=True):
                info[key] = row
        else:
            for i in np.flatnonzero(mask).tolist():
                out[i][key] = rows[i]
    return out


class SB3VecEnv(VecEnv):
    """A Gymnasium ``VectorEnv`` with ``SAME_STEP`` autoreset, as a stable-baselines3 ``VecEnv``.

    Parameters
    ----------
    env
        A Gymnasium vector env whose ``metadata["autoreset_mode"]`` is
        ``AutoresetMode.SAME_STEP`` (``gym.make_vec(id, num_envs=K,
        autoreset_mode="SameStep")`` for the native ones,
        ``vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}`` for
        Gymnasium's sync and async envs). ``NEXT_STEP`` cannot be adapted
        without stepping every sub-env again, so it raises ``ValueError``.

    Notes
    -----
    ``seed(s)`` and ``set_options`` apply at the next ``reset``, as in
    SB3's own vector envs (sub-env ``i`` is seeded ``s + i``); the options
    must be the same for every sub-env (a Gymnasium vector env takes one
    dict). ``get_attr``, ``set_attr``, ``env_method`` and ``env_is_wrapped``
    reach the sub-envs of a vector env that lists them in ``envs`` (the sync
    env's wrapped envs; the native env's base envs); otherwise the vector
    env itself answers for every index.
    """

    def __init__(self, env: VectorEnv) -> None:
        if not isinstance(env, VectorEnv):
            raise TypeError(f"env must be a gymnasium VectorEnv, got {type(env).__name__}")
        mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                "env must autoreset in the same step (AutoresetMode.SAME_STEP), as "
                f"stable-baselines3 expects; got autoreset_mode={mode!r}: make it with "
                "gym.make_vec(..., autoreset_mode='SameStep') (a native env) or "
                "vector_kwargs={'autoreset_mode': AutoresetMode.SAME_STEP}"
            )
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ stepping
    def reset(self) -> VecEnvObs:
        """Reset every sub-env with the pending seeds and options; return the observations."""
        seeds: Sequence[int | None] | None = self._seeds
        if all(seed is None for seed in self._seeds):
            seeds = None
        options = self._options[0]
        if any(opt != options for opt in self._options):
            raise ValueError(
                "set_options: a gymnasium vector env takes one options dict for every "
                f"sub-env, got different ones: {self._options!r}"
            )
        # a Gymnasium vector env takes a list of seeds (typed as one int)
        obs, infos = self.env.reset(seed=seeds, options=options or None)  # type: ignore[arg-type]
        self.reset_infos = unbatch_infos(infos, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step the vector env; SB3's dones, terminal observations and truncation flags."""
        if self._actions is None:
            raise RuntimeError("step_async must be called before step_wait")
        obs, reward, terminated, truncated, infos = self.env.step(self._actions)
        self._actions = None
        dones = np.logical_or(terminated, truncated)
        count = self.num_envs
        if "final_obs" not in infos:
            out = unbatch_infos(infos, count)
        else:
            # the ending sub-envs: info is the step's (final_info), the reset's goes aside
            final_keys = ("final_obs", "_final_obs", "final_info", "_final_info")
            rest = {key: value for key, value in infos.items() if key not in final_keys}
            out = unbatch_infos(rest, count)
            finals = unbatch_infos(infos.get("final_info", {}), count)
            for i in np.flatnonzero(infos["_final_obs"]).tolist():
                self.reset_infos[i] = out[i]
                out[i] = finals[i]
                out[i]["terminal_observation"] = infos["final_obs"][i]
        for info, cut in zip(out, (truncated & ~terminated).tolist(), strict=True):
            info["TimeLimit.truncated"] = cut
        return obs, np.asarray(reward, dtype=np.float32), dones, out

    def close(self) -> None:
        """Close the vector env."""
        self.env.close()

    # ------------------------------------------------------------------ sub-envs
    def _sub_envs(self, indices: VecEnvIndices) -> list[Any] | None:
        envs = getattr(self.env, "envs", None)
        if envs is None:
            return None
        return [envs[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Return ``attr_name`` of each sub-env (of the vector env when it lists none)."""
        envs = self._sub_envs(indices)
        if envs is None:
            return [getattr(self.env, attr_name) for _ in self._get_indices(indices)]
        return [
            env.get_wrapper_attr(attr_name)
            if isinstance(env, gym.Wrapper)
            else getattr(env, attr_name)
            for env in envs
        ]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set ``attr_name`` on each sub-env (on the vector env when it lists none)."""
        envs = self._sub_envs(indices)
        for target in [self.env] if envs is None else envs:
            setattr(target, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call ``method_name`` of each sub-env (of the vector env, once, when it lists none)."""
        envs = self._sub_envs(indices)
        if envs is None:
            return [getattr(self.env, method_name)(*method_args, **method_kwargs)]
        return [getattr(env, method_name)(*method_args, **method_kwargs) for env in envs]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Whether each sub-env is wrapped in ``wrapper_class`` (False for bare envs)."""
        from stable_baselines3.common.env_util import is_wrapped

        envs = self._sub_envs(indices)
        if envs is None:
            return [False for _ in self._get_indices(indices)]
        return [isinstance(env, gym.Wrapper) and is_wrapped(env, wrapper_class) for env in envs]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """No images: the vector envs adapted here are stepped without rendering."""
        return [None for _ in range(self.num_envs)]


def _rl_arguments(env_id: str, kwargs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Return ``(base id, rl_env keywords)`` of ``env_id``: a base id, or an RL id's preset.

    A keyword that contradicts the RL id's preset (``view="plain"`` with a
    ``-Feedback`` id) is refused: it would silently train on another env than
    the one named.
    """
    from osfb_gym.wrappers.rl import rl_preset

    base, preset = rl_preset(env_id)
    clash = {k: v for k, v in kwargs.items() if k in preset and v != preset[k]}
    if clash:
        given = ", ".join(f"{k}={v!r}" for k, v in clash.items())
        fixed = ", ".join(f"{k}={preset[k]!r}" for k in clash)
        raise ValueError(
            f"env_id {env_id!r} is {fixed} already, which {given} contradicts: pass that or "
            f"drop the argument, or choose it on the base id {base!r}"
        )
    return base, {**preset, **kwargs}


def make_sb3_vec_env(
    env_id: str,
    n_envs: int = 1,
    seed: int | None = 0,
    *,
    native: bool | None = None,
    vec_env_cls: type[DummyVecEnv] | type[SubprocVecEnv] | None = None,
    **kwargs: Any,
) -> VecEnv:
    """Return ``n_envs`` copies of an RL-ready env as a stable-baselines3 ``VecEnv``.

    Where the family has a native vector env that covers the arguments
    (:func:`osfb_gym.wrappers.vector.native_rl_vector_class`) and
    ``n_envs > 1``, the native env (``SAME_STEP`` autoreset) in
    :class:`SB3VecEnv` and SB3's ``VecMonitor``; otherwise SB3's
    ``make_vec_env`` over :func:`~osfb_gym.wrappers.rl_env`. Both give the
    same observations, rewards, dones, infos and ``on_episode`` metrics, in
    the same order, under the same seed (tested).

    Parameters
    ----------
    env_id
        A base id (``"OneSidedLending-v0"``, as
        :func:`osfb_gym.bench.rl.train` takes) or an RL-ready id
        (``"OneSidedLending-RL-Features-v0"``: its view and action preset).
    n_envs
        Number of envs.
    seed
        Sub-env ``i`` resets with ``seed + i`` (None: unseeded).
    native
        None (default): native where it applies; False: ``make_vec_env``
        always; True: the native env or ``ValueError``.
    vec_env_cls
        The fallback's class (default ``DummyVecEnv``); given, it is used
        unless ``native=True``.
    **kwargs
        Keywords of :func:`~osfb_gym.wrappers.rl_env` (``view``,
        ``discrete_actions``, ``binary_as_multidiscrete``, ``on_episode``)
        and of the env.

    Examples
    --------
    >>> import osfb_gym
    >>> venv = make_sb3_vec_env("OneSidedLending-RL-v0", n_envs=4, seed=0, horizon=10)
    >>> type(venv).__name__, type(venv.venv).__name__, venv.num_envs
    ('VecMonitor', 'SB3VecEnv', 4)
    >>> venv = make_sb3_vec_env("OneSidedLending-v0", n_envs=2, scenario="greedy_trap", dim=3)
    >>> type(venv).__name__
    'DummyVecEnv'
    """
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecMonitor

    from osfb_gym.wrappers.rl import rl_env
    from osfb_gym.wrappers.vector import make_rl_vector_env, native_rl_vector_class

    n_envs = check_int(n_envs, "n_envs", minimum=1)
    if seed is not None:
        seed = check_int(seed, "seed", minimum=0)
    if native is not None and not isinstance(native, bool):
        raise TypeError(f"native must be None, True or False, got {native!r}")
    base, rl_kwargs = _rl_arguments(env_id, kwargs)
    use_native = native is True or (
        native is None
        and vec_env_cls is None
        and n_envs > 1
        and native_rl_vector_class(base, **rl_kwargs) is not None
    )
    if use_native:
        # make_rl_vector_env(native=True) names what the native env does not cover
        envs = make_rl_vector_env(
            n_envs, env_id=base, native=True, autoreset_mode="SameStep", **rl_kwargs
        )
        venv = VecMonitor(SB3VecEnv(envs))
        venv.seed(seed)
        return venv
    make = functools.partial(rl_env, base, **rl_kwargs)
    make().close()  # the env's own message on a bad argument, before SB3 wraps it
    return make_vec_env(make, n_envs=n_envs, seed=seed, vec_env_cls=vec_env_cls or DummyVecEnv)
