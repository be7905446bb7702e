"""What an RL policy is shown: observation views built from the agent's channels only.

A *view* turns what an agent may read (the observation, its own action,
the reward and ``info["feedback"]``) into one ``float32``, bounded, 1-D
vector, so any RL library's MLP or LSTM policy can take it:

- ``"plain"`` (O0): the env's own observation as a vector (:func:`encode`);
- ``"feedback"`` (O2, RL^2-style): the plain vector plus what the last
  step revealed: the previous decision, the mask of revealed outcomes, the
  revealed outcomes (0 where hidden) and the reward; zeros at reset. For a
  recurrent policy, which can learn from the sequence;
- ``"features"`` (O1): the sufficient statistics a principled agent keeps,
  computed by that agent's own learner from the revealed outcomes alone
  (lending: ``mu(x . beta_hat) - c`` and the width ``sqrt(x^T A^-1 x)`` of
  each applicant, ``n / (N T)`` and ``t / T``), so a memoryless policy can
  in principle do what the learner does in a world resampled every episode.

A view reads nothing else: no oracle, no private state of the env, only
public task terms (the cutoff, the horizon, the costs) that the env also
announces. :mod:`osfb_gym.wrappers.observations` puts a view on an env.

Quantities without a natural bound (a linear link's outcomes, the services'
losses) go through :func:`squash`, ``v / (1 + |v|)``: bounded in (-1, 1),
order-preserving and invertible, so no information is lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from osfb_gym.core.family import FAMILIES, load

# the encoding of spaces is the contract's (agents read it too); re-exported here
from osfb_gym.core.spaces import UNBOUNDED as UNBOUNDED
from osfb_gym.core.spaces import _unbounded as _unbounded
from osfb_gym.core.spaces import encode as encode
from osfb_gym.core.spaces import encode_space as encode_space
from osfb_gym.core.spaces import make_encoder as make_encoder
from osfb_gym.core.spaces import squash as squash
from osfb_gym.core.views import FamilyViews

if TYPE_CHECKING:
    from agents.base import Agent

VIEWS = ("plain", "feedback", "features")


def family_of(env: gym.Env) -> str:
    """Return the family of ``env``: its name in ``osfb_gym.core.family.FAMILIES``.

    The registry's entry whose class ``env.unwrapped`` is an instance of names
    it. Raises ``TypeError`` for an env that is not one of osfb-gym's families.
    """
    cls = type(env.unwrapped)
    family = _FAMILY_OF_CLASS.get(cls)
    if family is None:
        from envs_registry import ENVS

        # the entry points' classes: imported here, so agents.rl reads encode()
        # without pulling in the environments
        family = next(
            (entry.family for entry in ENVS if issubclass(cls, load(entry.entry_point))), None
        )
        if family is not None:  # (a class found once keeps its family)
            _FAMILY_OF_CLASS[cls] = family
    if family is None:
        known = ", ".join(FAMILIES)
        raise TypeError(
            f"observation views are defined for osfb-gym's families ({known}), "
            f"got env {env.unwrapped!r}"
        )
    return family


_FAMILY_OF_CLASS: dict[type, str] = {}


def family_views(env: gym.Env, observation_space: Any) -> FamilyViews:
    """Return the family's :class:`~osfb_gym.core.views.FamilyViews` for ``env``.

    Its :class:`~osfb_gym.core.family.Family` record names the class
    (``views``); a ``TypeError`` says so where the family has none.
    """
    family = FAMILIES[family_of(env)]
    if family.views is None:
        raise TypeError(
            f"the {family.name} family has no feedback or features views (its Family "
            "record's views is None): use view='plain'"
        )
    return load(family.views)(env.unwrapped, observation_space)


# --------------------------------------------------------------------------- views
class View:
    """A stateful map from the agent's channels to a ``float32`` vector.

    The loop mirrors an agent's: :meth:`reset` with the reset feedback,
    :meth:`update` with each step's ``(observation, action, reward,
    feedback)``, and :meth:`encode` of each new observation.

    Attributes
    ----------
    observation_space
        The ``float32``, bounded, 1-D Box of :meth:`encode`'s output.
    """

    observation_space: spaces.Box

    def __init__(self, env: gym.Env) -> None:
        self.source_space: Any = env.observation_space
        self._plain = encode_space(env.observation_space)
        from osfb_gym.wrappers._fast.writers import make_writer  # (it reads this module)

        self._plain_size, self._write_plain = make_writer(env.observation_space)

    def __getstate__(self) -> dict[str, Any]:
        """Return the state to pickle: all but the writer, which is rebuilt on unpickling.

        The writer is a closure over the space's constants (a plain function
        call on every step, the fastest form; a closure does not pickle), so
        it is left out here and made again from ``source_space`` by
        :meth:`__setstate__`: the same writer, so the same bits.
        """
        state = self.__dict__.copy()
        del state["_write_plain"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled view, remaking its writer from ``source_space``."""
        self.__dict__.update(state)
        from osfb_gym.wrappers._fast.writers import make_writer

        self._plain_size, self._write_plain = make_writer(self.source_space)

    def _finish(self, low: Any, high: Any) -> None:
        """Set the output space to the Box ``[low, high]``."""
        low = np.asarray(low, dtype=np.float64).ravel()
        high = np.asarray(high, dtype=np.float64).ravel()
        self.observation_space = spaces.Box(
            low.astype(np.float32), high.astype(np.float32), dtype=np.float32
        )

    def reset(self, feedback: dict[str, Any], *, seed: int | None = None) -> None:
        """Start an episode from the reset ``info["feedback"]``."""

    def update(
        self, observation: Any, action: Any, reward: float, feedback: dict[str, Any]
    ) -> None:
        """Take in one step: the observation acted on, the action, reward and feedback."""

    def encode(self, observation: Any) -> np.ndarray:
        """Return the vector shown with ``observation``."""
        raise NotImplementedError


