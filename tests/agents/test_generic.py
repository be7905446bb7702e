"""The generic agent suite: every concrete Agent subclass passes each check of ``check_agent``.

One pytest id per (agent, check), as scikit-learn's ``parametrize_with_checks``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.base import clone

from agents.base import (
    AGENT_CHECKS,
    ENV_CHECKS,
    Agent,
    AgentContractError,
    all_agents,
    check_agent,
    parametrize_with_checks,
    yield_checks,
)
from agents.rl import SB3Agent
from envs_registry import env_ids
from osfb_gym.core.family import FAMILIES
from osfb_gym.grade.gradescope import CONTRACT_CHECKS

# small sizes so that each checking episode is quick (the registered defaults
# of services draw 1,000 users): each family's own, from its Family record
SMALL = {
    env_id: dict(family.small_kwargs)
    for family in FAMILIES.values()
    for env_id in env_ids(family.name)
}

# SB3Agent acts only with a trained model, which its defaults cannot give;
# tests/agents/test_rl.py runs check_agent on trained models.
AGENTS = [cls for cls in all_agents() if cls is not SB3Agent]


def test_discovery_finds_the_known_agents():
    names = {cls.__name__ for cls in AGENTS}
    assert {"Greedy", "Adaptive", "EpsilonGreedy", "Margin", "DSAL", "AcQUIre"} <= names
    assert "CutoffAgent" not in names and "_DecayingExploration" not in names


@parametrize_with_checks(AGENTS, env_kwargs=SMALL)
def test_every_agent_passes_each_check(agent, check):
    check(agent)


def test_check_agent_runs_every_named_check_and_the_grader_reports_from_the_same_list():
    checks = [check.name for check in yield_checks(AGENTS[0], env_ids=())]
    assert checks == [name for name, _, _ in AGENT_CHECKS]
    assert [c.name for c in yield_checks(AGENTS[0], env_ids=(), require_constraints=False)] == [
        name for name, _, optional in AGENT_CHECKS if not optional
    ]
    env_id = AGENTS[0].env_ids[0]
    named = [c.name for c in yield_checks(AGENTS[0], env_ids=[env_id])][len(AGENT_CHECKS) :]
    assert named == [f"{name} on {env_id}" for name, _ in ENV_CHECKS]
    graded = [name for name, _ in CONTRACT_CHECKS]
    assert graded[2:-2] == [name for name, _, optional in AGENT_CHECKS if not optional]
    assert check_agent(AGENTS[0], env_kwargs=SMALL).get_params() == AGENTS[0]().get_params()


def test_check_agent_reports_the_agents_own_checks_before_its_env_ids():
    from agents.lending import Greedy

    class Forgetful(Greedy):
        env_ids = ()

        def __init__(self, l2: float = 1.0, solver: str = "incremental"):
            self.l2 = l2

    with pytest.raises(AgentContractError, match="init stores only") as caught:
        check_agent(Forgetful)
    assert caught.value.check == "init stores only"
    bare = type("Bare", (Greedy,), {"env_ids": ()})
    with pytest.raises(AgentContractError, match="declares no env_ids") as caught:
        check_agent(bare)
    assert caught.value.check == "env_ids"


def _wrapped(cls: type[Agent]) -> list[tuple[str, Agent]]:
    """The hyperparameters of ``cls`` that hold an agent, each with a concrete agent it takes."""
    found = []
    for name, constraints in cls._parameter_constraints.items():
        kinds = [c for c in constraints if isinstance(c, type) and issubclass(c, Agent)]
        for kind in kinds:
            inner = next(other for other in AGENTS if issubclass(other, kind))
            found.append((name, inner()))
            break
    return found


WRAPPERS = [(cls, name, inner) for cls in AGENTS for name, inner in _wrapped(cls)]


def test_there_are_wrappers_to_check():
    assert {cls.__name__ for cls, _, _ in WRAPPERS} >= {"LabelEfficient", "AppleTastingSampling"}


@pytest.mark.parametrize(
    ("cls", "param", "inner"), WRAPPERS, ids=lambda v: getattr(v, "__name__", str(v))
)
def test_nested_set_params_and_clone_reach_the_wrapped_agent(cls, param, inner):
    agent = cls(**{param: inner})
    name, value = next(
        (key, v)
        for key, v in inner.get_params(deep=False).items()
        if isinstance(v, float | int) and not isinstance(v, bool)
    )
    assert agent.get_params()[f"{param}__{name}"] == value
    agent.set_params(**{f"{param}__{name}": value * 2})
    assert getattr(getattr(agent, param), name) == value * 2
    copy = clone(agent)
    assert getattr(copy, param) is not getattr(agent, param)
    assert copy.get_params()[f"{param}__{name}"] == value * 2
    check_agent(copy, env_kwargs=SMALL)  # the wrapper with its changed base keeps the contract


def test_the_agents_page_lists_every_agent_and_hyperparameter():
    page = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    for cls in AGENTS:
        assert f"`{cls.__name__}`" in page, f"docs/agents.md does not list {cls.__name__}"
        for name in cls._parameter_constraints:
            assert f"`{name}=" in page, f"docs/agents.md omits {cls.__name__}'s {name}"
