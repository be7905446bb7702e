"""The Agent contract's corner cases."""

from __future__ import annotations

import numpy as np

from agents.base import Agent


class NoHyperparameters(Agent):
    def act(self, observation):
        return np.ones(len(observation), dtype=np.int8)


def test_an_agent_without_init_has_no_hyperparameters_and_clones():
    agent = NoHyperparameters()
    assert agent.get_params() == {}
    assert repr(agent.clone()) == "NoHyperparameters()"
