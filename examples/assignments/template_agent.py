"""Your agent for the one-sided lending assignment: fill in the TODOs.

It runs as it is (it approves everyone, a legal but poor policy), so you can
grade it at any time:

    osfb-bench grade examples/assignments/template_agent.py --env OneSidedLending-v0

Copy this file, rename the class if you like, and keep exactly one Agent
subclass in the file. The rules of the contract (the grader checks them):

- ``__init__`` takes your hyperparameters as keywords with defaults and only
  stores each one under its own name (``self.alpha = alpha``): no other
  attributes, no logic.
- ``reset`` calls ``super().reset(...)`` (which sets ``self.rng_``, your only
  source of randomness) and creates the learned state, named with a trailing
  underscore (``self.X_``).
- ``act(observation)`` returns an action in the env's action space; for
  ``OneSidedLending-v0`` a numpy array of 0/1 ints, one per applicant in the
  batch (1 = approve).
- ``update(observation, action, reward, feedback)`` learns from what was
  revealed: ``feedback["revealed"]`` (a mask) and ``feedback["y"]`` (the
  outcomes where revealed). You never see the outcome of a denied applicant.

The observation has no constant column, and the world's mean outcome at
x = 0 is not 0 (it is 0.5 under the logistic link), so a linear fit needs an
intercept: the template stores each applicant as ``with_intercept(x)``, x
with a 1 appended, and scores applicants the same way (lending.md, step 1).

The grader runs your agent in a process of its own that receives only these
calls' arguments (never the hidden truth), with 2048 MB of memory, 1 MiB of
printed output and no subprocesses or threads: use numpy, single-threaded.

For the other families change ``env_ids`` and the action ``act`` returns
(see the assignment of your family in this folder); the bookkeeping here
then runs as it is (an apple-tasting or reject-option observation is one
row), and for MultiServiceChoice ``update`` stores nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent


def with_intercept(rows: Any) -> np.ndarray:
    """Return the rows of ``rows`` (one applicant each) with a 1 appended: the intercept column.

    Fit and score on these rows, so that ``with_intercept(x) . beta`` can reach
    the cutoff c even where ``x . beta`` is 0.
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    return np.column_stack([rows, np.ones(len(rows))])


class MyAgent(Agent):
    """TODO: one paragraph saying what your algorithm does.

    Parameters
    ----------
    alpha
        TODO: the strength of your exploration.
    l2
        Ridge strength of the least-squares fit.
    """

    env_ids = ("OneSidedLending-v0",)

    def __init__(self, alpha: float = 1.0, l2: float = 1.0) -> None:
        self.alpha = alpha
        self.l2 = l2

    def reset(self, observation_space, action_space, *, seed=None, feedback=None) -> None:
        """Start an episode: forget everything, read the warm-start sample."""
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        feedback = feedback or {}
        # The cutoff c and the warm-start sample (X, y) are public terms of the task.
        self.cutoff_ = float(feedback.get("cutoff", 0.5))
        warm = feedback.get("warm_start")
        # every applicant seen, with its intercept column, and their revealed outcomes
        self.X_: list[np.ndarray] = []
        self.y_: list[float] = []
        if warm is not None and len(warm["y"]):
            self.X_ += list(with_intercept(warm["X"]))
            self.y_ += [float(y) for y in warm["y"]]
        # TODO: create the state your algorithm needs, e.g. A = l2 * I and b = 0 of the size
        # of a row with its intercept (observation_space.shape[1] + 1), plus the warm start.

    def act(self, observation: Any) -> np.ndarray:
        """Approve (1) or deny (0) each applicant (a row of ``observation``)."""
        # TODO: estimate each applicant's mean outcome from what you have seen
        # (with_intercept(observation) @ beta_hat: one row per applicant, a 1 appended),
        # add an exploration bonus scaled by self.alpha, and approve when it beats
        # self.cutoff_. Approving everyone explores fully and never exploits.
        return np.ones(len(observation), dtype=np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Store the outcomes the step revealed (only those of approved applicants)."""
        if "y" not in feedback:  # MultiServiceChoice reveals losses, not outcomes: see services.md
            return
        revealed = np.atleast_1d(np.asarray(feedback["revealed"], dtype=bool))
        rows = with_intercept(observation)[revealed]
        outcomes = np.atleast_1d(np.asarray(feedback["y"], dtype=float))[revealed]
        for x, y in zip(rows, outcomes, strict=True):
            self.X_.append(x)
            self.y_.append(float(y))
        # TODO: update your estimate (refit, or a rank-one update of A and b).
