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

# the encoding of spaces is the contract's (agents read it too); re-exported here
from osfb_gym.core.spaces import UNBOUNDED as UNBOUNDED
from osfb_gym.core.spaces import _unbounded as _unbounded
from osfb_gym.core.spaces import encode as encode
from osfb_gym.core.spaces import encode_space as encode_space
from osfb_gym.core.spaces import make_encoder as make_encoder
from osfb_gym.core.spaces import squash as squash

if TYPE_CHECKING:
    from agents.base import Agent

VIEWS = ("plain", "feedback", "features")


def family_of(env: gym.Env) -> str:
    """Return the family of ``env``: its name in ``osfb_gym.core.family.FAMILIES``.

    One of ``"lending"``, ``"apple"``, ``"reject"``, ``"services"``, ``"delayed_impact"``.
    Raises ``TypeError`` for an env that is not one of osfb-gym's families.
    """
    # imported here: agents.rl reads encode() without pulling in the environments
    from osfb_gym.envs.apple import AppleTastingEnv
    from osfb_gym.envs.delayed_impact import DelayedImpactLendingEnv
    from osfb_gym.envs.lending import OneSidedLendingEnv
    from osfb_gym.envs.reject import RejectOptionEnv
    from osfb_gym.envs.services import MultiServiceChoiceEnv

    classes = {
        OneSidedLendingEnv: "lending",
        AppleTastingEnv: "apple",
        RejectOptionEnv: "reject",
        MultiServiceChoiceEnv: "services",
        DelayedImpactLendingEnv: "delayed_impact",
    }
    for cls, family in classes.items():
        if isinstance(env.unwrapped, cls):
            return family
    raise TypeError(
        "observation views are defined for osfb-gym's families (OneSidedLending, AppleTasting, "
        f"RejectOption, MultiServiceChoice, DelayedImpactLending), got env {env.unwrapped!r}"
    )


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

    The block appended, per family (``N`` applicants a step, ``n`` users):

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
        raw: Any = env.unwrapped  # one of the family classes (family_of checked)
        if self.family == "lending":
            n = raw.batch_size
            self._linear = raw.link.name == "linear"
            y_low, y_high = (-1.0, 1.0) if self._linear else (0.0, 1.0)
            r_low, r_high = (-1.0, 1.0) if self._linear else (-raw.cutoff, 1.0 - raw.cutoff)
            low = [0.0] * n + [0.0] * n + [y_low] * n + [r_low]
            high = [1.0] * n + [1.0] * n + [y_high] * n + [r_high]
        elif self.family == "apple":
            low, high = [0.0, 0.0, 0.0, -raw.cost_fp], [1.0, 1.0, 1.0, raw.gain]
        elif self.family == "reject":
            low = [0.0] * 5 + [-1.0, -(1.0 + raw.query_cost)]
            high = [1.0] * 5 + [1.0, 0.0]
        elif self.family == "delayed_impact":
            n = raw.batch_size
            low = [0.0] * (3 * n) + [-raw.config.default_loss]
            high = [1.0] * (3 * n) + [raw.config.loan_gain]
        else:
            low = [0.0] * raw.n_users + [-1.0]
            high = [1.0] * raw.n_users + [1.0]
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
        revealed = np.asarray(feedback["revealed"], dtype=np.float64).ravel()
        if self.family == "delayed_impact":
            y = np.asarray(feedback["y"], dtype=np.float64).ravel() * revealed
            block = [np.asarray(action, dtype=np.float64).ravel(), revealed, y, [reward / y.size]]
        elif self.family == "lending":
            n = revealed.size
            y = np.asarray(feedback["y"], dtype=np.float64).ravel() * revealed
            r = reward / n
            if self._linear:
                y, r = squash(y), float(squash(r))
            block = [np.asarray(action, dtype=np.float64).ravel(), revealed, y, [r]]
        elif self.family == "apple":
            label = float(feedback["y"]) if feedback["revealed"] else 0.0
            block = [[float(int(np.asarray(action)))], revealed, [label], [reward]]
        elif self.family == "reject":
            decision, query = (int(v) for v in np.asarray(action).ravel())
            label = float(feedback["y"]) if feedback["revealed"] else 0.0
            step_reward = reward + float(feedback.get("settled", 0.0))
            block = [np.eye(3)[decision], [float(query)], revealed, [label], [step_reward]]
        else:
            block = [revealed, [float(squash(reward / revealed.size))]]
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
        raw: Any = env.unwrapped  # one of the family classes (family_of checked)
        self._raw_action_space = env.action_space
        self.learner = self._check_learner(learner)
        self._horizon = float(getattr(raw, "horizon", 0) or getattr(raw, "n_services", 1))
        self.learner_: Any = None
        self._t = self._revealed = self._positives = 0
        if self.family == "lending":
            n, self._batch = raw.batch_size, raw.batch_size
            self._linear = raw.link.name == "linear"
            self._cutoff = float(raw.cutoff)
            reach = np.maximum(np.abs(self.source_space.low), np.abs(self.source_space.high))
            # sqrt(x^T A^-1 x) <= ||x|| / sqrt(lambda_min(A)) and A >= l2 I
            width = float(np.sqrt(np.sum(reach[0].astype(np.float64) ** 2) / self.learner.l2))
            s_low, s_high = (-1.0, 1.0) if self._linear else (-self._cutoff, 1.0 - self._cutoff)
            low = np.concatenate([np.tile([s_low, 0.0], n), [0.0, 0.0]])
            high = np.concatenate([np.tile([s_high, width], n), [1.0, 1.0]])
        elif self.family == "apple":
            low, high = np.array([-1.0, 0, 0, 0]), np.ones(4)
        elif self.family == "reject":
            low, high = np.array([-1.0, -1.0, 0, 0]), np.ones(4)
        elif self.family == "delayed_impact":
            n, self._batch = raw.batch_size, raw.batch_size
            low = np.concatenate([np.tile([-1.0, 0.0], n), [0.0, 0.0]])
            high = np.ones(2 * n + 2)
        else:
            self._n_users, self._k = raw.n_users, raw.n_services
            self._groups = "groups" in self.source_space.spaces
            per_user = 7 if self._groups else 5
            low, high = (
                np.zeros(per_user * self._n_users + 1),
                np.ones(per_user * self._n_users + 1),
            )
        self._finish(low, high)
        self._acquired = np.zeros(0)

    def _check_learner(self, learner: Agent | None) -> Any:
        from agents.apple import MarginPerceptron
        from agents.apple.base import LinearLearner
        from agents.delayed_impact import MaxProfit
        from agents.delayed_impact.base import ThresholdLender
        from agents.lending import CutoffAgent, Greedy
        from agents.reject import DSOL
        from agents.reject.base import RejectLearner

        defaults: dict[str, tuple[Any, Any]] = {
            "lending": (CutoffAgent, Greedy),
            "apple": (LinearLearner, MarginPerceptron),
            "reject": (RejectLearner, DSOL),
            "delayed_impact": (ThresholdLender, MaxProfit),
        }
        if self.family == "services":
            if learner is not None:
                raise ValueError(
                    "learner must be None for MultiServiceChoice: its features are the "
                    f"provider's own records, got learner={learner!r}"
                )
            return None
        base, default = defaults[self.family]
        if learner is None:
            return default()
        if not isinstance(learner, base):
            raise TypeError(
                f"learner must be a {base.__name__} for the {self.family} family, got {learner!r}"
            )
        return learner

    def reset(self, feedback: dict[str, Any], *, seed: int | None = None) -> None:
        """Start a fresh clone of the learner on the reset feedback (lending: the warm start)."""
        self._t = self._revealed = self._positives = 0
        if self.learner is not None:
            self.learner_ = self.learner.clone()
            self.learner_.reset(
                self.source_space, self._raw_action_space, seed=seed, feedback=feedback
            )
        else:
            self._acquired = np.zeros(self._n_users)

    def update(
        self, observation: Any, action: Any, reward: float, feedback: dict[str, Any]
    ) -> None:
        """Let the learner learn from the step's feedback; count what was revealed."""
        self._t += 1
        revealed = np.asarray(feedback["revealed"], dtype=bool)
        self._revealed += int(revealed.sum())
        if self.learner_ is not None:
            self.learner_.update(observation, action, reward, feedback)
        if self.family == "apple" and feedback["revealed"]:
            self._positives += int(feedback["y"] == 1)
        elif self.family == "services":
            self._acquired = np.maximum(self._acquired, revealed)

    def _time(self) -> float:
        return min(self._t / self._horizon, 1.0)

    def encode(self, observation: Any) -> np.ndarray:
        """Return the features of ``observation`` under what has been learned so far."""
        learner = self.learner_
        if self.family == "lending":
            x = np.asarray(observation, dtype=np.float64)
            score = np.asarray(learner.link_.mean(x @ learner.beta_), dtype=np.float64)
            score = score - learner.cutoff_
            if self._linear:
                score = squash(score)
            width = learner.model_.widths(x)
            counts = [min(self._revealed / (self._batch * self._horizon), 1.0), self._time()]
            features = np.concatenate([np.column_stack([score, width]).ravel(), counts])
        elif self.family == "apple":
            x = np.asarray(observation)
            features = np.array(
                [
                    np.tanh(learner.decision_function(x)),
                    min(self._revealed / self._horizon, 1.0),
                    min(self._positives / self._horizon, 1.0),
                    self._time(),
                ]
            )
        elif self.family == "delayed_impact":
            features = self._lender_features(observation)
        elif self.family == "reject":
            f = learner.score_(np.asarray(observation, dtype=np.float64))
            rho = learner.rho_
            revealed = min(self._revealed / self._horizon, 1.0)
            features = np.array([np.tanh(f - rho), np.tanh(f + rho), revealed, self._time()])
        else:
            features = self._service_features(observation)
        return features.astype(np.float32)

    def _lender_features(self, observation: Any) -> np.ndarray:
        learner = self.learner_
        group, bins = learner._applicants(observation, "act")  # the learner's own grid bins
        scale = max(learner.loan_gain_, learner.default_loss_)
        profit = learner._profit()[group, bins] / scale
        approve = np.ones(group.size) if learner.t_ < learner.burnin else learner.tau_[group, bins]
        counts = [min(self._revealed / (self._batch * self._horizon), 1.0), self._time()]
        return np.concatenate([np.column_stack([profit, approve]).ravel(), counts])

    def _service_features(self, observation: dict[str, Any]) -> np.ndarray:
        losses = np.asarray(observation["losses"], dtype=np.float64)
        choices = np.asarray(observation["choices"])
        k, n = self._k, self._n_users
        top = losses.max()
        placed = choices < k
        counts = np.bincount(choices, minlength=k + 1)
        columns = [
            squash(losses),
            losses / top if top > 0 else np.zeros(n),
            self._acquired,
            choices / k,
            np.where(placed, counts[choices] / n, 0.0),
        ]
        if self._groups:
            groups = np.asarray(observation["groups"])
            n_groups = int(self.source_space["groups"].nvec.max())
            sizes = np.bincount(groups, minlength=n_groups)
            columns += [groups / max(n_groups - 1, 1), sizes[groups] / n]
        return np.concatenate([np.column_stack(columns).ravel(), [min(self._t / k, 1.0)]])


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
