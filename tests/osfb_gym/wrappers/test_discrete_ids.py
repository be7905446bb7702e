"""The ``-Discrete`` RL ids: what CleanRL asserts of them, and no leak through their actions.

docs/rl-training.md names the ids CleanRL's unmodified ``ppo.py`` and
``dqn.py`` take (between ``<!-- cleanrl-ids -->`` markers); the test below
asserts of each exactly what those scripts assert or need of an env (a
``Discrete`` single action space of a ``SyncVectorEnv`` made as they make
it; a ``float32`` 1-D ``Box`` observation for their MLP), and that the list
is every such id, so the page cannot drift from the registry.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import ENVS, RL_ENVS, rl_env_ids
from osfb_gym.wrappers import DiscreteActions
from tests.helpers import assert_same, differs
from tests.osfb_gym.envs.hidden import override_hidden
from tests.osfb_gym.envs.test_ecosystem import public_state

PAGE = Path(__file__).resolve().parents[3] / "docs" / "rl-training.md"
SMALL = {
    "lending": {"horizon": 30},
    "apple": {"horizon": 30},
    "reject": {"horizon": 30},
    "services": {"n_users": 30, "n_services": 4},
    "delayed_impact": {"horizon": 30},
}
TWINS = [entry.id for entry in RL_ENVS if entry.kwargs.get("discrete_actions")]


def documented_ids() -> list[str]:
    text = PAGE.read_text()
    block = re.search(r"<!-- cleanrl-ids -->(.*?)<!-- /cleanrl-ids -->", text, re.S)
    assert block, f"{PAGE} has no <!-- cleanrl-ids --> block"
    return re.findall(r"`([A-Za-z]+(?:-[A-Za-z]+)*?-RL(?:-[A-Za-z]+)*-v0)`", block.group(1))


def cleanrl_envs(env_id: str) -> gym.vector.SyncVectorEnv:
    """The vector env CleanRL's ppo.py and dqn.py make (their ``make_env``, no video)."""

    def thunk() -> gym.Env:
        env = gym.make(env_id)
        return gym.wrappers.RecordEpisodeStatistics(env)

    return gym.vector.SyncVectorEnv([thunk])


def test_the_page_names_exactly_the_ids_with_discrete_actions():
    named = documented_ids()
    assert len(named) == len(set(named))
    assert set(named) == set(rl_env_ids(discrete=True))
    # every family has one, and no id with other actions is named
    families = {entry.family for entry in RL_ENVS if entry.id in named}
    assert families == {entry.family for entry in ENVS}
    assert set(rl_env_ids(discrete=False)).isdisjoint(named)


@pytest.mark.parametrize("env_id", documented_ids())
def test_cleanrl_accepts_the_documented_id(env_id):
    envs = cleanrl_envs(env_id)
    # ppo.py and dqn.py: assert isinstance(envs.single_action_space, gym.spaces.Discrete)
    assert isinstance(envs.single_action_space, gym.spaces.Discrete)
    space = envs.single_observation_space
    assert isinstance(space, gym.spaces.Box) and space.dtype == np.float32
    assert len(space.shape) == 1
    obs, _ = envs.reset(seed=1)
    assert obs.shape == (1, *space.shape) and obs.dtype == np.float32
    obs, reward, *_ = envs.step(np.array([envs.single_action_space.n - 1]))
    assert space.contains(obs[0]) and np.isfinite(reward).all()
    envs.close()


@pytest.mark.parametrize("env_id", rl_env_ids(discrete=False))
def test_the_ids_left_out_have_other_actions(env_id):
    assert not isinstance(gym.make(env_id).action_space, gym.spaces.Discrete)


@pytest.mark.parametrize("env_id", TWINS)
def test_a_twin_is_its_rl_id_with_coded_actions(env_id):
    """Same seeds, actions coded by DiscreteActions: the same observations and rewards."""
    entry = next(e for e in RL_ENVS if e.id == env_id)
    plain_id = env_id.replace("-Discrete-v0", "-v0")
    kwargs = SMALL[entry.family]
    twin, plain = gym.make(env_id, **kwargs), gym.make(plain_id, **kwargs)
    codes = _codes(twin)
    assert codes.env.action_space == plain.action_space
    rng = np.random.default_rng(0)
    assert_same(twin.reset(seed=3), plain.reset(seed=3))
    for _ in range(12):
        k = int(rng.integers(twin.action_space.n))
        assert_same(twin.step(k), plain.step(codes.action(k)))


def _codes(env: gym.Env) -> DiscreteActions:
    layer: Any = env
    while not isinstance(layer, DiscreteActions):
        layer = layer.env
    return layer


def _public(env: gym.Env) -> list:
    # the features view's fitted learner (public ``learner_``) grows buffers whose rows
    # past those filled are uninitialised memory, which a byte comparison would call
    # different; what it learned is in the observation, compared, and the views' own
    # no-leak tests probe it (tests/osfb_gym/wrappers/test_observation_views.py)
    return [item for item in public_state(env) if item[1] != "learner_"]


def _rollout(env_id: str, extreme: str, hide_oracle: bool = True) -> tuple[list, int]:
    entry = next(e for e in RL_ENVS if e.id == env_id)
    env = gym.make(env_id, hide_oracle=hide_oracle, **SMALL[entry.family])
    codes = _codes(env)
    seen: list = [env.reset(seed=13), _public(env)]
    rng = np.random.default_rng(13)
    changed = 0
    for _ in range(12):
        k = int(rng.integers(env.action_space.n))
        changed += bool(override_hidden(env.unwrapped, codes.action(k), extreme))
        step = env.step(k)
        seen += [step, _public(env)]
        if step[2] or step[3]:
            break
    return seen, changed


@pytest.mark.parametrize("env_id", TWINS)
def test_no_hidden_outcome_reaches_the_policy_through_a_twin(env_id):
    """Observations, rewards, info and every public attribute are blind to hidden outcomes."""
    low, changed_low = _rollout(env_id, "low")
    high, changed_high = _rollout(env_id, "high")
    assert_same(low, high)
    assert changed_low and changed_high
    # the test has teeth: the same walk with the oracle left in info does see the change
    assert differs(_rollout(env_id, "low", False)[0], _rollout(env_id, "high", False)[0])
