"""The Family record: every registered env has one, and what it says matches the env."""

from __future__ import annotations

import gymnasium as gym
import pytest

import envs_registry
import osfb_gym  # noqa: F401  (registers the ids)
from envs_registry import ENVS
from osfb_gym.core.channels import ORACLE
from osfb_gym.core.family import FAMILIES, family_of
from osfb_gym.runner import run_episode


def test_every_registered_env_has_its_family_and_nothing_else_does():
    assert {entry.family for entry in ENVS} == set(FAMILIES)
    for entry in ENVS:
        assert family_of(entry.id).name == entry.family


def test_the_registry_and_the_records_agree():
    """Every registered id's family has a record; every record's env_id is registered as it."""
    registered = {entry.id: entry.family for entry in ENVS}
    assert {entry.family for entry in ENVS} <= set(envs_registry.FAMILY_RECORDS)
    for name, path in envs_registry.FAMILY_RECORDS.items():
        record = FAMILIES[name]
        assert record.name == name, path
        assert registered.get(record.env_id) == name, (name, record.env_id)
        package = path.partition(":")[0]
        assert package == f"osfb_gym.envs.{name}", path  # the family's own package holds it
    for entry in ENVS:  # the estimator views need the family's views class
        if set(entry.rl_views) - {"plain"}:
            assert FAMILIES[entry.family].views is not None, entry.id


def test_a_record_under_the_wrong_name_is_refused(monkeypatch):
    records = {**envs_registry.FAMILY_RECORDS, "coin": "osfb_gym.envs.apple:FAMILY"}
    monkeypatch.setattr(envs_registry, "FAMILY_RECORDS", records)
    with pytest.raises(TypeError, match="'coin'"):
        FAMILIES["coin"]


def test_an_unknown_id_is_named():
    with pytest.raises(ValueError, match="'Nope-v0'.*OneSidedLending-v0"):
        family_of("Nope-v0")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_record_matches_the_env_its_metrics_and_its_agents(name):
    family = FAMILIES[name]
    env = gym.make(family.env_id, **family.small_kwargs)
    assert type(env.unwrapped).metrics_class is family.metrics_class()
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert set(family.oracle_keys) <= set(info[ORACLE]) | {"bayes_risk"}
    agents = family.reference_classes()
    assert agents and all(family.env_id in cls.env_ids for cls in agents)
    trajectory = run_episode(env, agents[0](), seed=0)
    for column in (family.objective, *family.columns):
        assert column in trajectory.metrics, column
    assert family.curve in ("average_loss", "loss")
    assert family.direction == ("lower" if family.lower_is_better else "higher")
