"""DRAL, DSAL and DSOL (Shah and Manwani, 2020): online active learning with a reject option."""

from __future__ import annotations

from typing import Any, ClassVar

from agents.base import Interval, Real
from agents.reject.base import REJECT_CONSTRAINTS, RejectLearner
from agents.reject.losses import (
    double_ramp_gradient,
    double_sigmoid_gradient,
    query_probability,
)

# Step sizes: the paper gives none. eta starts at 0.1 and falls by 5e-6 per
# trial to 0.05 at the paper's T = 10,000, floored at 0.01; the same for every
# learner, so that they differ only in their loss and their query rule.
ETA, ETA_DECAY, ETA_MIN = 0.1, 5e-6, 0.01


class DRAL(RejectLearner):
    """Double ramp loss active learning (Algorithm 1).

    Asks for the label exactly when ``rho - 1 <= |f(x)| <= rho + 1`` (eq. 3),
    the band where the double ramp loss ``L_dr`` has a non-zero gradient
    for one of the two labels, and takes a gradient step of ``L_dr``:
    ``w += eta d y x``, ``rho -= eta d`` on the ramp at ``rho`` (the
    example is near the accept/reject transition), ``w += eta (1 - d) y x``,
    ``rho += eta (1 - d)`` on the ramp at ``-rho`` (near the
    reject/misclassify transition). Where the ramps overlap (``rho < 1``)
    the two slopes add (Algorithm 1 as printed takes the first branch
    only; the sum is the loss's gradient).

    Parameters
    ----------
    d
        Cost of a rejection; None takes the env's.
    eta, eta_decay, eta_min
        Step size ``max(eta - eta_decay * t, eta_min)``.
    rho0
        Initial rejection width (Algorithm 1: 1).
    kernel, kernel_params, budget
        A kernel expansion instead of ``w`` (see :class:`RejectLearner`).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> metrics = run_episode(gym.make("RejectOption-v0", horizon=2000), DRAL(), seed=0).metrics
    >>> metrics["average_risk"] < 0.25   # always rejecting costs d = 0.25
    True

    References
    ----------
    Kulin Shah, Naresh Manwani. Online Active Learning of Reject Option
    Classifiers. AAAI 2020, Algorithm 1 and eq. 3.
    """

    def __init__(
        self,
        d: float | None = None,
        eta: float = ETA,
        eta_decay: float = ETA_DECAY,
        eta_min: float = ETA_MIN,
        rho0: float = 1.0,
        kernel: str = "linear",
        kernel_params: dict[str, Any] | None = None,
        budget: int | None = None,
    ) -> None:
        self.d = d
        self.eta = eta
        self.eta_decay = eta_decay
        self.eta_min = eta_min
        self.rho0 = rho0
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.budget = budget

    def wants_label(self, score: float) -> bool:
        """Eq. 3: inside the band ``rho - 1 <= |f| <= rho + 1``."""
        return abs(abs(score) - self.rho_) <= 1.0

    def loss_gradient(self, z: float) -> tuple[float, float]:
        """Return the gradient of ``L_dr`` at ``z``."""
        gz, grho = double_ramp_gradient(z, self.rho_, self.d_)
        return float(gz), float(grho)


class DSAL(RejectLearner):
    """Double sigmoid loss active learning (Algorithm 2).

    Asks for the label with probability ``p = 4 sigma(|f| - rho) (1 -
    sigma(|f| - rho))`` (eq. 5): 1 at the two transitions ``|f| = rho``,
    falling off on both sides but never 0, so every region is sampled a
    little. On a revealed label it takes a gradient step of the double
    sigmoid loss ``L_ds`` (eqs. 6-7, see
    :func:`agents.reject.losses.double_sigmoid_gradient` for the sign).

    Parameters
    ----------
    d
        Cost of a rejection; None takes the env's.
    gamma
        Slope of the sigmoid of ``L_ds`` and of the query probability
        (the paper's Figure 2 uses 2).
    eta, eta_decay, eta_min
        Step size ``max(eta - eta_decay * t, eta_min)``.
    rho0
        Initial rejection width.
    kernel, kernel_params, budget
        A kernel expansion instead of ``w`` (see :class:`RejectLearner`).

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> metrics = run_episode(gym.make("RejectOption-v0", horizon=2000), DSAL(), seed=0).metrics
    >>> metrics["average_risk"] < 0.25, metrics["query_rate"] < 1.0
    (True, True)

    References
    ----------
    Kulin Shah, Naresh Manwani. Online Active Learning of Reject Option
    Classifiers. AAAI 2020, Algorithm 2 and eqs. 5-7.
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **REJECT_CONSTRAINTS,
        "gamma": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        d: float | None = None,
        gamma: float = 2.0,
        eta: float = ETA,
        eta_decay: float = ETA_DECAY,
        eta_min: float = ETA_MIN,
        rho0: float = 1.0,
        kernel: str = "linear",
        kernel_params: dict[str, Any] | None = None,
        budget: int | None = None,
    ) -> None:
        self.d = d
        self.gamma = gamma
        self.eta = eta
        self.eta_decay = eta_decay
        self.eta_min = eta_min
        self.rho0 = rho0
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.budget = budget

    def wants_label(self, score: float) -> bool:
        """Eq. 5: a Bernoulli draw with the query probability at ``|f| - rho``."""
        p = float(query_probability(score, self.rho_, self.gamma))
        return bool(self.rng_.random() < p)

    def loss_gradient(self, z: float) -> tuple[float, float]:
        """Return the gradient of ``L_ds`` at ``z``."""
        gz, grho = double_sigmoid_gradient(z, self.rho_, self.d_, self.gamma)
        return float(gz), float(grho)


class DSOL(DSAL):
    """Double sigmoid loss online learning: DSAL's updates on every label (the paper's baseline).

    It asks for every label, so it is the fully supervised online learner
    the active learners are measured against: the same risk with fewer
    labels is what DRAL and DSAL are for.

    Parameters
    ----------
    d, gamma, eta, eta_decay, eta_min, rho0, kernel, kernel_params, budget
        As for :class:`DSAL`.

    Examples
    --------
    >>> import gymnasium as gym, osfb_gym
    >>> from osfb_gym.runner import run_episode
    >>> metrics = run_episode(gym.make("RejectOption-v0", horizon=500), DSOL(), seed=0).metrics
    >>> metrics["query_rate"]
    1.0

    References
    ----------
    Kulin Shah, Naresh Manwani. Online Active Learning of Reject Option
    Classifiers. AAAI 2020, Section 6: the online (fully supervised) baseline.
    """

    def wants_label(self, score: float) -> bool:
        """Ask for every label."""
        return True
