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

The grader runs your agent in a process of its own that receives only these
calls' arguments (never the hidden truth), with 2048 MB of memory, 1 MiB of
printed output and no subprocesses or threads: use numpy, single-threaded.

For the other families change ``env_ids`` and the action ``act`` returns
(see the assignment of your family in this folder).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent


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
        warm = feedback.get("warm_start", {"X": [], "y": []})
        self.X_: list[np.ndarray] = list(np.asarray(warm["X"]))
        self.y_: list[float] = list(np.asarray(warm["y"], dtype=float))
        # TODO: create the state your algorithm needs (e.g. A = l2 * I and b = 0).

    def act(self, observation: Any) -> np.ndarray:
        """Approve (1) or deny (0) each applicant (a row of ``observation``)."""
        applicants = np.asarray(observation, dtype=float)
        # TODO: estimate each applicant's mean outcome from what you have seen,
        # add an exploration bonus scaled by self.alpha, and approve when it beats
        # self.cutoff_. Approving everyone explores fully and never exploits.
        return np.ones(len(applicants), dtype=np.int8)

    def update(self, observation: Any, action: Any, reward: float, feedback: Any) -> None:
        """Store the outcomes the step revealed (only those of approved applicants)."""
        revealed = np.asarray(feedback["revealed"], dtype=bool)
        for x, y in zip(
            np.asarray(observation)[revealed], np.asarray(feedback["y"])[revealed], strict=True
        ):
            self.X_.append(x)
            self.y_.append(float(y))
        # TODO: update your estimate (refit, or a rank-one update of A and b).
