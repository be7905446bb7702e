"""Greedy: refit on the revealed outcomes, approve when the estimate beats the cutoff."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.lending.base import FIT_REPLICA, PAPER_FIT_CONSTRAINTS, CutoffAgent


class Greedy(CutoffAgent):
    """The greedy one-sided learner (Jiang, Jiang and Pacchiano 2021, Section 5).

    Fits ``beta_hat`` by ridge-regularised least squares (linear link) or
    logistic regression (logistic link) on every outcome revealed so far,
    the warm-start sample included, and approves exactly when
    ``mu(x . beta_hat) > c``. It never explores: an applicant type it
    underestimates is denied, never observed again, and never corrected
    (Theorem 1), which the ``greedy_trap`` scenario demonstrates.

    Parameters
    ----------
    l2
        Ridge strength of the fit (``lambda``); keeps the logistic MLE
        finite when the first labels are separable.
    solver
        ``"incremental"`` (``O(d^2)`` per revealed example) or ``"exact"``
        (refit on all revealed data every batch); see :mod:`agents.lending.glm`.
    design_l2, free_intercept
        The paper's fit (:class:`~agents.lending.glm.GLMEstimator`): the ridge
        of ``A`` alone (None: ``l2``), and the last column (the intercept of a
        dataset-backed env) penalised by ``design_l2`` only. Defaults: the
        same ridge ``l2`` everywhere.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> trajectory = run_episode(gym.make("OneSidedLending-v0", horizon=20), Greedy(), seed=0)
    >>> trajectory.rewards.shape
    (20,)

    References
    ----------
    Heinrich Jiang, Qijia Jiang, Aldo Pacchiano. Learning the Truth From
    Only One Side of the Story. AISTATS 2021.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = PAPER_FIT_CONSTRAINTS
    replica_fit: ClassVar[dict[str, Any]] = FIT_REPLICA

    def __init__(
        self,
        l2: float = 1.0,
        solver: str = "incremental",
        design_l2: float | None = None,
        free_intercept: bool = False,
    ) -> None:
        self.l2 = l2
        self.solver = solver
        self.design_l2 = design_l2
        self.free_intercept = free_intercept
