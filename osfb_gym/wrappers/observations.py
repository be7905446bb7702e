"""Observation wrappers that show an RL policy what the setting revealed, and nothing more.

Each wrapper puts one view of :mod:`osfb_gym.wrappers.views` on an env of
one of osfb-gym's families: the observation becomes a ``float32``,
bounded, 1-D vector; actions, rewards and ``info`` pass through unchanged
(the oracle too, so :func:`osfb_gym.runner.run_episode` can score a policy
through the wrapper; put :class:`~osfb_gym.core.channels.HideOracle` inside
for any other loop, as :func:`osfb_gym.wrappers.rl_env` does).

- :class:`VectorObservation` (O0): the env's own observation as a vector.
- :class:`FeedbackObservation` (O2, RL^2-style): plus the previous step's
  decision, revealed mask, revealed outcomes and reward.
- :class:`EstimatorFeatures` (O1): the statistics a principled agent's
  learner computes from the revealed outcomes.

Wrap the family's env itself (its own observation and action spaces);
action wrappers such as :class:`~osfb_gym.wrappers.DiscreteActions` go
outside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

from osfb_gym.core.channels import FEEDBACK, HideOracle, strip_oracle
from osfb_gym.wrappers.views import FeaturesView, FeedbackView, PlainView, View

if TYPE_CHECKING:
    from agents.base import Agent


class _Sentinel:
    """A named marker that unpickles as itself (a view compares it by identity)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name  # pickled by reference: the module's own object on loading


#: what the layers below a view may be for it to step the env itself (see ``_direct_env``)
_NOT_YET, _NEVER = _Sentinel("_NOT_YET"), _Sentinel("_NEVER")


def _direct_env(env: gym.Env) -> tuple[Any, bool]:
    """Return ``(raw env, hide the oracle)`` if stepping ``env`` is stepping the raw env.

    True of a stack of Gymnasium's ``OrderEnforcing`` once it has seen a
    reset, its ``PassiveEnvChecker`` once it has checked the first step and
    the data reuse of the second (it checks nothing after that), and
    :class:`~osfb_gym.core.channels.HideOracle` (which only strips the
    oracle: the caller then strips it), down to the unwrapped env; these are
    the layers ``gym.make`` and :func:`~osfb_gym.wrappers.rl_env` put under
    a view. Returns ``(_NOT_YET, False)`` while a checker has work left and
    ``(_NEVER, False)`` for any other wrapper (exact classes: a subclass may
    do more), whose step is then always called.
    """
    hide = False
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        kind = type(layer)
        if kind is HideOracle:
            hide = True
        elif kind is OrderEnforcing:
            if not getattr(layer, "_has_reset", False):
                return _NOT_YET, False
        elif kind is PassiveEnvChecker:
            # (an attribute a later Gymnasium renames reads False: every step goes through)
            spent = getattr(layer, "checked_step", False)
            if not (spent and getattr(layer, "checked_data_reuse", False)):
                return _NOT_YET, False
        else:
            return _NEVER, False
        layer = layer.env
    return layer, hide


class _ViewObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Show ``view.encode`` of each observation; feed the view the agent's channels.

    Every step goes through the wrappers below the view until they have done
    their one-time work (Gymnasium's env checker checks the first two steps
    only, its order check the first reset); from then on the view steps (and
    resets) the unwrapped env itself and strips the oracle if a ``HideOracle`` was among
    them: the same results with three fewer Python layers a step, which is
    what a step of these envs mostly costs inside RL training. With a
    ``HideOracle`` among them it calls the env's ``step_without_oracle``
    (:meth:`osfb_gym.core.env.FeedbackEnv.step_without_oracle`): what
    ``HideOracle`` would return, without the work of an oracle that it
    would drop.
    """

    def __init__(self, env: gym.Env, view: View, **recorded: Any) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, **recorded)
        gym.Wrapper.__init__(self, env)
        self._view = view
        # a view that takes in nothing (the plain one) is not called at each step
        self._updates = type(view).update is not View.update
        self.observation_space = view.observation_space
        self._last: Any = None
        self._direct: Any = _NOT_YET
        self._hide = False
        # where the env writes the view's vector itself (step_encoded), on the direct path
        self._encoded: Any = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the env and the view (with the reset feedback)."""
        direct = self._direct
        if direct is _NOT_YET or direct is _NEVER:
            obs, info = self.env.reset(seed=seed, options=options)
        else:
            # the layers below only pass a reset on once theirs is checked (and
            # HideOracle strips the oracle): as the step, the env's own reset
            obs, info = direct.reset(seed=seed, options=options)
            if self._hide:
                info = strip_oracle(info)
        self._view.reset(info.get(FEEDBACK) or {}, seed=seed)
        self._last = obs
        return self._view.encode(obs), info

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env; the view takes in the feedback, then encodes the next observation."""
        if self._last is None:
            raise RuntimeError("call reset() before step()")
        direct = self._direct
        if direct is _NOT_YET or direct is _NEVER:
            obs, reward, terminated, truncated, info = self.env.step(action)
            if direct is _NOT_YET:
                self._direct, self._hide = _direct_env(self.env)
                if self._hide and not hasattr(self._direct, "step_without_oracle"):
                    self._direct = _NEVER  # not an osfb-gym env: its stack is stepped
                self._encoded = self._layout()
        elif self._hide:
            if self._encoded is not None:
                stepped = direct.step_encoded(action, self._encoded)
                if stepped is not None:
                    # the env wrote the vector: a plain view takes nothing in, and
                    # the vector stands for the observation it encodes
                    self._last = stepped[0]
                    return stepped  # type: ignore[no-any-return]
            # the oracle would be stripped: the env need not compute it
            obs, reward, terminated, truncated, info = direct.step_without_oracle(action)
        else:
            obs, reward, terminated, truncated, info = direct.step(action)
        if self._updates:
            self._view.update(self._last, action, float(reward), info[FEEDBACK])
        self._last = obs
        return self._view.encode(obs), reward, terminated, truncated, info

    def _layout(self) -> Any:
        """Return the env's layout for writing the view's vector itself, or None.

        Only on the direct path under ``HideOracle``, for a view that takes
        nothing in and whose vector is its observation's encoding (the plain
        view of a ``Dict`` that :func:`~osfb_gym.wrappers._fast.writers.dict_plan`
        describes), with an env that offers it
        (:meth:`MultiServiceChoiceEnv.step_encoded
        <osfb_gym.envs.services.env.MultiServiceChoiceEnv.step_encoded>`):
        its step then writes the vector in its own loop, and no observation
        ``Dict`` is made to be encoded.
        """
        plan = getattr(self._view, "plan", None)
        direct = self._direct
        if plan is None or self._updates or not self._hide or direct is _NEVER:
            return None
        if not hasattr(direct, "view_layout"):
            return None
        return direct.view_layout(plan)


class VectorObservation(_ViewObservation):
    """The env's own observation as a ``float32``, bounded, 1-D vector (view ``"plain"``).

    A matrix is flattened, a ``Dict`` concatenated, discrete entries coded
    as ``value / (n - 1)``, unbounded ones squashed (see
    :func:`osfb_gym.wrappers.views.encode_space`). Lending, apple tasting
    and reject option keep their values exactly; MultiServiceChoice's
    ``(losses, choices, n_services, groups)`` become ``3 n + 1`` numbers
    (``FlattenObservation`` would give ``n (k + G + 2) + k + 1`` one-hot
    ``float64`` entries, 7,011 by default).

    Examples
    --------
    >>> import osfb_gym
    >>> env = VectorObservation(gym.make("MultiServiceChoice-v0", n_users=50, n_services=3))
    >>> env.observation_space
    Box(0.0, 1.0, (151,), float32)
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, PlainView(env))


