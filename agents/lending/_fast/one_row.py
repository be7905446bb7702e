"""A cutoff agent's decision and update for one applicant, on Python floats.

:meth:`CutoffAgent.act <agents.lending.base.CutoffAgent.act>` hands a batch
of one (an array of shape ``(1, d)``) to :func:`act`, and the update that
follows it to :func:`update`. They compute the agent's own rule, read from
the agent: ``mu(x . beta_) - c`` plus the uncertainty bonus
``bonus_scale() * sqrt(x^T A^{-1} x)`` where the class has one, else its
``exploration``. The width's ``A^{-1} x`` is kept for the update's
Sherman-Morrison step (the same product); validation is one finiteness test
of the score (the full check runs only when it fails) and a range test of
the revealed outcome.

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

# the one applicant's decision as the int8 array act() returns (copied: callers may keep it)
_APPROVE = np.ones(1, dtype=np.int8)
_DENY = np.zeros(1, dtype=np.int8)


def act(agent: Any, observation: np.ndarray) -> np.ndarray:
    """``agent.act(observation)`` for an array of one applicant."""
    row = np.asarray(observation, dtype=float)[0]
    agent.t_ += 1
    # (ndarray.dot: the products of @, without its dispatch cost)
    mu = float(agent.link_.mean(float(row.dot(agent.beta_))))
    u = None
    if agent._own_exploration:
        bonus = float(np.asarray(agent.exploration(row[None, :])).reshape(-1)[0])
    else:
        scale = agent.bonus_scale()
        if scale is None:
            bonus = 0.0
        else:
            # width_and_product's products, inlined: this runs every step
            model = agent.model_
            u = model.A_inv.dot(row)
            bonus = scale * math.sqrt(max(float(row.dot(u)), 0.0))
    score = mu - agent.cutoff_ + bonus
    if not math.isfinite(score):
        agent._check_observation(observation, "act")
    agent._lean_cache = (observation, row, u, agent.model_.n)
    return (_APPROVE if score > 0 else _DENY).copy()


def update(
    agent: Any, cache: tuple[Any, np.ndarray, Any, int], feedback: Any, outcomes: tuple
) -> bool:
    """Learn what the last :func:`act` decided from ``feedback``; False: not handled here.

    ``outcomes`` is the (low, high) range of an outcome under the agent's link;
    an outcome outside it, or feedback that is not one applicant's, goes to the
    readable path (which names the error).
    """
    revealed, ys = feedback["revealed"], feedback["y"]
    try:
        if len(revealed) != 1 or len(ys) != 1 or isinstance(revealed, str):
            return False
        if not revealed[0]:
            return True
        target = float(ys[0])
    except (TypeError, ValueError):  # not sequences of numbers: the general path names it
        return False
    low, high = outcomes
    if not low <= target <= high:  # NaN fails too
        return False
    _, row, u, n = cache
    agent.model_.learn_row(row, target, u if n == agent.model_.n else None)
    agent.beta_ = agent.decision_beta()
    return True
