"""What every reject-option learner shares: a score, a rejection width, the query loop.

A :class:`RejectLearner` keeps a score ``f(x)`` and a rejection width
``rho >= 0``. It predicts +1 where ``f(x) > rho``, -1 where ``f(x) < -rho``
and rejects in between (eq. 1 of Shah and Manwani, 2020); whether it asks
for the label is each algorithm's own rule (:meth:`RejectLearner.wants_label`).
When a label is revealed it takes one gradient step of its surrogate loss
(:meth:`RejectLearner.loss_gradient`) in ``f`` and in ``rho``.

The score is linear, ``f(x) = w . x`` (the paper's ``w_1 = 0``), or a kernel
expansion ``f(x) = sum_i a_i k(x_i, x)`` over the examples that updated it
(the paper's supplementary kernel versions), with scikit-learn's kernel
functions and an optional budget of stored examples.

The step size starts at ``eta`` and falls by ``eta_decay`` after every
trial, down to ``eta_min``: the paper's experiments "initialize step size
by a small value, and after every trial, step size decreases by a small
constant", without printing the values; ours are stated on each class.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

from agents.base import (
    Agent,
    Integral,
    Interval,
    Real,
    StrOptions,
    check_finite,
    example_dim,
    float_array,
)
from osfb_gym.core.validation import check_rejection_cost

ENV_IDS = ("RejectOption-v0",)
PREDICT_NEGATIVE, REJECT, PREDICT_POSITIVE = 0, 1, 2

# the hyperparameters every reject-option learner has; DSAL and DSOL add gamma
REJECT_CONSTRAINTS: dict[str, list[Any]] = {
    # at d >= 0.5 rejecting is never cheaper than a coin flip; d = 0 makes it free
    "d": [Interval(Real, 0, 0.5, closed="neither"), None],
    "eta": [Interval(Real, 0, None, closed="neither")],
    "eta_decay": [Interval(Real, 0, None, closed="left")],
    "eta_min": [Interval(Real, 0, None, closed="left")],
    "rho0": [Interval(Real, 0, None, closed="left")],
    "kernel": [StrOptions({"linear", *PAIRWISE_KERNEL_FUNCTIONS})],
    "kernel_params": [dict, None],
    "budget": [Interval(Integral, 1, None, closed="left"), None],
}


def check_reject_spaces(observation_space: gym.Space, action_space: gym.Space, owner: str) -> int:
    """Return the number of features; check that the spaces are RejectOption-v0's."""
    dim = example_dim(observation_space, owner)
    if not isinstance(action_space, spaces.MultiDiscrete) or action_space.nvec.tolist() != [3, 2]:
        raise ValueError(
            f"{owner} needs action_space MultiDiscrete([3, 2]) (decision, query), "
            f"got {action_space}"
        )
    return dim


class LinearScore:
    """``f(x) = w . x``, from ``w = 0``; an update adds ``c x`` to ``w``."""

    def __init__(self, dim: int) -> None:
        self.w = np.zeros(dim)

    def __call__(self, x: np.ndarray) -> float:
        """Return ``f(x)``."""
        return float(self.w @ x)

    def add(self, x: np.ndarray, c: float) -> None:
        """Add ``c k(x, .)`` to ``f``: ``w += c x``."""
        self.w += c * x

    @property
    def size(self) -> int:
        """Stored examples (none: the weights summarise them)."""
        return 0


def _polynomial_row(
    X: np.ndarray, x: np.ndarray, degree: float = 3, gamma: float | None = None, coef0: float = 1
) -> np.ndarray:
    """scikit-learn's ``polynomial_kernel(X, x[None, :])``, the same operations in the same order.

    Without its input validation, which costs ~30 times the kernel itself
    for one row (a kernel learner scores one example per step).
    """
    k = X @ x[None, :].T
    k *= 1.0 / X.shape[1] if gamma is None else gamma
    k += coef0
    k **= degree
    return k


