"""The classical perceptron and the perceptron with margins (Sculley 2007, Figure 5).

Both add ``eta * c_y * y * x`` to ``w`` (and ``eta * c_y * y`` to ``b``)
when a revealed example ``(x, y)``, ``y`` in {-1, +1}, has
``y f(x) <= m / 2``; the classical perceptron is ``m = 0``, so it updates
on mistakes only. Under one-sided feedback the only mistakes it is ever
shown are tasted negatives, each pulling the hyperplane towards the
positive side, and nothing pulls it back: it ratchets until it rejects
almost everything (Section 2.1, Figure 1). The margin version also updates
on correctly tasted positives within ``m / 2`` of the hyperplane, which
push it back (Section 4.2, Figure 4).

An act is one dot product; an update one more and an in-place BLAS
``axpy``, with no allocation when the observation has the weights' dtype
(``float32`` for AppleTasting-v0).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from scipy.linalg import blas

from agents.apple.base import COST_CONSTRAINTS, LinearLearner, check_label
from agents.base import Interval, Real

# y := a * x + y in place, for the weights' dtype (looked up per call, so nothing
# unpicklable is stored on the agent)
_AXPY = {np.dtype(np.float32): blas.saxpy, np.dtype(np.float64): blas.daxpy}


class Perceptron(LinearLearner):
    """Rosenblatt's perceptron: update on mistakes only (Figure 5 with ``m = 0``).

    Predict positive when ``w . x + b >= threshold``; on a revealed example
    ``(x, y)``, ``y`` in {-1, +1}, with ``y (w . x + b) <= 0`` (a mistake; a
    tie counts, so the start ``w = 0`` can move) set
    ``w += eta c_y y x`` and ``b += eta c_y y``. This is the learner that
    one-sided feedback breaks (Section 2.1): with label noise its recall
    collapses towards 0. Wrap it in
    :class:`~agents.apple.LabelEfficient` or
    :class:`~agents.apple.AppleTastingSampling` to fix it, or use
    :class:`MarginPerceptron`.

    Parameters
    ----------
    eta
        Learning rate. From ``w = 0``, ``w`` and ``b`` both scale with
        ``eta``, so with ``threshold = 0`` the predictions do not depend on
        it; it sets the scale ``threshold`` is measured in.
    class_weight
        Example weighting (Section 5): ``{0: c_neg, 1: c_pos}`` multiplies the
        update of each class (missing classes weigh 1). The paper held
        ``c_neg = 1`` and swept ``c_pos`` over 1, 2, ..., 128 for minority
        positives (Table 3).
    threshold
        Threshold biasing (Section 5): predict positive when
        ``w . x + b >= threshold``; the rule learns from the unshifted
        ``w . x + b``. A negative value moves the decision towards the
        negative side, tasting (sampling) the predicted negatives nearest
        the learned hyperplane, which raises recall on a minority positive
        class. The paper's biases ``0 ... 1`` (Table 2) are
        ``threshold = 0 ... -1`` here.
    fit_intercept
        Learn the bias ``b``.
    intercept_scaling
        The bias is the weight of a constant feature of this value ``s``
        (scikit-learn's ``intercept_scaling``), so an update moves ``b`` by
        ``eta c_y y s^2``. Under one-sided feedback the bias is the ratchet:
        every tasted negative lowers it, shifting the whole hyperplane
        towards rejection. Keep ``s^2`` small next to ``||x||^2`` (the
        default 1 against standard normal features of ``||x||^2 = dim``;
        about 0.3 for unit-norm features with label noise).

    Attributes
    ----------
    coef_
        The weight vector ``w``.
    intercept_
        The bias ``b``.
    class_weights_
        ``(c_neg, c_pos)``.
    n_learned_
        Revealed labels seen.
    n_updates_
        Updates made.

    Examples
    --------
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> agent = Perceptron()
    >>> agent.reset(spaces.Box(-1, 1, (2,), np.float32), spaces.Discrete(2), seed=0)
    >>> x = np.array([0.6, -0.8], dtype=np.float32)
    >>> agent.act(x)  # w = 0: a tie tastes
    1
    >>> agent.update(x, 1, -1.0, {"revealed": True, "y": 0})  # a tasted negative
    >>> agent.coef_.tolist(), agent.intercept_, agent.act(x)
    ([-0.6000000238418579, 0.800000011920929], -1.0, 0)

    References
    ----------
    F. Rosenblatt. The perceptron: a probabilistic model for information
    storage and organization in the brain. Psychological Review 65, 1958.

    D. Sculley. Practical learning from one-sided feedback. KDD 2007,
    Sections 2.1 and 4.1.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **COST_CONSTRAINTS,
        "eta": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        # its square is the bias's step (1e300 overflowed): 1e6 already lets the constant
        # feature outweigh any standardised one a million-fold
        "intercept_scaling": [Interval(Real, 0, 1e6, closed="right")],
    }

    def __init__(
        self,
        eta: float = 1.0,
        class_weight: dict[int, float] | None = None,
        threshold: float = 0.0,
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
    ) -> None:
        self.eta = eta
        self.class_weight = class_weight
        self.threshold = threshold
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling

    def _half_margin(self) -> float:
        """Update when ``y f(x) <= _half_margin()``: 0 for the classical perceptron."""
        return 0.0

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Start from ``w = 0``, ``b = 0``; precompute the step ``eta c_y y`` of each label."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.half_margin_ = self._half_margin()
        c_neg, c_pos = self.class_weights_
        self.step_sizes_ = (-float(self.eta) * c_neg, float(self.eta) * c_pos)
        # b is the weight of a constant feature s: it moves by s^2 times the weights' step
        self.intercept_step_ = float(self.intercept_scaling) ** 2 if self.fit_intercept else 0.0

    def learn(self, x: Any, y: Any) -> None:
        """Update on ``(x, y)`` when ``y (w . x + b) <= m / 2`` (``y`` in {0, 1}, used as -1/+1)."""
        label = check_label(y)
        x = np.asarray(x, dtype=self.coef_.dtype)
        self.n_learned_ += 1
        score = self.raw_score(x)
        if (score if label else -score) <= self.half_margin_:
            step = self.step_sizes_[label]
            _AXPY[self.coef_.dtype](x, self.coef_, a=step)
            self.intercept_ += step * self.intercept_step_
            self.n_updates_ += 1


