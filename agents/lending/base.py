"""What every cutoff-lending agent shares: the task's terms and the GLM fit."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Agent, Interval, Real, StrOptions, check_finite, float_array
from agents.lending.glm import SOLVERS, GLMEstimator
from osfb_gym.core.links import get_link

# The values an outcome y can take under each link: the Bernoulli outcomes of
# the logistic link (and the labels of a dataset) lie in [0, 1]; any finite number
# under the linear link
_LARGEST = float(np.finfo(float).max)
OUTCOME_RANGE: dict[str, tuple[float, float]] = {
    "linear": (-_LARGEST, _LARGEST),
    "logistic": (0.0, 1.0),
}

# the hyperparameters every cutoff agent has; subclasses extend the table
FIT_CONSTRAINTS: dict[str, list[Any]] = {
    "l2": [Interval(Real, 0, None, closed="neither")],
    "solver": [StrOptions(set(SOLVERS))],
}
# the options of the paper's fit (Greedy, the exploration baselines, Adaptive); their
# defaults keep the ridge l2 on every coordinate, in the fit and in A alike
PAPER_FIT_CONSTRAINTS: dict[str, list[Any]] = {
    **FIT_CONSTRAINTS,
    "design_l2": [Interval(Real, 0, None, closed="neither"), None],
    "free_intercept": ["boolean"],
}


class CutoffAgent(Agent):
    """Approve an applicant when its score is positive; learn from revealed outcomes.

    The score is ``mu(x . beta_) - c`` plus whatever exploration term
    a subclass adds in :meth:`exploration`. The estimate ``beta_hat`` is
    refit on every revealed example (the warm-start sample included) after
    each batch, as the paper's learners do; ``beta_`` is the parameter
    decisions use, ``beta_hat`` itself unless :meth:`decision_beta` says
    otherwise (Adaptive's projection step).
    """

    env_ids: ClassVar[tuple[str, ...]] = ("OneSidedLending-v0",)
    abstract = True
    _parameter_constraints: ClassVar[dict[str, Any]] = FIT_CONSTRAINTS
    l2: float
    solver: str
    # the paper's fit options (PAPER_FIT_CONSTRAINTS): the agents that offer them set them
    # in __init__; for the rest these defaults (the ridge l2 everywhere) hold
    design_l2: float | None = None
    free_intercept: bool = False
    # how the incremental logistic fit refits (agents.lending.glm.GLMEstimator); Adaptive
    # offers it as a hyperparameter
    refit: str = "newton"
    # the lean path of a batch of one: the observation shape it takes (set by reset) and
    # what the last decision computed for the update (observation, row, A^{-1} row, n)
    _lean_shape: tuple[int, int] | None = None
    _lean_cache: tuple[Any, np.ndarray, np.ndarray | None, int] | None = None

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Read the cutoff and link from the reset feedback; fit the warm start."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        if not feedback or "cutoff" not in feedback or "link" not in feedback:
            raise ValueError(
                f"{type(self).__name__}.reset needs feedback with the task's 'cutoff' and "
                "'link' (the reset info['feedback'] of OneSidedLending), got "
                f"{None if feedback is None else sorted(feedback)}"
            )
        self.cutoff_ = float(feedback["cutoff"])
        self.link_ = get_link(feedback["link"])
        self._check_warm_start(feedback)
        shape = getattr(observation_space, "shape", None)
        if shape is None or len(shape) != 2:
            raise ValueError(
                f"{type(self).__name__} needs a (batch, features) observation_space "
                f"(OneSidedLending's), got {observation_space}"
            )
        self.model_ = GLMEstimator(
            self.link_,
            shape[1],
            self.l2,
            self.solver,
            design_l2=self.design_l2,
            free_intercept=self.free_intercept,
            refit=self.refit,
        )
        warm = feedback.get("warm_start")
        if self.free_intercept:
            self._check_intercept(warm)
        if warm is not None and len(warm["X"]):
            self.model_.add(warm["X"], warm["y"])
            self.model_.fit()
        self.beta_ = self.decision_beta()
        self.t_ = 0
        self._lean_shape = (1, shape[1])
        self._lean_cache = None

    def _check_intercept(self, warm: dict[str, Any] | None) -> None:
        """Raise unless the warm start's last column is the intercept ``free_intercept`` names."""
        if warm is None or not len(warm["X"]) or not np.all(np.asarray(warm["X"])[:, -1] == 1.0):
            raise ValueError(
                f"{type(self).__name__}(free_intercept=True) leaves the last feature out of the "
                "ridge and needs it to be an intercept (all ones, as in a dataset-backed "
                "OneSidedLending's warm start); this task's warm start has none"
            )

    def _check_warm_start(self, feedback: dict[str, Any]) -> None:
        """Check the labelled warm-start sample of the reset feedback before anything fits it."""
        sample = feedback.get("warm_start")
        if sample is not None and len(sample["X"]):
            x = np.asarray(sample["X"], dtype=float)
            y = np.asarray(sample["y"], dtype=float)
            self._check_revealed(x, y, "the warm-start features", "the warm-start outcomes")

    def _check_observation(self, observation: Any, method: str) -> np.ndarray:
        """Return ``observation`` as a float (batch, features) array; raise if it cannot be one.

        Also raises :class:`~agents.base.NotResetError` before :meth:`reset`.
        """
        self._require_reset(method)
        x = float_array(observation, "observation", f"{type(self).__name__}.{method}")
        if x.ndim != 2 or x.shape[1] != self.model_.dim:
            raise ValueError(
                f"{type(self).__name__}.{method}: observation must have shape "
                f"(batch, {self.model_.dim}), got {x.shape}"
            )
        check_finite(x, "observation", type(self).__name__)
        return x

    def _check_revealed(self, x: np.ndarray, y: np.ndarray, x_name: str, y_name: str) -> None:
        """Raise unless features ``x`` are finite and outcomes ``y`` in the link's range."""
        owner = type(self).__name__
        check_finite(x, x_name, owner)
        low, high = OUTCOME_RANGE[self.link_.name]
        # written so that NaN fails the test too (every comparison with NaN is False)
        if len(y) and not (y.min() >= low and y.max() <= high):
            check_finite(y, y_name, owner)
            bad = y[(y < low) | (y > high)][0]
            raise ValueError(
                f"{owner}: {y_name} must lie in [{low:g}, {high:g}] under the "
                f"{self.link_.name} link, got {bad:g}"
            )

    def _revealed(self, observation: Any, feedback: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return the revealed rows of ``observation`` and their outcomes, checked."""
        self._require_reset("update")
        owner = f"{type(self).__name__}.update"
        if type(observation) is not np.ndarray:  # (an array is checked below, if it is read)
            float_array(observation, "observation", owner)
        revealed = np.asarray(feedback["revealed"])
        if revealed.dtype.kind not in "biu":
            raise TypeError(
                f"{owner}: feedback['revealed'] must be a boolean mask, got "
                f"{feedback['revealed']!r:.80}"
            )
        revealed = revealed.astype(bool, copy=False)
        if not revealed.any():
            return np.empty((0, self.model_.dim)), np.empty(0)
        x = float_array(observation, "observation", owner)
        y = float_array(feedback["y"], "feedback['y']", owner)
        if x.shape != (revealed.size, self.model_.dim) or y.shape != revealed.shape:
            raise ValueError(
                f"{owner}: observation must have shape (batch, {self.model_.dim}) and "
                f"feedback['revealed'], feedback['y'] shape (batch,); got {x.shape}, "
                f"{revealed.shape}, {y.shape}"
            )
        x, y = x[revealed], y[revealed]
        self._check_revealed(x, y, "observation (its revealed rows)", "feedback['y']")
        return x, y

    def decision_beta(self) -> np.ndarray:
        """Return the parameter decisions use after a fit (default: the estimate itself)."""
        return self.model_.beta

    def exploration(self, x: np.ndarray) -> np.ndarray | float:
        """Term added to ``mu(x . beta_hat) - c`` before thresholding at 0."""
        return 0.0

    def bonus_one(self, x: np.ndarray) -> tuple[float, np.ndarray | None]:
        """:meth:`exploration` of a batch of one ``x`` (shape (1, d)) as a float.

        Also returns ``A^{-1} x[0]`` if computing the bonus computed it (as
        :func:`~agents.lending.glm._sherman_morrison` would), for the update
        to reuse; else None.
        """
        return float(np.asarray(self.exploration(x)).reshape(-1)[0]), None

    def _act_one(self, observation: np.ndarray) -> np.ndarray:
        """:meth:`act` on a batch of one: the same decision with scalar arithmetic.

        Validation is one finiteness test of the score (a non-finite
        observation makes it non-finite); the full check runs only then.
        """
        x = np.asarray(observation, dtype=float)
        row = x[0]
        self.t_ += 1
        mu = float(self.link_.mean(float(row.dot(self.beta_))))
        bonus, u = self.bonus_one(x)
        score = mu - self.cutoff_ + bonus
        if not math.isfinite(score):
            self._check_observation(observation, "act")
        self._lean_cache = (observation, row, u, self.model_.n)
        return np.array([score > 0], dtype=np.int8)

    def act(self, observation: Any) -> np.ndarray:
        """Approve the applicants whose score is positive."""
        if type(observation) is np.ndarray and observation.shape == self._lean_shape:
            return self._act_one(observation)
        self._lean_cache = None
        x = self._check_observation(observation, "act")
        self.t_ += 1
        mu = np.asarray(self.link_.mean(x @ self.beta_), dtype=float)
        score = mu - self.cutoff_ + self.exploration(x)
        return (score > 0).astype(np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Add the revealed outcomes to the fit and refit."""
        self._check_update(action, reward, feedback)
        cache = self._lean_cache
        if cache is not None and observation is cache[0]:
            self._lean_cache = None
            if self._update_one(cache, feedback):
                return
        x, y = self._revealed(observation, feedback)
        if len(y):
            self.learn(x, y)

    def _update_one(self, cache: tuple[Any, np.ndarray, Any, int], feedback: Any) -> bool:
        """Learn from the batch of one the last :meth:`_act_one` decided; False: not handled here.

        Learns the revealed outcome with the row (and ``A^{-1} x``) the
        decision computed; the checks are the outcome's range test.
        """
        revealed, outcomes = feedback["revealed"], feedback["y"]
        try:
            if len(revealed) != 1 or len(outcomes) != 1 or isinstance(revealed, str):
                return False
            if not revealed[0]:
                return True
            target = float(outcomes[0])
        except (TypeError, ValueError):  # not sequences of numbers: the general path names it
            return False
        low, high = OUTCOME_RANGE[self.link_.name]
        if not low <= target <= high:  # NaN fails too
            return False  # the general path raises the error
        _, row, u, n = cache
        self.model_.learn_row(row, target, u if n == self.model_.n else None)
        self.beta_ = self.decision_beta()
        return True

    def learn(self, x: np.ndarray, y: np.ndarray) -> None:
        """Add revealed examples ``(x, y)`` to the fit, refit, refresh ``beta_``."""
        self.model_.add(x, y)
        self.model_.fit()
        self.beta_ = self.decision_beta()
