"""The lean path's refit of an incremental logistic fit: the Hessians by half the work.

A ``"newton"`` refit (:meth:`GLMEstimator._refit <agents.lending.glm.GLMEstimator._refit>`)
forms three Hessians on all revealed data, ``X^T diag(w) X`` at three estimates,
and they are most of a default Adaptive's time at a batch of one (d = 109 on
Adult: about 40% of its act / step / update loop). The readable path forms each
as ``(X W)^T X``, a general matrix product (BLAS ``gemm``). Here each is
``R^T R`` with ``R = diag(sqrt(w)) X``, which NumPy hands to BLAS ``syrk``: the
product of a matrix with its own transpose, computed once per pair of
symmetric entries. Everything else is the readable refit itself
(:func:`~agents.lending.glm._newton` and ``_absorb`` with this product).

The two products are the same sums in another order (and ``sqrt(w)^2`` is
``w`` to round-off), so the two paths agree to round-off, not bit for bit;
the lean path of one agent run twice is bit for bit. Tested against the
readable path (the same agent fed lists, which take it): the estimate within
the relative tolerance of the lean logistic path, the decisions equal
(``tests/agents/lending/test_lending_agents.py``).
"""

from __future__ import annotations

import numpy as np

from agents.lending.glm import GLMEstimator


def symmetric_gram(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Return ``X^T diag(w) X`` as ``R^T R``, ``R = diag(sqrt(w)) X`` (``w >= 0``).

    Examples
    --------
    >>> x, w = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.25, 1.0])
    >>> symmetric_gram(x, w).tolist()
    [[9.25, 12.5], [12.5, 17.0]]
    """
    root = x * np.sqrt(w)[:, None]
    return root.T @ root  # NumPy computes a matrix times its own transpose by syrk


def takes(model: GLMEstimator, n: int) -> bool:
    """Whether the ``n``-th revealed example of ``model`` is learnt by :func:`learn_row`.

    Its case: a plain ``GLMEstimator`` with the incremental logistic fit and
    ``"newton"`` refits, whose refit comes at this example (the replicas'
    estimators and the other fits take the readable path).
    """
    return (
        type(model) is GLMEstimator
        and model.solver == "incremental"
        and model.refit == "newton"
        and model.link.name == "logistic"
        and n > (1.0 + model.refit_growth) * model._n_at_refit
    )


def learn_row(model: GLMEstimator, row: np.ndarray, target: float, u: np.ndarray | None) -> None:
    """``model.learn_row(row, target, u)`` at a refit, with the Hessians of :func:`symmetric_gram`.

    What ``learn_row`` does there (``add_row``, then ``fit``'s refit), the
    refit's products made by :func:`symmetric_gram`.
    """
    model.add_row(row, target, u)
    model._refit(gram=symmetric_gram)
    model._n_fitted = model.n
