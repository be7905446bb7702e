"""What every apple-tasting learner shares: a linear score, cost weights, the one-sided loop.

A :class:`LinearLearner` keeps a hyperplane ``f(x) = w . x + b`` and
predicts positive (tastes the example, so its label is revealed) when
``f(x) >= threshold``. Its :meth:`~LinearLearner.learn` is the algorithm's
update rule for one revealed label; the Agent loop acts by
:meth:`~LinearLearner.predict` and learns from every label the step
revealed, whatever the action was (under ``feedback="full"`` that is every
label). Labels ``y`` in {0, 1} are used as {-1, +1} inside the rules.

The two cost-weighting methods of Sculley (2007), Section 5, are options of
every learner rather than wrappers, because each changes the inside of the
learner: *example weighting* (``class_weight``) scales the update of each
class (the perceptrons' ``c_y``, the SVM's per-class ``C``), and *threshold
biasing* (``threshold``) moves only the classification threshold, never the
hyperplane the rule learns. Were the shift part of the score that learns,
the bias term would learn it away.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from scipy.linalg import blas

from agents.base import Agent, Interval, Real, check_finite, example_dim, float_array
from osfb_gym.core.validation import check_float

ENV_IDS = ("AppleTasting-v0",)

# w . x for the weights' dtype by BLAS: a third less call overhead than np.dot, and
# no numpy warning for the NaN of 0 * inf, which raw_score turns into a clear error
_DOT = {np.dtype(np.float32): blas.sdot, np.dtype(np.float64): blas.ddot}

# the cost-weighting options every linear learner has; subclasses extend the table
COST_CONSTRAINTS: dict[str, list[Any]] = {
    "class_weight": [dict, None],
    "threshold": [Interval(Real, None, None, closed="neither")],
}


def check_class_weight(class_weight: Any) -> tuple[float, float]:
    """Return ``(c_neg, c_pos)`` from ``None`` or a mapping ``{0: c_neg, 1: c_pos}``.

    A missing class weighs 1. Weights must be finite and positive.

    Examples
    --------
    >>> check_class_weight(None)
    (1.0, 1.0)
    >>> check_class_weight({1: 8})
    (1.0, 8.0)
    >>> check_class_weight({2: 1.0})
    Traceback (most recent call last):
    ...
    ValueError: class_weight keys must be the labels 0 and 1, got 2
    """
    if class_weight is None:
        return 1.0, 1.0
    if not isinstance(class_weight, dict):
        raise TypeError(
            "class_weight must be None or a dict {0: c_neg, 1: c_pos}, got "
            f"{class_weight!r} ({type(class_weight).__name__})"
        )
    weights = [1.0, 1.0]
    for label, weight in class_weight.items():
        if isinstance(label, bool) or label not in (0, 1):
            raise ValueError(f"class_weight keys must be the labels 0 and 1, got {label!r}")
        weights[int(label)] = check_float(
            weight, f"class_weight[{int(label)}]", low=0.0, low_inclusive=False
        )
    return weights[0], weights[1]


def check_label(y: Any) -> int:
    """Return a revealed label as the ``int`` 0 or 1, or raise naming ``y``."""
    if y == 1:
        return 1
    if y == 0:
        return 0
    raise ValueError(f"y must be a revealed label 0 or 1, got {y!r}")


def check_apple_spaces(
    observation_space: gym.Space, action_space: gym.Space, owner: str
) -> tuple[int, np.dtype]:
    """Return ``(dim, dtype)`` of an apple-tasting observation space; check the action space.

    The dtype is the observation's when it is floating (``float32`` for
    AppleTasting-v0, so the learner's weights match and an update needs no
    conversion), else ``float64``.
    """
    dim = example_dim(observation_space, owner)
    if not isinstance(action_space, spaces.Discrete) or int(action_space.n) != 2:
        raise ValueError(
            f"{owner} needs action_space Discrete(2) (1 = taste, 0 = reject), got {action_space}"
        )
    dtype = observation_space.dtype
    if dtype is None or dtype.kind != "f":
        dtype = np.dtype(np.float64)
    return dim, np.dtype(dtype)


class LinearLearner(Agent):
    """A linear classifier with a bias that learns only from the labels it is shown.

    Subclasses implement :meth:`learn`, the update rule for one revealed
    example, and may extend :meth:`reset` and :meth:`_check_params`. The
    sampling strategies of :mod:`agents.apple.sampling` wrap any
    ``LinearLearner`` through :meth:`decision_function`, :meth:`predict` and
    :meth:`update`.

    Attributes
    ----------
    coef_
        The weight vector ``w`` (the observation's float dtype).
    intercept_
        The bias ``b``.
    class_weights_
        ``(c_neg, c_pos)``, the resolved ``class_weight``.
    n_learned_
        Revealed labels passed to :meth:`learn`.
    n_updates_
        How many of them changed the hypothesis.
    """

    env_ids: ClassVar[tuple[str, ...]] = ENV_IDS
    abstract = True
    threshold: float
    class_weight: dict[int, float] | None
    _parameter_constraints: ClassVar[dict[str, Any]] = COST_CONSTRAINTS

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Validate the hyperparameters and start from ``w = 0``, ``b = 0``.

        ``feedback`` (the task's ``gain`` and ``cost_fp``) is not used: the
        papers' learners trade the two errors through ``class_weight`` and
        ``threshold``.
        """
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        dim, dtype = check_apple_spaces(observation_space, action_space, type(self).__name__)
        self.class_weights_ = check_class_weight(self.class_weight)
        self.coef_ = np.zeros(dim, dtype=dtype)
        self.intercept_ = 0.0
        self.n_learned_ = 0
        self.n_updates_ = 0

    def episode_counts(self) -> dict[str, float]:
        """Return what this learner did in its episode: ``sampled`` (0) and ``updates``.

        A bench row records these beside the env's metrics (a bare learner
        samples nothing; :class:`~agents.apple.sampling.SamplingStrategy`
        counts the predicted negatives it tasted).
        """
        self._require_reset("episode_counts")
        return {"sampled": 0.0, "updates": float(self.n_updates_)}

    def _check_params(self) -> None:
        """Check the contents of ``class_weight`` (the table checks it is a dict or None)."""
        check_class_weight(self.class_weight)

    # ------------------------------------------------------------------ scores
    def raw_score(self, x: Any) -> float:
        """Return ``w . x + b``, the score the update rule learns from.

        A non-finite score is an error (see :meth:`_bad_score`); from
        finite weights it can only come from a NaN or infinite ``x``, so
        this one test on a number checks the whole observation.
        """
        x = np.asarray(x)
        if x.shape != self.coef_.shape:
            raise ValueError(
                f"{type(self).__name__}: observation must have shape {self.coef_.shape}, "
                f"got {x.shape}"
            )
        score = float(_DOT[self.coef_.dtype](self.coef_, x)) + self.intercept_
        if not math.isfinite(score):
            self._bad_score(x, score)
        return score

    def _bad_score(self, x: Any, score: float) -> None:
        """Raise for a non-finite score: name the observation's entry, or the overflow."""
        check_finite(np.asarray(x), "observation", type(self).__name__)
        raise FloatingPointError(
            f"{type(self).__name__}: the score w . x + b is {score} for a finite observation: "
            "the learned weights overflowed (scale the features down)"
        )

    def decision_function(self, x: Any) -> float:
        """Return ``w . x + b - threshold``: positive means predict positive.

        Its magnitude is the learner's confidence, which the label-efficient
        sampler reads.
        """
        return self.raw_score(x) - self.threshold

    def predict(self, x: Any) -> int:
        """Return 1 (positive: taste) when ``decision_function(x) >= 0``, else 0.

        A tie tastes: from ``w = 0`` the learner asks for labels until it
        has something to go on, instead of rejecting forever unseen.
        """
        return 1 if self.raw_score(x) >= self.threshold else 0

    def learn(self, x: Any, y: Any) -> None:
        """Apply the update rule to one revealed example ``(x, y)``, ``y`` in {0, 1}."""
        raise NotImplementedError(f"{type(self).__name__} must implement learn()")

    # ------------------------------------------------------------------ Agent loop
    def act(self, observation: Any) -> int:
        """Predict: 1 tastes the example (its label is revealed), 0 rejects it."""
        self._require_reset("act")
        return self.predict(observation)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Learn from the step's label when it was revealed; otherwise nothing to learn."""
        self._check_update(action, reward, feedback)
        if type(observation) is not np.ndarray:
            observation = float_array(observation, "observation", f"{type(self).__name__}.update")
        if feedback["revealed"]:
            self.learn(observation, feedback["y"])