class KernelScore:
    """``f(x) = sum_i a_i k(x_i, x)`` over stored examples; an update stores ``(x, c)``.

    With a ``budget`` the oldest stored example is dropped when a new one
    would exceed it (a sliding window of support vectors), so a step costs
    at most ``budget`` kernel evaluations.
    """

    def __init__(self, dim: int, kernel: str, params: dict[str, Any], budget: int | None) -> None:
        self.kernel, self.params, self.budget = kernel, params, budget
        capacity = 64 if budget is None else min(budget, 64)
        self.X = np.zeros((capacity, dim))
        self.a = np.zeros(capacity)
        self.n = 0  # filled slots
        self.next = 0  # slot of the next example (a ring once the budget is reached)

    def __call__(self, x: np.ndarray) -> float:
        """Return ``f(x)``, one kernel row against the stored examples."""
        if self.n == 0:
            return 0.0
        if self.kernel == "poly" and set(self.params) <= {"degree", "gamma", "coef0"}:
            k = _polynomial_row(self.X[: self.n], x, **self.params)
        else:
            k = pairwise_kernels(self.X[: self.n], x[None, :], metric=self.kernel, **self.params)
        return float(self.a[: self.n] @ k[:, 0])

    def add(self, x: np.ndarray, c: float) -> None:
        """Add ``c k(x, .)`` to ``f``: store ``x`` with coefficient ``c``."""
        if self.next == self.X.shape[0] and (self.budget is None or self.next < self.budget):
            grow = self.X.shape[0] * 2 if self.budget is None else min(2 * self.next, self.budget)
            self.X = np.resize(self.X, (grow, self.X.shape[1]))
            self.a = np.resize(self.a, grow)
        if self.budget is not None and self.next == self.budget:
            self.next = 0  # the budget is full: overwrite the oldest
        self.X[self.next] = x
        self.a[self.next] = c
        self.next += 1
        self.n = max(self.n, self.next)

    @property
    def size(self) -> int:
        """Stored examples (support vectors)."""
        return self.n