class PlainView(View):
    """The env's observation as a vector (:func:`encode`); nothing else."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = self._plain
        space = env.observation_space
        # a bounded Box's encoding is its values as float32: a float32 or float64
        # array is cast once (float32 -> float64 -> float32 is exact; float64 ->
        # float32 is the cast encode ends with), not three times
        self._cast_only = isinstance(space, spaces.Box) and not _unbounded(space)
        from osfb_gym.wrappers._fast.writers import dict_plan

        #: how the vector encodes a Dict of vectors (None for other spaces): an env may
        #: write it itself (osfb_gym.wrappers.observations' direct path)
        self.plan = dict_plan(space)

    def encode(self, observation: Any) -> np.ndarray:
        """Return :func:`encode` of ``observation``."""
        if (
            self._cast_only
            and type(observation) is np.ndarray
            and observation.dtype.char in "fd"  # float32, float64
        ):
            return observation.reshape(-1).astype(np.float32)
        out = np.empty(self._plain_size, dtype=np.float32)
        self._write_plain(observation, out)
        return out


class FeedbackView(View):
    """The plain vector followed by what the previous step revealed (zeros at reset).

    The block appended, per family (``N`` applicants a step, ``n`` users;
    each family's package computes its own, in its ``views`` module, a
    :class:`~osfb_gym.core.views.FamilyViews` its Family record names):

    | family   | previous decision    | revealed  | revealed outcome, 0 hidden | reward      |
    |----------|----------------------|-----------|----------------------------|-------------|
    | lending  | ``a`` (N)            | mask (N)  | ``y`` (N)                  | ``r / N``   |
    | apple    | ``a``                | 0/1       | ``y`` in {0, 1}            | ``r``       |
    | reject   | one-hot (3), query   | 0/1       | ``y`` in {-1, +1}          | ``r`` (*)   |
    | services | one-hot user (n)     | (same)    | (losses: in the obs)       | ``squash(r / n)`` |
    | delayed  | ``a`` (N)            | mask (N)  | repaid (N), 0 hidden       | ``r / N``   |

    (*) before the settlement. For services the revealed mask is the
    acquired user, so the decision's one-hot is shown once.

    A linear link's outcomes and reward are squashed (:func:`squash`).
    Reject option: the lump of hidden losses settled with the last reward
    is left out (it comes with the episode's end, when nothing is left to
    decide). Lending's warm-start sample is not shown (it would be
    ``K x (d + 1)`` numbers in every observation); :class:`FeaturesView`
    uses it.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.family = family_of(env)
        #: the family's block (its package's views, named by its Family record)
        self.family_views = family_views(env, self.source_space)
        low, high = self.family_views.block_bounds()
        self._n_block = len(low)
        self._finish(
            np.concatenate([self._plain.low, low]), np.concatenate([self._plain.high, high])
        )
        self._block = np.zeros(self._n_block)

    def reset(self, feedback: dict[str, Any], *, seed: int | None = None) -> None:
        """Clear the previous step's block."""
        self._block = np.zeros(self._n_block)

    def update(
        self, observation: Any, action: Any, reward: float, feedback: dict[str, Any]
    ) -> None:
        """Record the step's decision, revealed mask, revealed outcomes and reward."""
        block = self.family_views.block(action, reward, feedback)
        self._block = np.concatenate([np.asarray(b, dtype=np.float64).ravel() for b in block])

    def encode(self, observation: Any) -> np.ndarray:
        """Return the plain vector followed by the previous step's block."""
        size = self._plain_size
        out = np.empty(size + self._n_block, dtype=np.float32)
        self._write_plain(observation, out[:size])
        out[size:] = self._block
        return out


