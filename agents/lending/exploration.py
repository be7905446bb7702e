"""The exploration baselines of Section 8: greedy plus a decaying perturbation.

Each adds a term to greedy's score ``mu(x . beta_hat) - c`` that decays as
``alpha / sqrt(t)`` (t the round), and approves where the sum is positive.
The paper tunes ``alpha`` over a grid of powers of two for each dataset and
cutoff; the default 1 is the middle of that grid, not a tuned value.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents.base import Interval, Real
from agents.lending.base import FIT_REPLICA, PAPER_FIT_CONSTRAINTS, CutoffAgent, any_value


class _DecayingExploration(CutoffAgent):
    """Greedy plus a perturbation of scale ``alpha / sqrt(t)``.

    A subclass says how many uniforms on [0, 1) it draws per applicant at
    each decision (``n_uniforms``) and how they and the scale make the
    perturbation (:meth:`perturbation`, written to broadcast over leading
    axes, so :class:`~agents.lending.CutoffReplicas` applies it to
    many agents at once with the very draws each would make alone).
    """

    alpha: float
    n_uniforms: ClassVar[int] = 0
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **PAPER_FIT_CONSTRAINTS,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }
    replica_fit: ClassVar[dict[str, Any]] = {**FIT_REPLICA, "alpha": any_value}

    def __init__(
        self,
        alpha: float = 1.0,
        l2: float = 1.0,
        solver: str = "incremental",
        design_l2: float | None = None,
        free_intercept: bool = False,
    ) -> None:
        self.alpha = alpha
        self.l2 = l2
        self.solver = solver
        # the paper's fit: see agents.lending.greedy.Greedy (same options)
        self.design_l2 = design_l2
        self.free_intercept = free_intercept

    def _scale(self) -> float:
        return self.alpha / np.sqrt(self.t_)

    @staticmethod
    def perturbation(scale: np.ndarray | float, u: np.ndarray) -> np.ndarray | float:
        """Return the term added to the scores; ``u`` has shape (..., n_uniforms, batch)."""
        raise NotImplementedError

    def exploration(self, x: np.ndarray) -> np.ndarray | float:
        """Return the perturbation of this decision's scores."""
        return self.perturbation(self._scale(), self.rng_.random((self.n_uniforms, len(x))))


class EpsilonGreedy(_DecayingExploration):
    """Greedy, but each decision is a fair coin with probability ``alpha / sqrt(t)``.

    Parameters
    ----------
    alpha
        Exploration scale; the probability is capped at 1.
    l2
        Ridge strength of the fit.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    design_l2, free_intercept
        The paper's fit, as in :class:`~agents.lending.Greedy` (defaults:
        the ridge ``l2`` everywhere).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> env = gym.make("OneSidedLending-v0", horizon=200)
    >>> metrics = run_episode(env, EpsilonGreedy(alpha=1.0), seed=0).metrics
    >>> round(metrics["approval_rate"], 3), round(metrics["cumulative_loss"], 2)
    (0.25, 8.47)

    References
    ----------
    Sutton and Barto (2018), as the epsilon-greedy baseline of Jiang, Jiang
    and Pacchiano (2021), Section 8.
    """

    n_uniforms = 2

    @staticmethod
    def perturbation(scale: np.ndarray | float, u: np.ndarray) -> np.ndarray:
        """Return +inf/-inf (approve/deny) where a coin decides, 0 elsewhere."""
        explore = u[..., 0, :] < scale
        coin = u[..., 1, :] < 0.5
        return np.where(explore, np.where(coin, np.inf, -np.inf), 0.0)


