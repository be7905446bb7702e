"""Sampling strategies: taste some of a base learner's predicted negatives, at random.

A one-sided learner only sees the labels of what it predicts positive, so
these wrappers turn some negative predictions into label requests: the
example is tasted anyway, its label revealed, and the base learner learns
from it by its own rule. They wrap any :class:`~agents.apple.LinearLearner`
(composition, not inheritance): ``LabelEfficient(MarginPerceptron(m=2))``.

- :class:`AppleTastingSampling` (Helmbold, Littlestone and Long 2000)
  samples predicted negatives uniformly, with a probability driven by the
  error rate it has found.
- :class:`LabelEfficient` (Cesa-Bianchi, Gentile and Zaniboni 2006, as
  Sculley 2007 applies it in Figure 2) samples the uncertain ones: the
  nearer the hyperplane, the likelier.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, cast

import gymnasium as gym
from sklearn.base import clone

from agents.apple.base import ENV_IDS, LinearLearner, check_label
from agents.apple.perceptron import Perceptron
from agents.base import Agent, Interval, Real
from osfb_gym.core.seeding import spawn_seed

BASE_STREAM = 1  # the base learner's seed is spawn_seed(seed, BASE_STREAM)


class SamplingStrategy(Agent):
    """Wrap a base learner; taste a predicted negative when :meth:`sample` says so.

    ``base`` is a hyperparameter and stays as given: :meth:`reset` fits a
    fresh clone of it, ``base_`` (scikit-learn's meta-estimator habit), so
    running the wrapper never changes the agent you passed, and
    :meth:`clone` re-creates the base with its own ``clone()``. Subclasses
    implement :meth:`sample` and may count what they need in
    :meth:`observe`.

    Attributes
    ----------
    base_
        The fitted clone of ``base`` (a :class:`Perceptron` if ``base`` is
        None).
    t_
        Steps acted.
    n_sampled_
        Predicted negatives tasted (the label requests the base would not
        have made; under one-sided feedback each negative among them costs
        a false positive).
    """

    env_ids: ClassVar[tuple[str, ...]] = ENV_IDS
    abstract = True
    base: LinearLearner | None
    _parameter_constraints: ClassVar[dict[str, Any]] = {"base": [LinearLearner, None]}

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Validate, then reset a fresh clone of the base learner with a seed of its own."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        base = Perceptron() if self.base is None else self.base
        self.base_: LinearLearner = cast(LinearLearner, clone(base))
        self.base_.reset(
            observation_space,
            action_space,
            seed=None if seed is None else spawn_seed(seed, BASE_STREAM),
            feedback=feedback,
        )
        self.t_ = 0
        self.n_sampled_ = 0

    def episode_counts(self) -> dict[str, float]:
        """Return ``sampled`` (predicted negatives tasted) and the base's ``updates``."""
        self._require_reset("episode_counts")
        return {"sampled": float(self.n_sampled_), "updates": float(self.base_.n_updates_)}

    def sample(self, score: float) -> bool:
        """Decide whether to taste a predicted negative of ``decision_function`` ``score < 0``."""
        raise NotImplementedError(f"{type(self).__name__} must implement sample()")

    def observe(self, predicted: int, action: int, y: int) -> None:
        """Account for a revealed label ``y`` of an example the base predicted ``predicted``."""

    def act(self, observation: Any) -> int:
        """Taste what the base predicts positive, and a predicted negative when sampled."""
        self._require_reset("act")
        self.t_ += 1
        score = self.base_.decision_function(observation)
        if score >= 0.0:
            return 1
        if self.sample(score):
            self.n_sampled_ += 1
            return 1
        return 0

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Count what the revealed label shows about the base, then let the base learn."""
        self._check_update(action, reward, feedback)
        if feedback["revealed"]:
            predicted = self.base_.predict(observation)
            self.observe(predicted, int(action), check_label(feedback["y"]))
        self.base_.update(observation, action, reward, feedback)


class LabelEfficient(SamplingStrategy):
    """Label-efficient sampling: taste a predicted negative with probability ``b / (b + |f(x)|)``.

    The selective-sampling perceptron of Cesa-Bianchi, Gentile and
    Zaniboni (2006) as Sculley (2007) runs it under one-sided feedback
    (Figure 2): each example draws ``Z ~ Bernoulli(b / (b + |f(x)|))`` with
    ``b = beta sqrt(1 + K)``, and a label is requested when ``Z = 1``; since
    a predicted positive reveals its label for free, ``Z = 1`` whenever the
    base predicts positive, so only predicted negatives are sampled,
    uncertain ones (small ``|f(x)|``) most often. On every revealed label
    the base learns by its own rule (Figure 2's "update w" is the
    perceptron's mistake update; with a margin base, its margin update),
    and ``K``, the number of mistakes found among the revealed labels
    (the base's prediction ``sign f(x)`` differing from ``y``, both on its
    predicted positives and on the sampled negatives), grows, so that the
    sampling rises with the error rate found. ``f`` is the base's
    :meth:`~agents.apple.LinearLearner.decision_function`, threshold shift
    included.

    Parameters
    ----------
    base
        The learner to wrap, a :class:`~agents.apple.LinearLearner`; None
        means ``Perceptron()``, the learner Figure 2 was analysed for.
    beta
        Sampling scale ``beta > 0``: larger samples more. ``|f(x)|`` is in
        the base's units (for a perceptron on unit-norm features, about
        ``eta`` times the number of updates); Sculley tuned it per data set
        (0.0001 on Reuters).

    Attributes
    ----------
    base_
        The fitted clone of ``base``.
    n_mistakes_
        ``K``: mistakes found among the revealed labels.
    t_
        Steps acted.
    n_sampled_
        Predicted negatives tasted.

    Examples
    --------
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> from agents.apple import MarginPerceptron
    >>> agent = LabelEfficient(MarginPerceptron(m=2.0), beta=1.0)
    >>> agent.reset(spaces.Box(-1, 1, (2,), np.float32), spaces.Discrete(2), seed=0)
    >>> x = np.array([0.6, 0.8], dtype=np.float32)
    >>> agent.update(x, 1, -1.0, {"revealed": True, "y": 0})  # a tasted negative: K = 1
    >>> round(agent.base_.decision_function(x), 6), agent.n_mistakes_
    (-2.0, 1)
    >>> round(agent.sample_probability(-2.0), 4)  # b = sqrt(2): b / (b + 2)
    0.4142
    >>> agent.clone().base is not agent.base  # a clone never shares the base
    True

    References
    ----------
    N. Cesa-Bianchi, C. Gentile, L. Zaniboni. Worst-case analysis of
    selective sampling for linear classification. JMLR 7, 2006.

    D. Sculley. Practical learning from one-sided feedback. KDD 2007,
    Section 3 and Figure 2.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **SamplingStrategy._parameter_constraints,
        "beta": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, base: LinearLearner | None = None, beta: float = 1.0) -> None:
        self.base = base
        self.beta = beta

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Reset the base; no mistakes found yet (``K = 0``)."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.n_mistakes_ = 0

    def sample_probability(self, score: float) -> float:
        """Return ``b / (b + |score|)`` with ``b = beta sqrt(1 + K)``."""
        b = float(self.beta) * math.sqrt(1.0 + self.n_mistakes_)
        return b / (b + abs(score))

    def sample(self, score: float) -> bool:
        """Draw ``Z ~ Bernoulli(b / (b + |f(x)|))``."""
        return bool(self.rng_.random() < self.sample_probability(score))

    def observe(self, predicted: int, action: int, y: int) -> None:
        """``K += 1`` when the base's prediction was wrong."""
        if predicted != y:
            self.n_mistakes_ += 1


