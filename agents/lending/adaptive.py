"""Adaptive: the uncertainty-bonus algorithm of Jiang, Jiang and Pacchiano (2021)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from scipy.optimize import minimize

from agents.base import Integral, Interval, Real, StrOptions
from agents.lending.base import FIT_REPLICA, PAPER_FIT_CONSTRAINTS, CutoffAgent, any_value
from agents.lending.glm import REFITS, GLMEstimator


def theory_rho(
    t: int,
    *,
    dim: int,
    batch_size: int,
    horizon: int,
    delta: float,
    lipschitz: float,
    eta: float,
    feature_bound: float,
    beta_bound: float,
    mu_at_zero: float,
    cutoff: float,
    noise_scale: float,
    lambda0: float,
) -> float:
    """Return the confidence width ``rho_t(delta)`` of Algorithm 2.

    ``rho_t = (2L / eta) kappa C_{T,delta} sqrt(2 d log t) sqrt(log(2 d T / delta))``
    with ``kappa = sqrt(3 + 2 log(1 + 2 N B^2 / lambda0))`` and
    ``C_{T,delta} = L B M + gamma + c + phi sqrt(log(2 T / delta))``.
    ``log t`` is taken as ``log(1 + t)`` so that the first round (t = 1)
    is not left without a bonus.

    Examples
    --------
    >>> rho = theory_rho(10, dim=2, batch_size=1, horizon=100, delta=0.1, lipschitz=1.0,
    ...                  eta=1.0, feature_bound=1.0, beta_bound=1.0, mu_at_zero=0.0,
    ...                  cutoff=0.0, noise_scale=1.0, lambda0=1.0)
    >>> round(rho, 3)
    152.786
    """
    kappa = math.sqrt(3.0 + 2.0 * math.log(1.0 + 2.0 * batch_size * feature_bound**2 / lambda0))
    c_t = (
        lipschitz * feature_bound * beta_bound
        + mu_at_zero
        + abs(cutoff)
        + noise_scale * math.sqrt(math.log(2.0 * horizon / delta))
    )
    return (
        2.0
        * lipschitz
        / eta
        * kappa
        * c_t
        * math.sqrt(2.0 * dim * math.log(1.0 + t))
        * math.sqrt(math.log(2.0 * dim * horizon / delta))
    )


def project_estimate(model: GLMEstimator, bound: float) -> np.ndarray:
    """Project ``beta_hat`` onto ``||beta|| <= bound`` as Algorithm 2's projection step does.

    "Closest" is in the geometry of the estimating equation (2):
    ``argmin_{||b|| <= M} || g(b) - g(beta_hat) ||_{A^{-1}}`` with
    ``g(b) = sum_i x_i mu(x_i . b)`` over the revealed examples. Returns
    ``beta_hat`` itself when it is inside the ball. Solved by SLSQP from the
    radial projection, with the analytic gradient
    ``2 J^T A^{-1} (g(b) - g(beta_hat))``, ``J = X^T diag(mu'(X b)) X``.

    Examples
    --------
    >>> from osfb_gym.core.links import get_link
    >>> model = GLMEstimator(get_link("linear"), 2, 1.0)
    >>> model.add(np.eye(2), np.array([3.0, 4.0]))
    >>> _ = model.fit()
    >>> bool(abs(np.linalg.norm(project_estimate(model, 1.0)) - 1.0) < 1e-6)
    True
    """
    beta_hat = model.beta
    norm = float(np.linalg.norm(beta_hat))
    if norm <= bound:
        return beta_hat
    x = model.X
    target = x.T @ np.asarray(model.link.mean(x @ beta_hat), dtype=float)

    def objective(beta: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ beta
        residual = x.T @ np.asarray(model.link.mean(z), dtype=float) - target
        weighted = model.A_inv @ residual
        jacobian = (x * np.asarray(model.link.derivative(z), dtype=float)[:, None]).T @ x
        return float(residual @ weighted), 2.0 * jacobian @ weighted

    result = minimize(
        objective,
        beta_hat * (bound / norm),
        jac=True,
        method="SLSQP",
        constraints=[
            {"type": "ineq", "fun": lambda b: bound**2 - b @ b, "jac": lambda b: -2.0 * b}
        ],
    )
    beta = np.asarray(result.x, dtype=float)
    # SLSQP may end a hair outside the ball; the radial step restores feasibility
    return beta * min(1.0, bound / max(float(np.linalg.norm(beta)), np.finfo(float).tiny))


class Adaptive(CutoffAgent):
    """Approve when the estimate plus an uncertainty bonus beats the cutoff (Algorithm 2).

    After fitting ``beta_hat`` on every revealed outcome, the learner
    approves applicant ``x`` when
    ``mu(x . beta_hat) - c + rho_t * sqrt(x^T A^{-1} x) > 0``, where ``A``
    is ``lambda I`` plus the sum of ``x x^T`` over revealed examples. The
    bonus is large exactly where little has been observed, so an applicant
    type the estimate undervalues still gets approved, and observed, until
    the uncertainty about it is small: this is what lets it escape the trap
    of Theorem 1 that catches :class:`~agents.lending.Greedy`, with
    cumulative one-sided loss ``O~(sqrt(T))`` (Theorem 2).

    Parameters
    ----------
    rho
        A number: the constant bonus scale (the ``alpha`` the paper's
        experiments tune over powers of two; the default 2^-2 was picked
        from 2^-3 .. 2^-1 on the synthetic worlds of OneSidedLending-v0). ``"theory"``: the paper's
        ``rho_t(delta)`` of Algorithm 2, which is valid but very
        conservative (it approves nearly everyone for a long time).
    l2
        Ridge strength ``lambda`` of the fit and of ``A``.
    project
        Run Algorithm 2's projection step: when ``||beta_hat|| > M``,
        decide with the closest ``beta`` inside the ball
        (:func:`project_estimate`). The paper needs it
        only for the analysis (it keeps ``mu'`` bounded below); off by
        default, as in the paper's experiments.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    delta
        Confidence level of ``rho="theory"``.
    horizon
        ``T`` in ``rho="theory"``.
    beta_bound
        ``M``, the assumed bound on ``||beta*||``, in ``rho="theory"`` and
        in the projection step.
    noise_scale
        ``phi``, the sub-Gaussian scale of the noise, in ``rho="theory"``;
        None takes 1 for the linear link and 1/2 (Bernoulli) for logistic.
    design_l2, free_intercept
        The paper's fit, as in :class:`~agents.lending.Greedy` (defaults:
        the ridge ``l2`` everywhere, in the fit and in ``A``).
    rho_schedule
        ``"constant"`` (default): a numeric ``rho`` is the bonus scale at
        every round. ``"sqrt_log_t"``: Algorithm 2's growth in the round
        ``t``, ``rho_t = rho * sqrt(2 d log(1 + t))`` (``log(1 + t)`` as in
        :func:`theory_rho`, so the first round has a bonus); ``rho`` then
        stands for the constants Algorithm 2 multiplies it by.
    per_applicant_A
        Algorithm 2 adds each approved applicant's ``x x^T`` to ``A`` inside
        the batch loop, so the width of applicant ``j`` counts the approvals
        before it in the same batch. False (default): every applicant of a
        batch gets the width from the ``A`` at the start of the batch. The
        same with a batch of one.
    refit
        How the incremental logistic fit refits:
        ``"newton"`` (default, what the paper tables were made with) or
        ``"expand"`` (cheaper, converged warm start); see
        :class:`~agents.lending.glm.GLMEstimator`.

    Attributes
    ----------
    model_
        The :class:`~agents.lending.glm.GLMEstimator` (``beta``, ``A_inv``).
    rho_
        The bonus scale used at the last decision.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("OneSidedLending-v0", horizon=20)
    >>> trajectory = run_episode(env, Adaptive(rho=0.5), seed=0)
    >>> int(trajectory.n_revealed.sum()) > 0
    True

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021, Algorithm 2 and Theorem 2.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **PAPER_FIT_CONSTRAINTS,
        "rho": [Interval(Real, 0, None, closed="left"), StrOptions({"theory"})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "horizon": [Interval(Integral, 1, None, closed="left")],
        "beta_bound": [Interval(Real, 0, None, closed="neither")],
        "noise_scale": [Interval(Real, 0, None, closed="left"), None],
        "project": ["boolean"],
        "rho_schedule": [StrOptions({"constant", "sqrt_log_t"})],
        "per_applicant_A": ["boolean"],
        "refit": [StrOptions(set(REFITS))],
    }
    # the replicas share the fit of a numeric rho without the projection (the constants of
    # rho="theory" are the agent's own)
    replica_fit: ClassVar[dict[str, Any]] = {
        **FIT_REPLICA,
        "rho": lambda rho: not isinstance(rho, str),
        **dict.fromkeys(("delta", "horizon", "beta_bound", "noise_scale"), any_value),
        "project": (False,),
        "rho_schedule": any_value,
        "per_applicant_A": any_value,
    }

    def __init__(
        self,
        rho: float | str = 0.25,
        l2: float = 1.0,
        delta: float = 0.1,
        horizon: int = 2000,
        beta_bound: float = 5.0,
        noise_scale: float | None = None,
        project: bool = False,
        solver: str = "incremental",
        design_l2: float | None = None,
        free_intercept: bool = False,
        rho_schedule: str = "constant",
        per_applicant_A: bool = False,
        refit: str = "newton",
    ) -> None:
        self.rho = rho
        self.design_l2 = design_l2
        self.free_intercept = free_intercept
        self.rho_schedule = rho_schedule
        self.per_applicant_A = per_applicant_A
        self.refit = refit
        self.project = project
        self.solver = solver
        self.l2 = l2
        self.delta = delta
        self.horizon = horizon
        self.beta_bound = beta_bound
        self.noise_scale = noise_scale

    def reset(
        self,
        observation_space: gym.Space,
        action_space: gym.Space,
        *,
        seed: int | None = None,
        feedback: dict[str, Any] | None = None,
    ) -> None:
        """Fit the warm start and fix the constants of the bonus."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        self.rho_ = 0.0 if isinstance(self.rho, str) else float(self.rho)
        if self.rho == "theory":
            self.theory_constants_ = self._theory_constants(observation_space, feedback or {})

    def _theory_constants(self, observation_space: gym.Space, feedback: dict) -> dict:
        warm_x = np.asarray(feedback.get("warm_start", {}).get("X", np.empty((0, 1))), dtype=float)
        feature_bound = float(np.linalg.norm(warm_x, axis=1).max()) if len(warm_x) else 1.0
        logistic = self.link_.name == "logistic"
        noise = self.noise_scale
        if noise is None:
            noise = 0.5 if logistic else 1.0
        bound = feature_bound * self.beta_bound
        eta = float(self.link_.derivative(bound))
        dim = self.model_.dim
        batch_size = int(np.prod(observation_space.shape or (1,))) // dim
        return dict(
            dim=dim,
            batch_size=batch_size,
            horizon=self.horizon,
            delta=self.delta,
            lipschitz=self.link_.lipschitz,
            eta=max(eta, np.finfo(float).tiny),
            feature_bound=feature_bound,
            beta_bound=self.beta_bound,
            mu_at_zero=float(self.link_.mean(0.0)),
            cutoff=self.cutoff_,
            noise_scale=float(noise),
            lambda0=float(np.linalg.eigvalsh(self.model_.A)[0]),
        )

    def decision_beta(self) -> np.ndarray:
        """``beta_hat``, projected onto ``||beta|| <= beta_bound`` if ``project``."""
        if self.project:
            return project_estimate(self.model_, self.beta_bound)
        return self.model_.beta

    def bonus_scale(self) -> float:
        """Set and return ``rho_``, the bonus scale of round ``t_``: ``rho`` or ``rho_t``."""
        if self.rho == "theory":
            self.rho_ = theory_rho(self.t_, **self.theory_constants_)
        elif self.rho_schedule == "sqrt_log_t":
            self.rho_ = float(self.rho) * math.sqrt(2.0 * self.model_.dim * math.log1p(self.t_))
        return self.rho_

    def bonus_grows_in_batch(self) -> bool:
        """``per_applicant_A``: Algorithm 2's in-batch ``A``."""
        return self.per_applicant_A