class FeedbackObservation(_ViewObservation):
    """Append what the previous step revealed to each observation (view ``"feedback"``, O2).

    After the plain vector of :class:`VectorObservation` comes the previous
    decision, the mask of revealed outcomes, the revealed outcomes (0 where
    hidden) and the reward, zeros at reset: the ``(a, r)`` of RL^2, so a
    recurrent policy can learn within an episode from the sequence. The
    block of each family is tabled in
    :class:`~osfb_gym.wrappers.views.FeedbackView`.

    Examples
    --------
    >>> import osfb_gym
    >>> env = FeedbackObservation(gym.make("AppleTasting-v0", dim=3, horizon=5))
    >>> obs, _ = env.reset(seed=0)
    >>> obs.shape, obs[3:].tolist()   # x, then a, revealed, y, reward: zeros at reset
    ((7,), [0.0, 0.0, 0.0, 0.0])
    >>> obs, reward, *_ = env.step(1)  # taste: the label and the reward come back
    >>> obs[3:5].tolist(), obs[6] == reward
    ([1.0, 1.0], np.True_)
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, FeedbackView(env))


class EstimatorFeatures(_ViewObservation):
    """Show the statistics a principled agent's learner computes (view ``"features"``, O1).

    The learner (``learner``, default the family's reference learner) is
    cloned at each reset, reset with the reset feedback and updated with
    every step's feedback, exactly as the runner would feed it; the
    observation is what it has learned, evaluated on the current context.
    So a memoryless policy can in principle act as the learner acts, in a
    world drawn afresh every episode. The features of each family are
    listed in :class:`~osfb_gym.wrappers.views.FeaturesView`.

    Parameters
    ----------
    env
        An env of one of osfb-gym's families.
    learner
        An unfitted agent of the env's family whose state the features
        read: a :class:`~agents.lending.CutoffAgent` (default
        :class:`~agents.lending.Greedy`), a
        :class:`~agents.apple.base.LinearLearner` (default
        :class:`~agents.apple.MarginPerceptron`) or a
        :class:`~agents.reject.base.RejectLearner` (default
        :class:`~agents.reject.DSOL`); None for MultiServiceChoice.

    Attributes
    ----------
    learner_
        The episode's fitted clone of ``learner`` (None for services):
        learned from the revealed outcomes only.

    Examples
    --------
    >>> import osfb_gym
    >>> env = EstimatorFeatures(gym.make("OneSidedLending-v0", batch_size=2, horizon=50))
    >>> env.observation_space.shape   # (score, width) per applicant, n / (N T), t / T
    (6,)
    >>> obs, _ = env.reset(seed=0)
    >>> obs, *_ = env.step([1, 1])
    >>> obs[-2:].tolist()   # 2 outcomes of 100 decisions revealed, 1 step of 50
    [0.019999999552965164, 0.019999999552965164]
    """

    def __init__(self, env: gym.Env, learner: Agent | None = None) -> None:
        super().__init__(env, FeaturesView(env, learner), learner=learner)

    @property
    def learner(self) -> Agent | None:
        """The unfitted learner cloned at each reset."""
        view = self._view
        assert isinstance(view, FeaturesView)
        return view.learner  # type: ignore[no-any-return]

    @property
    def learner_(self) -> Agent | None:
        """The episode's fitted learner (None before reset and for services)."""
        view = self._view
        assert isinstance(view, FeaturesView)
        return view.learner_  # type: ignore[no-any-return]