class MarginPerceptron(Perceptron):
    """The perceptron with margins: update on mistakes and within the margin (Figure 5).

    As :class:`Perceptron`, but the update also fires on correctly
    classified examples with ``y (w . x + b) <= m / 2``, the margin planes
    lying ``m / 2`` either side of the hyperplane (``m = 0`` is the
    classical perceptron). Under one-sided feedback a tasted positive
    inside the margin pushes the hyperplane back towards the negatives, so
    the ratchet of the classical perceptron turns into a greedy search that
    samples the predicted negatives nearest the boundary (Sections 4.2-4.4:
    implicit uncertainty sampling).

    The features are expected roughly normalised, as the paper's were
    (Euclidean norm 1): ``m`` is measured in units of ``w . x``, and one
    update moves ``f(x)`` by ``eta c_y (||x||^2 + 1)``. Scaling ``m`` and
    ``eta`` together changes nothing from ``w = 0`` (``threshold = 0``);
    what matters is ``m / (eta ||x||^2)``. Features of norm ``r`` behave
    like unit-norm ones with margin ``m / r^2``, so scale ``m`` by ``r^2``
    (e.g. ``r^2 = dim`` for standard normal features) or normalise the
    observations. A moderate rate (``eta <= m / 2``, Section 4.4) keeps an
    update from overshooting past the positive class.

    Parameters
    ----------
    m
        Margin width: update when ``y f(x) <= m / 2``. The paper's default
        is 2 (with ``eta = 1``), which puts the margin planes at
        ``f(x) = +-1`` like an SVM's.
    eta
        Learning rate.
    class_weight
        Example weighting ``{0: c_neg, 1: c_pos}`` (Section 5; see
        :class:`Perceptron`).
    threshold
        Threshold biasing: predict positive when ``w . x + b >= threshold``
        (Section 5; see :class:`Perceptron`).
    fit_intercept
        Learn the bias ``b``.
    intercept_scaling
        Value ``s`` of the constant feature whose weight is ``b``: an update
        moves ``b`` by ``eta c_y y s^2`` (see :class:`Perceptron`).

    Attributes
    ----------
    coef_
        The weight vector ``w``.
    intercept_
        The bias ``b``.
    class_weights_
        ``(c_neg, c_pos)``.
    n_learned_
        Revealed labels seen.
    n_updates_
        Updates made (mistakes and margin updates).

    Examples
    --------
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> agent = MarginPerceptron(m=2.0)
    >>> agent.reset(spaces.Box(-1, 1, (2,), np.float32), spaces.Discrete(2), seed=0)
    >>> x = np.array([0.6, 0.8], dtype=np.float32)
    >>> agent.update(x, 1, 1.0, {"revealed": True, "y": 1})  # inside the margin: update
    >>> agent.raw_score(x)  # ||x||^2 + 1 = 2 > m / 2: outside now
    2.0
    >>> agent.update(x, 1, 1.0, {"revealed": True, "y": 1})  # correct and outside: no update
    >>> agent.n_learned_, agent.n_updates_
    (2, 1)

    References
    ----------
    W. Krauth and M. Mezard. Learning algorithms with optimal stability in
    neural networks. Journal of Physics A 20(11), 1987.

    D. Sculley. Practical learning from one-sided feedback. KDD 2007,
    Figure 5 and Sections 4-5.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **Perceptron._parameter_constraints,
        "m": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        m: float = 2.0,
        eta: float = 1.0,
        class_weight: dict[int, float] | None = None,
        threshold: float = 0.0,
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
    ) -> None:
        self.m = m
        self.eta = eta
        self.class_weight = class_weight
        self.threshold = threshold
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling

    def _half_margin(self) -> float:
        return float(self.m) / 2.0
