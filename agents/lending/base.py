"""What every cutoff-lending agent shares: the task's terms and the GLM fit."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from agents.base import Agent, Interval, Real, StrOptions, check_finite, float_array
from agents.lending._fast import blas_row, one_row, refit
from agents.lending.glm import SOLVERS, GLMEstimator, width_and_product
from osfb_gym.core.links import get_link
from osfb_gym.core.replicas import ReplicaSpec

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


def any_value(value: Any) -> bool:
    """Accept every value (a :attr:`CutoffAgent.replica_fit` entry: the shared fit honours it)."""
    return True


#: the replicas' fit of every cutoff agent's own hyperparameters (CutoffAgent.replica_fit):
#: any ridge; the incremental solver; the default ridge everywhere and the default refit
FIT_REPLICA: dict[str, Any] = {
    "l2": any_value,
    "solver": ("incremental",),
    "design_l2": (None,),
    "free_intercept": (False,),
    "refit": ("newton",),
}
#: the runner of the cells of cutoff agents that run as replicas (CutoffAgent.replica_spec),
#: and the envs whose lockstep vector env it drives
REPLICA_RUNNER = "agents.lending._fast:CutoffReplicas"
REPLICA_ENV_IDS = ("OneSidedLending-v0",)
# the methods a class must vouch for (by declaring its own replica_fit) to share a fit
_FIT_METHODS = ("reset", "act", "update", "learn", "decision_beta")


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
    #: Each hyperparameter -> the values with which replicas may learn this agent's fit in
    #: one state shared with other agents (:mod:`agents.lending._fast.shared_rls`): a tuple
    #: of values, or a test of the value (:func:`any_value`). A class shares only if every
    #: hyperparameter of its signature is listed (by it or a parent) and, where it overrides
    #: how it learns or decides, it lists them itself: else it learns on its own in the
    #: replicas and :meth:`replica_fit_refusal` says why (checked when the class is made).
    replica_fit: ClassVar[dict[str, Any]] = {}
    _replica_refusal: ClassVar[str | None] = "CutoffAgent is abstract"
    # whether the class writes its own exploration term (not the bonus of bonus_scale)
    _own_exploration: ClassVar[bool] = False
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
    # whether the batch-of-one path runs its products compiled (agents.lending._fast.blas_row),
    # and what it needs, fixed at reset: the compiled products of a decision (or None), the
    # model whose steps between refits are compiled (or None), whether the action space is
    # one applicant's MultiBinary, and the range of an outcome under the link
    _lean_blas: bool = False
    _lean_act: Any = None
    _lean_logistic: bool = False
    _lean_learner: GLMEstimator | None = None
    _lean_binary: bool = False
    _lean_outcomes: tuple[float, float] = (0.0, 0.0)
    # the compiled decision's row and A^{-1} row, written by each act (the update reads them)
    _lean_rows: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))

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
            if shape[0] == 1:  # the lean path's fit (a logistic refit in cheaper products)
                refit.fit(self.model_)
            else:
                self.model_.fit()
        self.beta_ = self.decision_beta()
        self.t_ = 0
        self._lean_shape = (1, shape[1])
        self._lean_cache = None
        # (numba is loaded only for a batch of one, the only batch the lean path takes)
        self._lean_blas = shape[0] == 1 and blas_row.available(shape[1])
        kernels = blas_row.kernels(shape[1]) if self._lean_blas else None
        self._lean_act = None if kernels is None or self._own_exploration else kernels.act
        self._lean_logistic = self.link_.name == "logistic"  # else the identity link
        self._lean_rows = (np.empty(shape[1]), np.empty(shape[1]))
        learns = kernels is not None and blas_row.learns(self.model_)
        self._lean_learner = self.model_ if learns else None
        check = self._action_check
        self._lean_binary = check.kind == "binary" and check.shape == (1,)
        self._lean_outcomes = OUTCOME_RANGE[self.link_.name]

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

    def bonus_scale(self) -> float | None:
        """Return the scale ``s`` of this decision's uncertainty bonus ``s * sqrt(x^T A^{-1} x)``.

        None (the default): no such bonus. A subclass that returns a scale
        gets the bonus from :meth:`exploration` without writing it (Adaptive);
        the one-applicant fast path and the replicas compute the same
        ``s * width`` from the same scale (one call per decision: a schedule
        may advance).
        """
        return None

    def bonus_grows_in_batch(self) -> bool:
        """Whether ``A`` takes each approved applicant before the next one's width (Algorithm 2)."""
        return False

    def exploration(self, x: np.ndarray) -> np.ndarray | float:
        """Term added to ``mu(x . beta_hat) - c`` before thresholding at 0.

        The default is the uncertainty bonus of :meth:`bonus_scale` (0.0 without one).
        """
        scale = self.bonus_scale()
        if scale is None:
            return 0.0
        if len(x) > 1 and self.bonus_grows_in_batch():
            return self._sequential_bonus(x, scale)
        return scale * self.model_.widths(x)

    def _sequential_bonus(self, x: np.ndarray, scale: float) -> np.ndarray:
        """Return the bonuses of Algorithm 2's inner loop: ``A`` grows by each approval.

        A copy of ``A^{-1}`` takes the approved applicants' rank-one updates
        (Sherman-Morrison); the model itself learns their outcomes in
        :meth:`update`, so nothing is counted twice.
        """
        a_inv = self.model_.A_inv.copy()
        margin = np.asarray(self.link_.mean(x @ self.beta_), dtype=float) - self.cutoff_
        bonus = np.empty(len(x))
        for j, row in enumerate(x):
            width, u = width_and_product(a_inv, row)
            bonus[j] = scale * width
            if margin[j] + bonus[j] > 0:  # approved: the same test act() applies
                a_inv -= np.outer(u, u) / (1.0 + float(row @ u))
        return bonus

    def act(self, observation: Any) -> np.ndarray:
        """Approve the applicants whose score ``mu(x . beta_) - c + exploration`` is positive."""
        if type(observation) is np.ndarray and observation.shape == self._lean_shape:
            return one_row.act(self, observation)
        self._lean_cache = None
        x = self._check_observation(observation, "act")
        self.t_ += 1
        mu = np.asarray(self.link_.mean(x @ self.beta_), dtype=float)
        score = mu - self.cutoff_ + self.exploration(x)
        return (score > 0).astype(np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Add the revealed outcomes to the fit and refit."""
        cache = self._lean_cache
        if cache is not None and observation is cache[0]:
            self._lean_cache = None
            if one_row.update(self, cache, action, reward, feedback):
                return
        else:
            self._check_update(action, reward, feedback)
        x, y = self._revealed(observation, feedback)
        if len(y):
            self.learn(x, y)

    def replica_spec(self) -> ReplicaSpec | None:
        """How this agent runs as a replica of a lockstep episode (None: alone).

        Every cutoff agent can (:class:`~agents.lending._fast.CutoffReplicas`
        calls an agent's own ``act``/``update`` where it has them), except with
        the paper's logistic fit (``design_l2``, ``free_intercept``) or a
        non-default ``refit``: such an agent learns on its own in a replica
        anyway, and alone it needs neither the replicas' row log nor a grid of
        agents in memory at once, at the same speed.
        """
        if self.design_l2 is not None or self.free_intercept or self.refit != "newton":
            return None
        env_ids = tuple(env_id for env_id in self.env_ids if env_id in REPLICA_ENV_IDS)
        return ReplicaSpec(REPLICA_RUNNER, env_ids) if env_ids else None

    def replica_fit_refusal(self) -> str | None:
        """Why replicas cannot learn this agent's fit in a shared state; None: they can.

        Reads the class's :attr:`replica_fit` against :meth:`get_params`; what
        the shared state needs of the task (the linear link, the incremental
        solver's recursive least squares) the replicas check themselves.
        """
        if self._replica_refusal is not None:
            return self._replica_refusal
        for name, value in self.get_params(deep=False).items():
            allowed = self.replica_fit[name]
            if not (allowed(value) if callable(allowed) else value in allowed):
                return f"{type(self).__name__}({name}={value!r}) learns on its own"
        return None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Decide once whether the class's parameters and methods let replicas share its fit."""
        super().__init_subclass__(**kwargs)
        cls._replica_refusal = _replica_refusal(cls)
        cls._own_exploration = cls.exploration is not CutoffAgent.exploration

    def learn(self, x: np.ndarray, y: np.ndarray) -> None:
        """Add revealed examples ``(x, y)`` to the fit, refit, refresh ``beta_``."""
        self.model_.add(x, y)
        self.model_.fit()
        self.beta_ = self.decision_beta()


def _replica_refusal(cls: type[CutoffAgent]) -> str | None:
    """Why no agent of ``cls`` can share its fit in the replicas; None: its values decide."""
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    names = [
        name
        for name, parameter in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and parameter.kind not in variadic
    ]
    unlisted = sorted(set(names) - set(cls.replica_fit))
    if unlisted:
        return (
            f"{cls.__name__} learns on its own in the replicas: its hyperparameters {unlisted} "
            "are not in its replica_fit"
        )
    own = [name for name in _FIT_METHODS if name in vars(cls)]
    if own and "replica_fit" not in vars(cls):
        return (
            f"{cls.__name__} learns on its own in the replicas: it overrides {own} without "
            "declaring its own replica_fit"
        )
    return None