class OneSidedEpsilonGreedy(_DecayingExploration):
    """Greedy, but approve anyway with probability ``alpha / sqrt(t)``.

    The apple-tasting idea (Helmbold et al. 2000) in the lending setting:
    exploration only ever approves, since only approvals reveal anything.

    Parameters
    ----------
    alpha
        Exploration scale; the probability is capped at 1.
    l2
        Ridge strength of the fit.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    design_l2, free_intercept
        The paper's fit, as in :class:`~agents.lending.Greedy` (defaults:
        the ridge ``l2`` everywhere).

    Examples
    --------
    Exploring only ever approves, so it approves at least as often as greedy here:

    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> from agents.lending import Greedy
    >>> env = gym.make("OneSidedLending-v0", horizon=300)
    >>> [round(run_episode(env, agent, seed=3).metrics["approval_rate"], 3)
    ...  for agent in (Greedy(), OneSidedEpsilonGreedy(alpha=1.0))]
    [0.207, 0.3]

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021, Section 8 (the one-sided baselines).
    """

    n_uniforms = 1

    @staticmethod
    def perturbation(scale: np.ndarray | float, u: np.ndarray) -> np.ndarray:
        """Return +inf (approve) where the coin says explore, 0 elsewhere."""
        return np.where(u[..., 0, :] < scale, np.inf, 0.0)


class Noise(_DecayingExploration):
    """Greedy on a score perturbed by ``alpha * u / sqrt(t)``, ``u ~ U[-1/2, 1/2]``.

    Parameters
    ----------
    alpha
        Noise scale.
    l2
        Ridge strength of the fit.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    design_l2, free_intercept
        The paper's fit, as in :class:`~agents.lending.Greedy` (defaults:
        the ridge ``l2`` everywhere).

    Examples
    --------
    The perturbation is symmetric, so it denies as often as it approves:

    >>> Noise.support
    (-0.5, 0.5)
    >>> Noise(alpha=0.25, l2=2.0).get_params()
    {'alpha': 0.25, 'design_l2': None, 'free_intercept': False, 'l2': 2.0, 'solver': 'incremental'}

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021, Section 8 (the baselines).
    """

    support: ClassVar[tuple[float, float]] = (-0.5, 0.5)
    n_uniforms = 1

    @classmethod
    def perturbation(cls, scale: np.ndarray | float, u: np.ndarray) -> np.ndarray:  # type: ignore[override]
        """Return ``scale`` times ``u`` mapped onto ``support``, for each applicant."""
        low, high = cls.support
        # what Generator.uniform(low, high) computes from the same draw
        return scale * (low + (high - low) * u[..., 0, :])


class OneSidedNoise(Noise):
    """Greedy on a score raised by ``alpha * u / sqrt(t)``, ``u ~ U[0, 1]``.

    Parameters
    ----------
    alpha
        Noise scale.
    l2
        Ridge strength of the fit.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    design_l2, free_intercept
        The paper's fit, as in :class:`~agents.lending.Greedy` (defaults:
        the ridge ``l2`` everywhere).

    Examples
    --------
    The perturbation only raises scores, so exploring only approves:

    >>> OneSidedNoise.support
    (0.0, 1.0)

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021, Section 8 (the baselines).
    """

    support = (0.0, 1.0)


class Margin(_DecayingExploration):
    """Greedy on a score raised by ``alpha / sqrt(t)`` for every applicant.

    A non-adaptive version of :class:`~agents.lending.Adaptive`: the same
    optimism for everyone, however much is known about them.

    Parameters
    ----------
    alpha
        Margin scale.
    l2
        Ridge strength of the fit.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    design_l2, free_intercept
        The paper's fit, as in :class:`~agents.lending.Greedy` (defaults:
        the ridge ``l2`` everywhere).

    Examples
    --------
    On the greedy trap (Theorem 1) the margin lets it see the applicants greedy
    keeps denying:

    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> from agents.lending import Greedy
    >>> env = gym.make("OneSidedLending-v0", scenario="greedy_trap", horizon=1000)
    >>> [round(run_episode(env, agent, seed=0).metrics["wrongly_denied"], 3)
    ...  for agent in (Greedy(), Margin(alpha=1.0))]
    [90.0, 1.0]

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021, Section 8 (the baselines).
    """

    @staticmethod
    def perturbation(scale: np.ndarray | float, u: np.ndarray) -> np.ndarray | float:
        """Return the margin, the same for every applicant (no draw)."""
        return scale
