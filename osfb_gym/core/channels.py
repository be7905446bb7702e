"""The honest-feedback channels (docs/concepts.md).

Every environment of osfb-gym keeps what the learner may see apart from what
only the evaluator may see:

=====================  ===============  =========================================
channel                who may read it  what it holds
=====================  ===============  =========================================
``obs``                agent            context for the next decision(s)
``reward``             agent            payoff of revealed outcomes only
``info["feedback"]``   agent            what the setting revealed just now
``info["oracle"]``     evaluator only   hidden truth, Bayes decision, loss terms
=====================  ===============  =========================================

:func:`osfb_gym.runner.run_episode` strips the oracle before an agent sees
``info``; :class:`HideOracle` does the same for any other loop.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym

FEEDBACK = "feedback"
ORACLE = "oracle"


def make_info(feedback: dict[str, Any], oracle: dict[str, Any]) -> dict[str, Any]:
    """Build a step's ``info`` from its two channels."""
    return {FEEDBACK: feedback, ORACLE: oracle}


def strip_oracle(info: dict[str, Any]) -> dict[str, Any]:
    """Return a shallow copy of ``info`` without the oracle channel.

    Examples
    --------
    >>> strip_oracle({"feedback": {"y": 1}, "oracle": {"loss": 0.3}})
    {'feedback': {'y': 1}}
    """
    return {key: value for key, value in info.items() if key != ORACLE}


class HideOracle(gym.Wrapper):
    """Remove ``info["oracle"]`` from every reset and step.

    Use it around any environment handed to code that must not see the
    hidden truth (a student's loop, a third-party trainer). It keeps
    nothing: no attribute of the wrapper holds an oracle, so nothing hidden
    is reachable through it. An evaluator reads ``info["oracle"]`` from the
    env itself, as :func:`osfb_gym.runner.run_episode` does.

    Examples
    --------
    >>> import gymnasium as gym
    >>> import osfb_gym
    >>> env = HideOracle(gym.make("OneSidedLending-v0"))
    >>> _, info = env.reset(seed=0)
    >>> "oracle" in info, "feedback" in info
    (False, True)
    """

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset the wrapped env and hide its oracle."""
        obs, info = self.env.reset(**kwargs)
        return obs, strip_oracle(info)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the wrapped env and hide its oracle."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, strip_oracle(info)
