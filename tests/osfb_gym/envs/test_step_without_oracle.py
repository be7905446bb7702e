"""``step_without_oracle``: what ``step`` shows the agent, no oracle computed, nothing leaked.

Every registered id and variant (the generic cases): the base class's
default (``step`` then strip) and the services' own path that skips the
oracle's work must give the agent's channels of ``step`` bit for bit,
leave the env in the state ``step`` leaves it, and pass the no-leak probe
(``tests.osfb_gym.envs.hidden.override_hidden``) on their own.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401
from osfb_gym.core.channels import strip_oracle
from osfb_gym.envs.services import MultiServiceChoiceEnv
from osfb_gym.envs.services.world import GroupAverages
from tests.helpers import assert_same, differs
from tests.osfb_gym.envs.cases import CASES, case_param
from tests.osfb_gym.envs.hidden import override_hidden

STEPS = 25


def make(case: tuple[str, dict[str, Any]]) -> Any:
    env_id, kwargs = case
    return gym.make(env_id, **kwargs).unwrapped


def rollout(env: Any, seed: int, oracle_free: list[bool], probe: str | None = None) -> list:
    """Seeded random actions; step ``i`` without the oracle where ``oracle_free[i]``."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    record: list = [(obs, strip_oracle(info))]
    for free in oracle_free:
        action = env.action_space.sample()
        if probe is not None:
            override_hidden(env, action, probe)
        if free:
            obs, reward, terminated, truncated, info = env.step_without_oracle(action)
            assert "oracle" not in info
        else:
            obs, reward, terminated, truncated, info = env.step(action)
            info = strip_oracle(info)
        record.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    return record


@pytest.mark.parametrize("case", [case_param(c) for c in CASES])
def test_step_without_oracle_shows_what_step_shows(case):
    """The same channels as ``step`` bit for bit, and the same state after (mixed in one run)."""
    reference = rollout(make(case), 5, [False] * STEPS)
    assert_same(rollout(make(case), 5, [True] * STEPS), reference)
    # alternating: each path continues from the state the other left
    assert_same(rollout(make(case), 5, [i % 3 == 1 for i in range(STEPS)]), reference)


@pytest.mark.parametrize("case", [case_param(c) for c in CASES])
def test_step_without_oracle_leaks_nothing(case):
    """The generic no-leak probe, on the path without the oracle."""
    env = make(case)
    low = rollout(env, 21, [True] * STEPS, probe="low")
    assert_same(low, rollout(make(case), 21, [True] * STEPS, probe="high"))
    if env.feedback_mode != "full":
        # the probe changes what step's oracle shows: the comparison above has teeth
        high_oracles = []
        for probe, out in (("low", []), ("high", high_oracles)):
            env = make(case)
            env.reset(seed=21)
            env.action_space.seed(21)
            for _ in range(STEPS):
                action = env.action_space.sample()
                override_hidden(env, action, probe)
                *_, terminated, truncated, info = env.step(action)
                out.append(info["oracle"])
                if terminated or truncated:
                    break
            if probe == "low":
                low_oracles = out
        assert differs(low_oracles, high_oracles)


def test_services_compute_no_oracle_without_it(monkeypatch):
    """The services' path skips the group averages (fairness) that step computes."""
    env = MultiServiceChoiceEnv(n_users=30, n_services=4)
    env.reset(seed=0)

    def refuse(self: Any, losses: np.ndarray) -> np.ndarray:
        raise AssertionError("the oracle's group averages were computed")

    monkeypatch.setattr(GroupAverages, "__call__", refuse)
    for user in range(4):  # through the last step (its dynamics' oracle too)
        *_, info = env.step_without_oracle(user)
        assert info.keys() == {"feedback"}
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="group averages"):
        env.step(0)


def test_a_subclass_that_overrides_step_is_not_bypassed():
    class Marked(MultiServiceChoiceEnv):
        def step(self, action: Any) -> Any:
            obs, reward, terminated, truncated, info = super().step(action)
            info["feedback"]["marked"] = True
            return obs, reward, terminated, truncated, info

    env = Marked(n_users=20, n_services=3)
    env.reset(seed=0)
    *_, info = env.step_without_oracle(1)
    assert info["feedback"]["marked"] and "oracle" not in info


def test_the_dynamics_run_on_the_path_without_the_oracle():
    """The last step's learning dynamics change what the agent is shown: run on both paths."""
    kwargs = {"n_users": 60, "n_services": 4, "loss": "huber", "dynamics_rounds": 3}
    with_oracle = MultiServiceChoiceEnv(**kwargs)
    without = MultiServiceChoiceEnv(**kwargs)
    with_oracle.reset(seed=2)
    without.reset(seed=2)
    for user in (3, 17, 40, 51):
        a = with_oracle.step(user)
        b = without.step_without_oracle(user)
    assert a[4]["oracle"]["loss_after_dynamics"] < a[4]["oracle"]["loss_before_dynamics"]
    assert_same(b, (*a[:4], strip_oracle(a[4])))