class AppleTastingSampling(SamplingStrategy):
    """Helmbold et al.'s apple-tasting transformation: sample predicted negatives uniformly.

    When the base predicts negative at step ``t``, taste the example anyway
    with probability ``sqrt((1 + m_n) / t)`` (capped at 1), ``m_n`` the
    mistakes found so far among these sampled examples (the sampled ones
    that turned out positive: false negatives the base would have made).
    The rate estimates the base's error on its negatives, so sampling
    fades as the base is found right (Sculley 2007, Section 2.2). It
    ignores how sure the base is, which is why it requests more labels
    than :class:`LabelEfficient` for similar mistakes. The base learns by
    its own rule from every revealed label.

    The name is the strategy's; the environment is ``AppleTasting-v0``.

    Parameters
    ----------
    base
        The learner to wrap, a :class:`~agents.apple.LinearLearner`; None
        means ``Perceptron()``, the mistake-driven learner the
        transformation was designed for.

    Attributes
    ----------
    base_
        The fitted clone of ``base``.
    n_sampled_mistakes_
        ``m_n``: sampled predicted negatives that were positive.
    t_
        Steps acted.
    n_sampled_
        Predicted negatives tasted.

    Examples
    --------
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> agent = AppleTastingSampling()
    >>> agent.reset(spaces.Box(-1, 1, (2,), np.float32), spaces.Discrete(2), seed=0)
    >>> agent
    AppleTastingSampling()
    >>> agent.t_ = 100
    >>> agent.sample_probability()  # sqrt((1 + 0) / 100)
    0.1

    References
    ----------
    D. P. Helmbold, N. Littlestone, P. M. Long. Apple tasting. Information
    and Computation 161(2), 2000.

    D. Sculley. Practical learning from one-sided feedback. KDD 2007,
    Section 2.2.
    """

    def __init__(self, base: LinearLearner | None = None) -> None:
        self.base = base

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Reset the base; no mistakes found yet (``m_n = 0``)."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.n_sampled_mistakes_ = 0

    def sample_probability(self) -> float:
        """Return ``min(1, sqrt((1 + m_n) / t))`` at the current step ``t``."""
        return min(1.0, math.sqrt((1.0 + self.n_sampled_mistakes_) / max(self.t_, 1)))

    def sample(self, score: float) -> bool:
        """Draw the uniform coin; ``score`` plays no part."""
        return bool(self.rng_.random() < self.sample_probability())

    def observe(self, predicted: int, action: int, y: int) -> None:
        """``m_n += 1`` when a sampled predicted negative was positive."""
        if predicted == 0 and action == 1 and y == 1:
            self.n_sampled_mistakes_ += 1