class FeaturesView(View):
    """The statistics a principled agent computes from the revealed outcomes (O1).

    ``learner`` is the family's agent whose state the features read; it is
    cloned at every reset and learns, through its own ``reset`` and
    ``update``, from the reset feedback and each step's feedback only. The
    features, with ``T`` the env's horizon (``t / T`` capped at 1):

    - lending (a :class:`~agents.lending.CutoffAgent`, default
      :class:`~agents.lending.Greedy`: the ridge GLM fit on the warm start
      and the revealed outcomes): for each of the ``N`` applicants
      ``mu(x . beta) - c`` (squashed for the linear link) and the width
      ``sqrt(x^T A^{-1} x)``, then ``n / (N T)`` (outcomes revealed this
      episode over decisions in it) and ``t / T``. Greedy approves where
      the first feature is positive; the optimistic agents add a multiple
      of the second.
    - apple tasting (a :class:`~agents.apple.base.LinearLearner`, default
      :class:`~agents.apple.MarginPerceptron`): ``tanh`` of the learner's
      decision function on ``x`` (its sign is the learner's prediction,
      its size inside the margin its confidence), then labels revealed,
      positives revealed, and steps, each over ``T``.
    - reject option (a :class:`~agents.reject.base.RejectLearner`, default
      :class:`~agents.reject.DSOL`, updated on every revealed label):
      ``tanh(f(x) - rho)`` and ``tanh(f(x) + rho)`` (the learner predicts +1
      where the first is positive, -1 where the second is negative,
      rejects in between), then labels revealed and steps over ``T``.
    - services (no learner: the statistics are the provider's records):
      for each user ``squash(l)``, ``l / max l`` (0 before any service),
      whether acquired, its chosen service ``/ k`` (1: none yet), the share
      of users on that service (0 before any), and with ``reveal_groups``
      its group ``/ (G - 1)`` and its group's share of users; then ``t / k``.
    - delayed-impact lending (a :class:`~agents.delayed_impact.base.ThresholdLender`,
      default :class:`~agents.delayed_impact.MaxProfit`, learning repayment from
      the approved loans): for each of the ``N`` applicants the estimated
      expected profit of approving, ``rho_hat gain - (1 - rho_hat) loss``, over
      ``max(gain, loss)``, and the learner's approval probability for the
      applicant's group and score (1 during its burn-in), then ``n / (N T)``
      and ``t / T``. Approving where the second feature is above 1/2 is
      MaxProfit's decision.
    """

    def __init__(self, env: gym.Env, learner: Agent | None = None) -> None:
        super().__init__(env)
        self.family = family_of(env)
        raw: Any = env.unwrapped
        #: the family's features (its package's views, named by its Family record)
        self.family_views = family_views(env, self.source_space)
        self._raw_action_space = env.action_space
        self.learner = self._check_learner(learner)
        self._horizon = float(getattr(raw, "horizon", 0) or getattr(raw, "n_services", 1))
        self.learner_: Any = None
        self._t = self._revealed = 0
        self._finish(*self.family_views.feature_bounds(self.learner))

    def _check_learner(self, learner: Agent | None) -> Any:
        if self.family_views.learner is None:
            if learner is not None:
                raise ValueError(
                    f"learner must be None for the {self.family} family: its features are "
                    f"the env's own records, got learner={learner!r}"
                )
            return None
        base, default = (load(path) for path in self.family_views.learner)
        if learner is None:
            return default()
        if not isinstance(learner, base):
            raise TypeError(
                f"learner must be a {base.__name__} for the {self.family} family, got {learner!r}"
            )
        return learner

    def reset(self, feedback: dict[str, Any], *, seed: int | None = None) -> None:
        """Start a fresh clone of the learner on the reset feedback (lending: the warm start)."""
        self._t = self._revealed = 0
        self.family_views.reset()
        if self.learner is not None:
            self.learner_ = self.learner.clone()
            self.learner_.reset(
                self.source_space, self._raw_action_space, seed=seed, feedback=feedback
            )

    def update(
        self, observation: Any, action: Any, reward: float, feedback: dict[str, Any]
    ) -> None:
        """Let the learner learn from the step's feedback; count what was revealed."""
        self._t += 1
        revealed = np.asarray(feedback["revealed"], dtype=bool)
        self._revealed += int(revealed.sum())
        if self.learner_ is not None:
            self.learner_.update(observation, action, reward, feedback)
        self.family_views.update(feedback, revealed)

    def encode(self, observation: Any) -> np.ndarray:
        """Return the features of ``observation`` under what has been learned so far."""
        features = self.family_views.features(
            observation, self.learner_, t=self._t, revealed=self._revealed, horizon=self._horizon
        )
        return features.astype(np.float32)


def make_view(env: gym.Env, view: str, **options: Any) -> View:
    """Return the :class:`View` called ``view`` (one of :data:`VIEWS`) for ``env``.

    ``options`` go to the view (``learner=`` for ``"features"``).
    """
    if view == "plain":
        if options:
            raise TypeError(f"view 'plain' takes no options, got {sorted(options)}")
        return PlainView(env)
    if view == "feedback":
        if options:
            raise TypeError(f"view 'feedback' takes no options, got {sorted(options)}")
        return FeedbackView(env)
    if view == "features":
        return FeaturesView(env, **options)
    raise ValueError(f"view must be one of {', '.join(map(repr, VIEWS))}; got {view!r}")
