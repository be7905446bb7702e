"""Decision makers: the papers' algorithms and the RL adapters.

Nothing here imports environment internals: agents see observations,
rewards and ``info["feedback"]``, as any learner would.
"""

from agents.base import Agent

__all__ = ["Agent"]
