"""The generic agent suite: every concrete Agent subclass passes ``check_agent``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.base import all_agents, check_agent
from agents.rl import SB3Agent

# small sizes so that each checking episode is quick (the registered defaults
# of services draw 1,000 users)
SMALL = {
    "OneSidedLending-v0": {"horizon": 40, "batch_size": 3},
    "AppleTasting-v0": {"horizon": 300},
    "RejectOption-v0": {"horizon": 300},
    "MultiServiceChoice-v0": {"n_users": 60, "n_services": 5},
}

# SB3Agent acts only with a trained model, which its defaults cannot give;
# tests/agents/test_rl.py runs check_agent on trained models.
AGENTS = [cls for cls in all_agents() if cls is not SB3Agent]


def test_discovery_finds_the_known_agents():
    names = {cls.__name__ for cls in AGENTS}
    assert {"Greedy", "Adaptive", "EpsilonGreedy", "Margin", "DSAL", "AcQUIre"} <= names
    assert "CutoffAgent" not in names and "_DecayingExploration" not in names


@pytest.mark.parametrize("cls", AGENTS, ids=lambda cls: cls.__name__)
def test_every_agent_passes_check_agent(cls):
    check_agent(cls, env_kwargs=SMALL)


def test_the_agents_page_lists_every_agent_and_hyperparameter():
    page = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    for cls in AGENTS:
        assert f"`{cls.__name__}`" in page, f"docs/agents.md does not list {cls.__name__}"
        for name in cls._parameter_constraints:
            assert f"`{name}=" in page, f"docs/agents.md omits {cls.__name__}'s {name}"
