"""The surrogate losses of reject-option learning (Shah and Manwani, 2020), with their gradients.

A reject-option classifier is a score ``f(x)`` and a rejection width
``rho >= 0``: it predicts ``+1`` where ``f(x) > rho``, ``-1`` where
``f(x) < -rho`` and rejects where ``|f(x)| <= rho`` (eq. 1). Every loss
here is a function of the margin ``z = y f(x)`` and of ``rho``
(``|f(x)| = |z|`` since ``y`` is +-1), vectorised over numpy arrays, and
every gradient returns ``(dL/dz, dL/drho)``; the chain rule gives the
parameters' gradient, e.g. ``dL/dw = dL/dz * y x`` for ``f(x) = w . x``.

- :func:`double_ramp_loss` ``L_dr`` (Manwani et al., 2015): a bounded,
  piecewise-linear surrogate; DRAL descends it.
- :func:`double_sigmoid_loss` ``L_ds``: the smooth surrogate the paper
  proposes (Section 3), with slope ``gamma``; DSAL and DSOL descend it.

The loss the risk is measured in, ``L_d`` (eq. 2: 1 for a
misclassification, ``d`` for a rejection), is the env's
(:func:`osfb_gym.envs.reject.decision_loss`): only the agents use these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit


def _hinge(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, 0.0)


def double_ramp_loss(z: Any, rho: Any, d: float) -> np.ndarray:
    """Return the double ramp loss ``L_dr(z, rho)`` (Manwani et al., 2015).

    ``d ([1 - z + rho]_+ - [-1 - z + rho]_+) + (1 - d) ([1 - z - rho]_+ -
    [-1 - z - rho]_+)``: two ramps of width 2, one at ``z = rho`` of
    height ``2d``, one at ``z = -rho`` of height ``2(1 - d)``; so ``L_dr``
    is 0 far on the correct side, ``2d`` inside the rejection band and 2
    far on the wrong side (twice ``L_d``, away from the ramps).

    Examples
    --------
    >>> double_ramp_loss([5.0, 0.0, -5.0], 2.0, d=0.25).tolist()
    [0.0, 0.5, 2.0]
    """
    z, rho = np.asarray(z, dtype=float), np.asarray(rho, dtype=float)
    return d * (_hinge(1 - z + rho) - _hinge(-1 - z + rho)) + (1 - d) * (
        _hinge(1 - z - rho) - _hinge(-1 - z - rho)
    )


def double_ramp_gradient(z: Any, rho: Any, d: float) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(dL_dr/dz, dL_dr/drho)``, the gradient where ``L_dr`` is differentiable.

    The ramp at ``rho`` has slope ``-d`` in ``z`` and ``+d`` in ``rho`` on
    ``rho - 1 < z < rho + 1``; the ramp at ``-rho`` has slope ``-(1 - d)``
    in ``z`` and ``-(1 - d)`` in ``rho`` on ``-rho - 1 < z < -rho + 1``.
    Where the two ramps overlap (``rho < 1``) their slopes add. At the
    kinks (a set of measure zero) the closed ramps are used, as the
    update of DRAL (Algorithm 1) does.

    Examples
    --------
    >>> dz, drho = double_ramp_gradient([2.0, -2.0, 9.0], 2.0, d=0.25)
    >>> dz.tolist(), drho.tolist()
    ([-0.25, -0.75, 0.0], [0.25, -0.75, 0.0])
    """
    z, rho = np.asarray(z, dtype=float), np.asarray(rho, dtype=float)
    upper = np.abs(z - rho) <= 1.0
    lower = np.abs(z + rho) <= 1.0
    dz = -(d * upper + (1 - d) * lower)
    drho = d * upper - (1 - d) * lower
    return dz + 0.0, drho + 0.0  # + 0.0 turns -0.0 into 0.0


def _sigma(a: np.ndarray, gamma: float) -> np.ndarray:
    """Return the paper's decreasing sigmoid ``1 / (1 + exp(gamma a))``, overflow-free."""
    return expit(-gamma * a)


def double_sigmoid_loss(z: Any, rho: Any, d: float, gamma: float = 2.0) -> np.ndarray:
    """Return the double sigmoid loss ``L_ds = 2d sigma(z - rho) + 2(1 - d) sigma(z + rho)``.

    ``sigma(a) = 1 / (1 + exp(gamma a))`` falls from 1 to 0 around
    ``a = 0`` with slope ``gamma / 4`` there. Like ``L_dr``, ``L_ds``
    tends to 0 far on the correct side, ``2d`` inside a wide rejection
    band and 2 far on the wrong side; unlike it, it is smooth and its
    gradient never vanishes.

    Examples
    --------
    >>> double_sigmoid_loss([50.0, 0.0, -50.0], 20.0, d=0.25).round(3).tolist()
    [0.0, 0.5, 2.0]
    """
    z, rho = np.asarray(z, dtype=float), np.asarray(rho, dtype=float)
    return 2 * d * _sigma(z - rho, gamma) + 2 * (1 - d) * _sigma(z + rho, gamma)


def double_sigmoid_gradient(
    z: Any, rho: Any, d: float, gamma: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(dL_ds/dz, dL_ds/drho)``.

    With ``sigma'(a) = -gamma sigma(a) (1 - sigma(a))``, writing
    ``s(a) = sigma(a) (1 - sigma(a))``:
    ``dL/dz = -2 gamma [d s(z - rho) + (1 - d) s(z + rho)]`` and
    ``dL/drho = 2 gamma [d s(z - rho) - (1 - d) s(z + rho)]``.
    Gradient descent therefore moves ``w`` along ``y x`` and shrinks
    ``rho`` after a confidently correct example, widens it after a
    confident mistake, as the paper's Section 3 describes. (Printed
    eqs. 6-7 carry the opposite sign with a step ``alpha``; the text's
    reading and this gradient agree, and descent on ``L_ds`` is what the
    convergence result of Theorem 6 is about.)

    Examples
    --------
    >>> dz, drho = double_sigmoid_gradient([0.0], 0.0, d=0.25, gamma=2.0)
    >>> dz.tolist(), drho.tolist()
    ([-1.0], [-0.5])
    """
    z, rho = np.asarray(z, dtype=float), np.asarray(rho, dtype=float)
    upper = _sigma(z - rho, gamma)
    lower = _sigma(z + rho, gamma)
    s_upper = upper * (1 - upper)
    s_lower = lower * (1 - lower)
    dz = -2 * gamma * (d * s_upper + (1 - d) * s_lower)
    drho = 2 * gamma * (d * s_upper - (1 - d) * s_lower)
    return dz, drho


def query_probability(score: Any, rho: Any, gamma: float = 2.0) -> np.ndarray:
    """Return DSAL's query probability ``p = 4 sigma(|f| - rho) (1 - sigma(|f| - rho))`` (eq. 5).

    It is 1 where ``|f| = rho`` (the two transitions of ``L_d``) and falls
    off on both sides, with the sigmoid of ``L_ds`` (slope ``gamma``).

    Examples
    --------
    >>> query_probability([1.0, -1.0, 4.0], 1.0).round(4).tolist()
    [1.0, 1.0, 0.0099]
    """
    a = np.abs(np.asarray(score, dtype=float)) - np.asarray(rho, dtype=float)
    sigma = _sigma(a, gamma)
    return 4 * sigma * (1 - sigma)
