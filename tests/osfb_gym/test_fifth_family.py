"""Adding a family takes its env package (with its ``Family`` record) and the registry.

The toy family of ``tests/osfb_gym/fifth_family/coin.py`` is the package
(its env, metrics, agent and ``FAMILY`` record); here it gets its two
registry lines (one ``EnvEntry`` in ``envs_registry.ENVS``, its record's
path in ``envs_registry.FAMILY_RECORDS``), as a new family's author would add
them; everything below then works without any other change: registration
with its RL-ready id, the checkers, the runner with the family's metrics, the
grader's lookup, and ``osfb-bench list``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs_registry
from osfb_gym.core.family import FAMILIES, family_of
from tests.osfb_gym.fifth_family.coin import FAMILY as COIN

ENTRY = envs_registry.EnvEntry(
    id="Coin-v0",
    entry_point="tests.osfb_gym.fifth_family.coin:CoinEnv",
    family="coin",
    rl_views=("plain",),
)


@pytest.fixture
def coin_family(monkeypatch):
    """The two registry entries a new family adds, undone after the test."""
    records = {**envs_registry.FAMILY_RECORDS, "coin": "tests.osfb_gym.fifth_family.coin:FAMILY"}
    monkeypatch.setattr(envs_registry, "FAMILY_RECORDS", records)
    envs = (*envs_registry.ENVS, ENTRY)
    monkeypatch.setattr(envs_registry, "ENVS", envs)
    monkeypatch.setattr(envs_registry, "RL_ENVS", envs_registry.rl_entries(envs))
    ids = ("Coin-v0", "Coin-RL-v0")
    yield envs_registry.register_all()
    for env_id in ids:
        gym.registry.pop(env_id, None)


def test_the_registry_row_registers_the_env_and_its_plain_rl_id(coin_family):
    assert "Coin-v0" in coin_family and "Coin-v0" in envs_registry.env_ids("coin")
    assert envs_registry.rl_env_ids("coin") == ["Coin-RL-v0"]  # no estimator views yet
    check_env(gym.make("Coin-v0").unwrapped, skip_render_check=True)
    rl = gym.make("Coin-RL-v0")
    observation, info = rl.reset(seed=0)
    assert observation.dtype == np.float32 and "oracle" not in info


def test_the_runner_scores_it_with_the_familys_metrics(coin_family):
    from osfb_gym.runner import evaluate

    agent = FAMILIES["coin"].reference_classes()[0]()
    frame = evaluate("Coin-v0", agent, seeds=range(3), env_kwargs=COIN.small_kwargs)
    assert (frame["bet_rate"] == 1.0).all() and (frame["steps"] == 20).all()
    assert (frame[COIN.objective] > 0).all()  # betting on every coin loses where p < 1/2


def test_its_probe_proves_no_leak(coin_family):
    """The no-leak probe finds the family's own through its record: no test file names it."""
    from tests.osfb_gym.envs import hidden

    def seen(extreme: str) -> list:
        env = gym.make("Coin-v0", horizon=20)
        obs, _ = env.reset(seed=4)
        record, changed = [obs], 0
        for action in [0, 1] * 10:
            changed += hidden.override_hidden(env, action, extreme)
            obs, reward, _, _, info = env.step(action)
            record += [obs, reward, info["feedback"]["y"]]
        assert changed == 10  # every pass hid a coin, and the probe set it
        return record

    for a, b in zip(seen("low"), seen("high"), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_grader_and_the_cli_listing_read_the_record(coin_family):
    from osfb_gym.cli import describe
    from osfb_gym.grade import family_of as graders_family_of

    assert family_of("Coin-v0") is COIN and graders_family_of("Coin-v0") is COIN
    listing = describe()
    assert "Coin-v0" in listing and "coin: cumulative_loss, lower is better" in listing
