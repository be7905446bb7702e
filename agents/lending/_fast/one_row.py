"""A cutoff agent's decision and update for one applicant, on Python floats.

:meth:`CutoffAgent.act <agents.lending.base.CutoffAgent.act>` hands a batch
of one (an array of shape ``(1, d)``) to :func:`act`, and the update that
follows it to :func:`update`. They compute the agent's own rule, read from
the agent: ``mu(x . beta_) - c`` plus the uncertainty bonus
``bonus_scale() * sqrt(x^T A^{-1} x)`` where the class has one, else its
``exploration``. The width's ``A^{-1} x`` is kept for the update's
Sherman-Morrison step (the same product). With numba installed, the decision
(its products and score, SciPy's logistic mean computed as SciPy computes it)
and the incremental logistic update with its bookkeeping run as compiled calls
to the same BLAS functions (:mod:`~agents.lending._fast.blas_row`, the same
bits, checked at load; ``OSFB_NUMBA=0`` turns them off); what they need is
fixed at ``reset``. Validation is one finiteness test
of the score (the full check runs only when it fails), a few comparisons of
the update's action, reward and feedback (in :func:`update`: the agent's
own check runs for anything unusual) and a range test of the revealed
outcome.

Tested against the readable path (the same agent fed lists, which take it):
the linear link's ``A^{-1}`` and estimate bit for bit, the logistic
estimate within round-off (``GLMEstimator.learn_row`` follows the rank-one
change of ``H^{-1}``: relative 1e-9), the decisions equal
(``tests/agents/lending/test_lending_agents.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.lending._fast import blas_row, refit

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# the one applicant's decision as the int8 array act() returns (copied: callers may keep it)
_APPROVE = np.ones(1, dtype=np.int8)
_DENY = np.zeros(1, dtype=np.int8)


def act(agent: Any, observation: np.ndarray) -> np.ndarray:
    """``agent.act(observation)`` for an array of one applicant."""
    agent.t_ += 1
    beta = agent.beta_
    products = agent._lean_act  # the compiled products, or None (set at reset)
    scale = None if agent._own_exploration else agent.bonus_scale()
    if (
        products is not None
        and scale is not None
        and observation.dtype in _FLOATS
        and beta.flags.c_contiguous
    ):  # one compiled call (blas_row: the same bits)
        row, u = agent._lean_rows  # (the update reads them before the next act writes them)
        score = products(agent.model_.A_inv, beta, observation, row, u, agent._lean_logistic,
                         agent.cutoff_, scale)  # fmt: skip
    else:
        row = np.asarray(observation, dtype=float)[0]
        # (ndarray.dot: the products of @, without its dispatch cost)
        mu = float(agent.link_.mean(float(row.dot(beta))))
        u = None
        if agent._own_exploration:
            bonus = float(np.asarray(agent.exploration(row[None, :])).reshape(-1)[0])
        elif scale is None:
            bonus = 0.0
        else:
            # width_and_product's products, inlined: this runs every step
            u = agent.model_.A_inv.dot(row)
            bonus = scale * math.sqrt(max(float(row.dot(u)), 0.0))
        # approve when mu - c + bonus is positive
        score = mu - agent.cutoff_ + bonus
    if not math.isfinite(score):
        agent._check_observation(observation, "act")
    # keep what the update needs
    agent._lean_cache = (observation, row, u, agent.model_.n)
    return (_APPROVE if score > 0 else _DENY).copy()


def update(agent: Any, cache: tuple[Any, np.ndarray, Any, int], action: Any, reward: Any,
           feedback: Any) -> bool:  # fmt: skip
    """Check the update's arguments and learn what the last :func:`act` decided; False: not here.

    The arguments are checked as ``agent._check_update(action, reward,
    feedback)`` checks them, in a few comparisons on the usual step: the array
    of one decision :func:`act` returned (or any integer or boolean array of
    one 0/1 entry, where the action space is one applicant's ``MultiBinary``:
    ``agent._lean_binary``), a finite float reward and the env's feedback
    dict; anything else gets the agent's own check, which passes it or raises
    naming what is wrong. An outcome outside the link's range
    (``agent._lean_outcomes``), or feedback that is not one applicant's, goes
    to the readable path (False), which names the error.
    """
    if not (
        agent._lean_binary
        and type(action) is np.ndarray
        and action.shape == (1,)
        and action.dtype.kind in "biu"
        and 0 <= action.item() <= 1
        and type(reward) is float
        and math.isfinite(reward)
        and type(feedback) is dict
        and "revealed" in feedback
        and "y" in feedback
    ):
        agent._check_update(action, reward, feedback)
    revealed, ys = feedback["revealed"], feedback["y"]
    try:
        if len(revealed) != 1 or len(ys) != 1 or isinstance(revealed, str):
            return False
        if not revealed[0]:
            return True
        target = float(ys[0])
    except (TypeError, ValueError):  # not sequences of numbers: the general path names it
        return False
    low, high = agent._lean_outcomes
    if not low <= target <= high:  # NaN fails too
        return False
    _, row, u, n = cache
    model = agent.model_
    u = u if n == model.n else None
    if model is agent._lean_learner and blas_row.learn_row(model, row, target, u):
        pass  # between refits: compiled
    elif refit.takes(model, model.n + 1):  # a refit: in fewer, cheaper products
        refit.learn_row(model, row, target, u)
    else:
        model.learn_row(row, target, u)
    agent.beta_ = agent.decision_beta()
    return True
