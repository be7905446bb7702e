"""RL-ready environments: the oracle hidden, a ``float32`` vector observation, adapted actions.

:func:`rl_env` makes a registered id ready for any RL library; it is also
the entry point of the RL-ready ids registered in :mod:`envs_registry`
(``OneSidedLending-RL-v0``, ``OneSidedLending-RL-Features-v0``,
``OneSidedLending-RL-Feedback-v0`` and the same for every family, with
``-Discrete`` twins where the actions are not ``Discrete``:
``OneSidedLending-RL-Discrete-v0``), so ``gym.make(name)`` gives the same
env to CleanRL, stable-baselines3 or any library that takes an id.
:func:`apply_view` puts a view on an env without hiding the oracle: what a
trained policy is scored through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from osfb_gym.core.channels import HideOracle
from osfb_gym.core.validation import check_env_kwargs
from osfb_gym.wrappers.actions import BinaryAsMultiDiscrete, DiscreteActions
from osfb_gym.wrappers.observations import (
    EstimatorFeatures,
    FeedbackObservation,
    VectorObservation,
)
from osfb_gym.wrappers.views import VIEWS


def needs_flattening(space: gym.Space) -> bool:
    """Whether an observation space must be flattened for an MLP policy.

    ``Dict`` spaces (stable-baselines3 would need ``MultiInputPolicy``) and
    Boxes of more than one dimension (lending's ``(batch, features)``
    matrix, which SB3's checker warns about) are flattened.
    """
    if isinstance(space, spaces.Dict):
        return True
    return isinstance(space, spaces.Box) and len(space.shape) > 1


def apply_view(env: gym.Env, view: str = "plain", **options: Any) -> gym.Env:
    """Wrap ``env`` in the observation wrapper of ``view`` (one of ``VIEWS``).

    ``"plain"``: :class:`VectorObservation`; ``"feedback"``:
    :class:`FeedbackObservation`; ``"features"``: :class:`EstimatorFeatures`
    (``options``: its ``learner``). The oracle is left in ``info``: score a
    policy trained on ``rl_env(..., view=view)`` by running it on
    ``apply_view(gym.make(env_id), view)`` with :func:`osfb_gym.runner.run_episode`.

    Examples
    --------
    >>> import osfb_gym
    >>> env = apply_view(gym.make("RejectOption-v0", horizon=5), "features")
    >>> type(env).__name__, env.observation_space.shape
    ('EstimatorFeatures', (4,))
    """
    if view == "features":
        return EstimatorFeatures(env, **options)
    if options:
        raise TypeError(f"view {view!r} takes no options, got {sorted(options)}")
    if view == "plain":
        return VectorObservation(env)
    if view == "feedback":
        return FeedbackObservation(env)
    raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")


#: the entry point of the RL-ready ids (envs_registry)
RL_ENTRY_POINT = "osfb_gym.wrappers:rl_env"


def rl_preset(env_id: str) -> tuple[str, dict[str, Any]]:
    """Return ``(base id, preset)``: an RL-ready id's env and the :func:`rl_env` keywords it fixes.

    ``preset`` holds the id's ``view`` (and ``discrete_actions`` for a
    ``-Discrete`` twin); a base id is its own base, with no preset. Scoring a
    policy trained on an RL-ready id means playing the base id through that view
    (:func:`apply_view`), which keeps the oracle the evaluator reads.

    Examples
    --------
    >>> import osfb_gym
    >>> rl_preset("RejectOption-RL-Feedback-Discrete-v0")
    ('RejectOption-v0', {'view': 'feedback', 'discrete_actions': True})
    >>> rl_preset("RejectOption-v0")
    ('RejectOption-v0', {})
    """
    spec = gym.spec(env_id)  # an unknown id raises Gymnasium's own error here
    if spec.entry_point != RL_ENTRY_POINT:
        return env_id, {}
    preset = dict(spec.kwargs)
    return str(preset.pop("env_id")), preset


def rl_env(
    env_id: str,
    *,
    view: str = "plain",
    discrete_actions: bool = False,
    binary_as_multidiscrete: bool = False,
    hide_oracle: bool = True,
    on_episode: Callable[[dict[str, float]], None] | None = None,
    **kwargs: Any,
) -> gym.Env:
    """Make ``env_id`` ready for an RL library: ``float32`` 1-D observations, no oracle.

    The RL-ready ids (``<Family>-RL-v0``, ``<Family>-RL-Features-v0``,
    ``<Family>-RL-Feedback-v0``) are this function with ``env_id`` and
    ``view`` preset.

    Parameters
    ----------
    env_id
        A registered osfb-gym id.
    view
        What the policy sees (:func:`apply_view`): ``"plain"`` the env's
        observation, ``"feedback"`` plus the previous step's revealed
        feedback (O2), ``"features"`` the principled learner's statistics
        (O1). Every view is a ``float32``, bounded, 1-D Box.
    discrete_actions
        Wrap in :class:`DiscreteActions` (DQN needs it) unless the action
        space is ``Discrete`` already.
    binary_as_multidiscrete
        Wrap a ``MultiBinary`` action space in
        :class:`BinaryAsMultiDiscrete` (RecurrentPPO needs it).
    hide_oracle
        Wrap in :class:`~osfb_gym.core.channels.HideOracle` (training);
        scoring keeps the oracle for the evaluator. With it, once
        Gymnasium's checkers are spent, the view steps the env by its
        ``step_without_oracle``
        (:meth:`~osfb_gym.core.env.FeedbackEnv.step_without_oracle`): the
        same observations, rewards and feedback, and no work spent on an
        oracle that would be dropped (the services' group averages,
        fairness and services placed). The services' reference optimum is
        never the env's work (the metrics solve it, when asked).
    on_episode
        Hide the oracle with :class:`osfb_gym.runner.EpisodeRecorder`
        instead, which hands each finished episode's metrics (the family's,
        as the runner computes them) to this callback: the regret of the
        training episodes, for the evaluator, never for the policy.
    **kwargs
        Arguments of the env.

    Examples
    --------
    >>> import osfb_gym
    >>> env = rl_env("OneSidedLending-v0", batch_size=4, horizon=10)
    >>> env.observation_space.shape, env.observation_space.dtype, env.action_space
    ((20,), dtype('float32'), MultiBinary(4))
    >>> env = gym.make("MultiServiceChoice-RL-Features-v0", n_users=20, n_services=3)
    >>> env.observation_space.shape, "oracle" in env.reset(seed=0)[1]
    ((141,), False)
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")
    check_env_kwargs(env_id, kwargs)
    env = gym.make(env_id, **kwargs)
    if on_episode is not None:
        if not hide_oracle:
            raise ValueError("on_episode needs hide_oracle=True (the recorder hides the oracle)")
        from osfb_gym.runner import EpisodeRecorder

        env = EpisodeRecorder(env, on_episode)
    elif hide_oracle:
        env = HideOracle(env)
    env = apply_view(env, view)
    if discrete_actions and not isinstance(env.action_space, spaces.Discrete):
        env = DiscreteActions(env)
    elif binary_as_multidiscrete and isinstance(env.action_space, spaces.MultiBinary):
        env = BinaryAsMultiDiscrete(env)
    return env
