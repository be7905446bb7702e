"""Submissions as source text: one per kind of failure the grader must diagnose, and a snoop.

Kept as text (written to a temporary .py file by the tests) so that neither
pytest's module collection nor ruff trips over the deliberately broken code.
"""

SOURCES: dict[str, str] = {
    "bad_signature": """\
import numpy as np

from agents.base import Agent


class NoFeedback(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)

    def update(self, observation, action):  # the runner also passes reward and feedback
        pass
""",
    "import_error": """\
import numpy as np
import a_package_that_does_not_exist  # noqa: F401

from agents.base import Agent


class NeedsAPackage(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    "infinite_loop": """\
import numpy as np

from agents.base import Agent


class NeverReturns(Agent):
    def act(self, observation):
        while True:
            np.sqrt(2.0)
""",
    "invalid_action": """\
from agents.base import Agent


class ReturnsAFloat(Agent):
    def act(self, observation):
        return 0.7  # a probability, not an array of 0/1 decisions
""",
    "not_an_agent": """\
import numpy as np


class ApproveAll:
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    "raises_in_act": """\
import numpy as np

from agents.base import Agent


class Crashes(Agent):
    def act(self, observation):
        weights = np.zeros(3)
        return (observation @ weights > 0).astype(np.int8)  # shapes do not match
""",
    "state_in_init": """\
import numpy as np

from agents.base import Agent


class Stateful(Agent):
    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha
        self.weights_ = np.zeros(5)  # learned state belongs in reset()

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)
""",
    "syntax_error": """\
from agents.base import Agent


class Broken(Agent)
    def act(self, observation):
        return 1
""",
    "two_agents": """\
import numpy as np

from agents.base import Agent


class ApproveAll(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)


class DenyAll(Agent):
    def act(self, observation):
        return np.zeros(len(observation), dtype=np.int8)
""",
    "snoops_for_the_oracle": """\
import numpy as np

from agents.base import Agent


class Snoop(Agent):
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        if "oracle" in (feedback or {}):
            raise RuntimeError("saw the oracle at reset")

    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)

    def update(self, observation, action, reward, feedback):
        if "oracle" in feedback or "mu" in feedback or "loss" in feedback:
            raise RuntimeError("saw the oracle")
""",
    "exits_abruptly": """\
import os

import numpy as np

from agents.base import Agent


class Quits(Agent):
    def act(self, observation):
        os._exit(3)
""",
    "random_any_env": """\
from agents.base import Agent


class RandomActions(Agent):
    # a legal action on any env: a draw from the action space, seeded in reset
    def reset(self, observation_space, action_space, *, seed=None, feedback=None):
        super().reset(observation_space, action_space, seed=seed, feedback=feedback)
        action_space.seed(seed)

    def act(self, observation):
        return self.action_space_.sample()
""",
}