class RejectLearner(Agent):
    """A reject-option classifier learned online from the labels it asks for.

    Subclasses implement :meth:`wants_label` (the query rule) and
    :meth:`loss_gradient` (the surrogate loss's gradient in ``z = y f(x)``
    and ``rho``), and declare the hyperparameters below in ``__init__``.

    Hyperparameters
    ---------------
    d
        Cost of a rejection; None takes the env's (its reset feedback).
    eta, eta_decay, eta_min
        Step size ``eta_t = max(eta - eta_decay * t, eta_min)``, ``t`` the
        trials so far.
    rho0
        Initial rejection width (the paper's ``rho_1 = 1``).
    kernel
        ``"linear"`` (``f(x) = w . x``) or a scikit-learn pairwise kernel
        (``"poly"``, ``"rbf"``, ...) for the kernel expansion.
    kernel_params
        Keyword arguments of the kernel (e.g. ``{"degree": 2}``).
    budget
        Most examples a kernel expansion stores; None: no limit.

    Attributes
    ----------
    rho_
        The rejection width.
    d_
        The rejection cost in use.
    score_
        The score function (:class:`LinearScore` or :class:`KernelScore`).
    t_
        Trials so far; ``n_queries_``, ``n_updates_`` count the labels
        asked for and the updates made.
    """

    env_ids: ClassVar[tuple[str, ...]] = ENV_IDS
    abstract = True
    d: float | None
    eta: float
    eta_decay: float
    eta_min: float
    rho0: float
    kernel: str
    kernel_params: dict[str, Any] | None
    budget: int | None
    _parameter_constraints: ClassVar[dict[str, Any]] = REJECT_CONSTRAINTS

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Validate the hyperparameters; start from ``f = 0``, ``rho = rho0``.

        ``feedback`` is the env's reset feedback; its ``"d"`` is the
        rejection cost when the ``d`` hyperparameter is None.
        """
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        dim = check_reject_spaces(observation_space, action_space, type(self).__name__)
        self._shape = (dim,)
        self.d_ = self._resolve_d(feedback)
        if self.kernel == "linear":
            self.score_: LinearScore | KernelScore = LinearScore(dim)
        else:
            self.score_ = KernelScore(dim, self.kernel, dict(self.kernel_params or {}), self.budget)
        self.rho_ = self.rho0
        self.t_ = 0
        self.n_queries_ = 0
        self.n_updates_ = 0
        self._last: tuple[Any, np.ndarray, float] | None = None

    def _resolve_d(self, feedback: dict[str, Any] | None) -> float:
        if self.d is not None:
            return float(self.d)
        if feedback is None or "d" not in feedback:
            raise ValueError(
                f"{type(self).__name__} needs the rejection cost: set d=... or reset it with "
                "the env's reset feedback (which holds 'd')"
            )
        return check_rejection_cost(feedback["d"], "feedback['d']")

    def _check_params(self) -> None:
        """Check what the table cannot: ``eta_min <= eta``; kernel options need a kernel."""
        if self.eta_min > self.eta:
            raise ValueError(
                f"The 'eta_min' parameter of {type(self).__name__} must be <= eta "
                f"({self.eta!r}), the first step size. Got {self.eta_min!r} instead."
            )
        if self.kernel == "linear" and (self.kernel_params or self.budget is not None):
            raise ValueError(
                "kernel_params and budget apply to a kernel expansion; kernel='linear' keeps "
                f"weights, got kernel_params={self.kernel_params!r}, budget={self.budget!r}"
            )

    # ------------------------------------------------------------------ the rule
    @property
    def step_size(self) -> float:
        """The step size of the current trial."""
        return max(self.eta - self.eta_decay * self.t_, self.eta_min)

    def decide(self, score: float) -> int:
        """Return the decision of eq. 1: 2 (+1) above ``rho``, 0 (-1) below ``-rho``, else 1."""
        if score > self.rho_:
            return PREDICT_POSITIVE
        if score < -self.rho_:
            return PREDICT_NEGATIVE
        return REJECT

    def wants_label(self, score: float) -> bool:
        """Whether to ask for the label of an example of this score."""
        raise NotImplementedError(f"{type(self).__name__} must implement wants_label()")

    def loss_gradient(self, z: float) -> tuple[float, float]:
        """``(dL/dz, dL/drho)`` of the surrogate loss at margin ``z`` and the current ``rho``."""
        raise NotImplementedError(f"{type(self).__name__} must implement loss_gradient()")

    def learn(self, x: np.ndarray, y: int, score: float) -> None:
        """One gradient step on a revealed example ``(x, y)``, ``y`` in {-1, +1}."""
        gz, grho = self.loss_gradient(y * score)
        if gz == 0.0 and grho == 0.0:
            return
        eta = self.step_size
        self.score_.add(x, -eta * gz * y)  # dz/df = y, so the step in f is -eta * gz * y
        self.rho_ = max(self.rho_ - eta * grho, 0.0)  # rho stays a width (rho >= 0)
        self.n_updates_ += 1

    # ------------------------------------------------------------------ Agent loop
    def _observation(self, observation: Any, method: str) -> np.ndarray:
        """Return ``observation`` as a finite float vector of the space's shape, or raise."""
        owner = f"{type(self).__name__}.{method}"
        x = float_array(observation, "observation", owner)
        if x.shape != self._shape:
            raise ValueError(f"{owner}: observation must have shape {self._shape}, got {x.shape}")
        check_finite(x, "observation", type(self).__name__)
        return x

    def act(self, observation: Any) -> np.ndarray:
        """Return ``[decision, query]`` for the example."""
        self._require_reset("act")
        x = self._observation(observation, "act")
        score = self.score_(x)
        query = self.wants_label(score)
        self._last = (observation, x, score)
        return np.array([self.decide(score), int(query)], dtype=np.int64)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Learn from the step's label when it was revealed; count the trial."""
        self._check_update(action, reward, feedback)
        last = self._last
        if last is not None and last[0] is observation:
            _, x, score = last
        else:  # a caller that did not act through act(): score it afresh
            x = self._observation(observation, "update")
            score = self.score_(x)
        label = feedback["y"] if feedback["revealed"] else None
        if label is not None and label != 1 and label != -1:  # NaN and 0.5 too: never rounded
            raise ValueError(
                f"{type(self).__name__}: feedback['y'] must be a revealed label -1 or +1, "
                f"got {label!r}"
            )
        self.n_queries_ += int(action[1] == 1)
        if label is not None:
            self.learn(x, int(label), score)
        self.t_ += 1
        self._last = None
