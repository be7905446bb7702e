"""The RL ids' vector entry point: a native vector env where a family has one, else sync.

``gym.make_vec("OneSidedLending-RL-v0", num_envs=K)`` calls
:func:`make_rl_vector_env`, which builds the family's native vector env
(:class:`~osfb_gym.envs.lending.rl_vector.LendingRLVectorEnv`,
:class:`~osfb_gym.envs.apple.rl_vector.AppleRLVectorEnv`: the ``K``
worlds stepped as arrays, equal to the sync env under the same seeds) when
it covers the keywords, and Gymnasium's
:class:`~gymnasium.vector.SyncVectorEnv` over :func:`~osfb_gym.wrappers.rl_env`
otherwise (a dataset, the greedy trap, a render mode, another view). Either
way ``autoreset_mode`` picks Gymnasium's ``NEXT_STEP`` (default) or
``SAME_STEP``, the one stable-baselines3 expects
(:class:`osfb_gym.wrappers.sb3.SB3VecEnv`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv

from osfb_gym.core.validation import check_int
from osfb_gym.envs._native_vector import ActionAdapter, NativeRLVectorEnv, check_autoreset_mode
from osfb_gym.envs.apple import rl_vector as apple
from osfb_gym.envs.delayed_impact import rl_vector as impact
from osfb_gym.envs.lending import rl_vector as lending
from osfb_gym.envs.reject import rl_vector as reject
from osfb_gym.envs.services import rl_vector as services
from osfb_gym.wrappers.actions import BinaryAsMultiDiscrete, DiscreteActions
from osfb_gym.wrappers.rl import rl_env
from osfb_gym.wrappers.views import VIEWS, View, make_view

#: base id -> its native vector env of the plain RL view
NATIVE_RL_VECTOR_ENVS: dict[
    str, tuple[Callable[..., NativeRLVectorEnv], Callable[[dict[str, Any]], str | None]]
] = {
    "OneSidedLending-v0": (lending.LendingRLVectorEnv, lending.native_supported),
    "AppleTasting-v0": (apple.AppleRLVectorEnv, apple.native_supported),
    "RejectOption-v0": (reject.RejectRLVectorEnv, reject.native_supported),
    "DelayedImpactLending-v0": (impact.ImpactRLVectorEnv, impact.native_supported),
    "MultiServiceChoice-v0": (services.ServicesRLVectorEnv, services.native_supported),
    "MultiServiceChoice-Retention-v0": (
        services.RetentionRLVectorEnv,
        services.native_supported,
    ),
}
#: rl_env's keywords the native envs take (every view, the action adapters)
_RL_NATIVE = ("view", "discrete_actions", "binary_as_multidiscrete")
#: rl_env's keywords the native envs implement only at these values
_RL_DEFAULTS = {
    "hide_oracle": True,
    "on_episode": None,
}


def native_rl_vector_class(env_id: str, **kwargs: Any) -> Callable[..., NativeRLVectorEnv] | None:
    """Return the native vector env (its class) that makes ``rl_env(env_id, **kwargs)``, or None.

    ``on_episode`` (the training episodes' metrics) is covered by the native
    envs whose step computes the oracle (``records_episodes``: all of ours).
    """
    if env_id not in NATIVE_RL_VECTOR_ENVS:
        return None
    cls, native_supported = NATIVE_RL_VECTOR_ENVS[env_id]
    defaults = dict(_RL_DEFAULTS)
    if getattr(cls, "records_episodes", False):
        defaults.pop("on_episode")
    if any(kwargs.get(key, value) != value for key, value in defaults.items()):
        return None
    env_kwargs = {
        key: value
        for key, value in kwargs.items()
        if key not in _RL_DEFAULTS and key not in _RL_NATIVE
    }
    return cls if native_supported(env_kwargs) is None else None


def rl_adapters(
    view: str = "plain", discrete_actions: bool = False, binary_as_multidiscrete: bool = False
) -> tuple[Callable[[Any], View] | None, ActionAdapter | None]:
    """Return the view factory and the action adapter a native env needs for these keywords.

    What :func:`~osfb_gym.wrappers.rl_env` puts on the single env, as a
    native vector env takes it: the view made from each sub-env's single env
    (None for the plain one) and, from the single env, the action space with
    its table of joint actions (:class:`~osfb_gym.wrappers.DiscreteActions`;
    :class:`~osfb_gym.wrappers.BinaryAsMultiDiscrete` needs no table).

    Examples
    --------
    >>> view, actions = rl_adapters("features", discrete_actions=True)
    >>> import gymnasium as gym, osfb_gym
    >>> space, table = actions(gym.make("RejectOption-v0").unwrapped)
    >>> space, table[5].tolist()
    (Discrete(6), [2, 1])
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")
    for name, flag in (
        ("discrete_actions", discrete_actions),
        ("binary_as_multidiscrete", binary_as_multidiscrete),
    ):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")

    def adapt(env: Any) -> tuple[spaces.Space, np.ndarray | None]:
        space = env.action_space
        if discrete_actions and not isinstance(space, spaces.Discrete):
            adapter = DiscreteActions(env)
            return adapter.action_space, adapter._table
        if binary_as_multidiscrete and isinstance(space, spaces.MultiBinary):
            return BinaryAsMultiDiscrete(env).action_space, None
        return space, None

    factory = None if view == "plain" else partial(make_view, view=view)
    return factory, adapt if discrete_actions or binary_as_multidiscrete else None


def make_rl_vector_env(
    num_envs: int = 1,
    *,
    env_id: str,
    native: bool | None = None,
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    **kwargs: Any,
) -> VectorEnv:
    """Return ``num_envs`` copies of ``rl_env(env_id, **kwargs)`` as one vector env.

    Parameters
    ----------
    num_envs
        Number of sub-envs.
    env_id
        The base id (an RL id's registry entry presets it, with its ``view``).
    native
        None (default): the native vector env when one covers the keywords,
        else a :class:`~gymnasium.vector.SyncVectorEnv`. True: the native
        env, or ValueError. False: the sync env.
    autoreset_mode
        ``"NextStep"`` (Gymnasium's default) or ``"SameStep"``, as an
        :class:`~gymnasium.vector.AutoresetMode` or its value.
    **kwargs
        Keywords of :func:`~osfb_gym.wrappers.rl_env` and of the env.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> type(gym.make_vec("OneSidedLending-RL-v0", num_envs=2)).__name__
    'LendingRLVectorEnv'
    >>> type(gym.make_vec("OneSidedLending-RL-v0", num_envs=2, native=False)).__name__
    'SyncVectorEnv'
    """
    num_envs = check_int(num_envs, "num_envs", minimum=1)
    mode = check_autoreset_mode(autoreset_mode)
    if native is not None and not isinstance(native, bool):
        raise TypeError(f"native must be None, True or False, got {native!r}")
    cls = native_rl_vector_class(env_id, **kwargs) if native is not False else None
    if cls is not None:
        env_kwargs = {
            key: value
            for key, value in kwargs.items()
            if key not in _RL_DEFAULTS and key not in _RL_NATIVE
        }
        view, actions = rl_adapters(**{key: kwargs[key] for key in _RL_NATIVE if key in kwargs})
        if view is None and getattr(cls, "needs_view", False):
            view = partial(make_view, view="plain")  # (its vector encodes a Dict)
        on_episode = kwargs.get("on_episode")
        return cls(
            num_envs,
            autoreset_mode=mode,
            view=view,
            actions=actions,
            **({"on_episode": on_episode} if on_episode is not None else {}),
            **env_kwargs,
        )
    if native:
        raise ValueError(
            f"native=True: no native vector env makes {env_id!r} with {sorted(kwargs)}; "
            f"native ones: {sorted(NATIVE_RL_VECTOR_ENVS)} (synthetic worlds)"
        )
    return SyncVectorEnv(
        [partial(rl_env, env_id, **kwargs) for _ in range(num_envs)], autoreset_mode=mode
    )
