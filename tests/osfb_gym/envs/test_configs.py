"""The families' configs: world types, frozen and checked, equal to the env's keywords."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from osfb_gym.envs import apple, delayed_impact, lending, reject, services
from osfb_gym.envs.apple.config import ARGUMENTS as APPLE_ARGUMENTS
from osfb_gym.envs.apple.config import apple_config
from osfb_gym.envs.delayed_impact.config import ARGUMENTS as IMPACT_ARGUMENTS
from osfb_gym.envs.delayed_impact.config import impact_config
from osfb_gym.envs.lending.config import ARGUMENTS as LENDING_ARGUMENTS
from osfb_gym.envs.lending.config import lending_config
from osfb_gym.envs.reject.config import ARGUMENTS as REJECT_ARGUMENTS
from osfb_gym.envs.reject.config import reject_config
from osfb_gym.envs.services.config import ARGUMENTS as SERVICES_ARGUMENTS
from osfb_gym.envs.services.config import services_config
from tests.helpers import needs_osfb_data, osfb_data

#: env id -> (env class, config types, the keywords a config takes, kwargs -> config)
FAMILIES: dict[str, tuple[type, tuple[type, ...], tuple[str, ...], Any]] = {
    "OneSidedLending-v0": (
        lending.OneSidedLendingEnv,
        (lending.SyntheticLending, lending.DatasetLending),
        LENDING_ARGUMENTS,
        lending_config,
    ),
    "AppleTasting-v0": (
        apple.AppleTastingEnv,
        (apple.SyntheticApple, apple.DatasetApple),
        APPLE_ARGUMENTS,
        apple_config,
    ),
    "RejectOption-v0": (
        reject.RejectOptionEnv,
        (reject.SyntheticReject, reject.DatasetReject),
        REJECT_ARGUMENTS,
        reject_config,
    ),
    "MultiServiceChoice-v0": (
        services.MultiServiceChoiceEnv,
        (services.SyntheticServices, services.DataServices),
        SERVICES_ARGUMENTS,
        services_config,
    ),
    "DelayedImpactLending-v0": (
        delayed_impact.DelayedImpactLendingEnv,
        (delayed_impact.SyntheticImpact, delayed_impact.FicoImpact),
        IMPACT_ARGUMENTS,
        impact_config,
    ),
}
#: the dataset-backed world each family makes in the generic tests below
DATA_WORLD: dict[str, dict[str, Any]] = {
    "MultiServiceChoice-v0": {"population": "census", "n_services": 3},
    "DelayedImpactLending-v0": {"dataset": "fico"},
}
#: the folder each data world reads from OSFB_DATA
DATA_FOLDER = {"MultiServiceChoice-v0": "adult", "DelayedImpactLending-v0": "fico"}

#: (env id, keywords, the config they make): a synthetic and a dataset world each
SAME = [
    (
        "OneSidedLending-v0",
        {"link": "linear", "batch_size": 3, "scenario": "greedy_trap", "world_seed": 2},
        lending.SyntheticLending(link="linear", batch_size=3, scenario="greedy_trap", world_seed=2),
    ),
    (
        "OneSidedLending-v0",
        {"dataset": "breast_cancer", "batch_size": 20, "last_batch": "drop"},
        lending.DatasetLending(dataset="breast_cancer", batch_size=20, last_batch="drop"),
    ),
    (
        "AppleTasting-v0",
        {"scenario": "striped", "dim": 3, "noise": 0.1, "order": "adversarial", "horizon": 40},
        apple.SyntheticApple(scenario="striped", dim=3, noise=0.1, order="adversarial", horizon=40),
    ),
    (
        "AppleTasting-v0",
        {"dataset": "breast_cancer", "positive_class": 0, "rows": "test", "cost_fp": 2.0},
        apple.DatasetApple(dataset="breast_cancer", positive_class=0, rows="test", cost_fp=2.0),
    ),
]

SAME += [
    (
        "RejectOption-v0",
        {"scenario": "separable", "noise": 0.1, "dim": 3, "d": 0.1, "settle": "never"},
        reject.SyntheticReject(scenario="separable", noise=0.1, dim=3, d=0.1, settle="never"),
    ),
    (
        "RejectOption-v0",
        {"dataset": "breast_cancer", "replacement": True, "horizon": 30, "query_cost": 0.1},
        reject.DatasetReject(dataset="breast_cancer", replacement=True, horizon=30, query_cost=0.1),
    ),
]

SAME += [
    (
        "MultiServiceChoice-v0",
        {"n_users": 30, "loss": "huber", "n_services": 4, "dynamics_rounds": 2},
        services.SyntheticServices(n_users=30, loss="huber", n_services=4, dynamics_rounds=2),
    ),
    (
        "MultiServiceChoice-v0",
        {"population": "linear", "n_users": 20, "dim": 3, "samples_per_user": 8},
        services.SyntheticServices(population="linear", n_users=20, dim=3, samples_per_user=8),
    ),
    pytest.param(
        "MultiServiceChoice-v0",
        {"population": "census", "n_services": 3, "report": "excess"},
        services.DataServices(population="census", n_services=3, report="excess"),
        marks=needs_osfb_data("adult"),
    ),
]

SAME += [
    (
        "DelayedImpactLending-v0",
        {"scenario": "bin_shift", "batch_size": 3, "shift_mass": 0.2, "horizon": 30},
        delayed_impact.SyntheticImpact(
            scenario="bin_shift", batch_size=3, shift_mass=0.2, horizon=30
        ),
    ),
    pytest.param(
        "DelayedImpactLending-v0",
        {"dataset": "fico", "groups": ["Asian", "White"], "feedback": "full", "horizon": 20},
        delayed_impact.FicoImpact(groups=("Asian", "White"), feedback="full", horizon=20),
        marks=needs_osfb_data("fico"),
    ),
]

#: a config refusing a bad value when made, naming it
BAD = [
    (lambda: lending.SyntheticLending(batch_size=0), "batch_size"),
    (lambda: lending.SyntheticLending(scenario="greedy_trap", dim=1), "dim"),
    (lambda: lending.SyntheticLending(link="logistic", noise_std=1.0), "noise_std"),
    (lambda: lending.SyntheticLending(cutoff=0.5, cutoff_quantile=0.5), "cutoff"),
    (lambda: lending.SyntheticLending(warm_start=0.1), "warm_start"),
    (lambda: lending.DatasetLending(dataset=3), "dataset"),
    (lambda: lending.DatasetLending(dataset="german", scaling="minmax"), "scaling"),
    (lambda: lending.DatasetLending(dataset="german", cutoff=2.0), "cutoff"),
    (lambda: apple.SyntheticApple(noise=0.7), "noise"),
    (lambda: reject.SyntheticReject(d=0.6), "d"),
    (lambda: delayed_impact.SyntheticImpact(shift_mass=2.0), "shift_mass"),
    (lambda: delayed_impact.SyntheticImpact(scenario="three"), "scenario"),
    (lambda: delayed_impact.SyntheticImpact(dynamics="bin_shift"), "repay_score_change"),
    (lambda: delayed_impact.FicoImpact(groups=("White",)), "groups"),
    (lambda: delayed_impact.FicoImpact(data_home=3), "data_home"),
    (lambda: services.SyntheticServices(n_users=3, n_services=4), "n_services"),
    (lambda: services.SyntheticServices(population="census"), "population"),
    (lambda: services.SyntheticServices(population="linear", loss="huber"), "loss"),
    (lambda: services.SyntheticServices(n_users=5, n_clusters=6), "n_clusters"),
    (lambda: services.SyntheticServices(reference_ks=[11]), "reference_ks"),
    (lambda: services.DataServices(population="census", n_users=10), "n_users"),
    (lambda: services.DataServices(population="movielens", census_groups="sex"), "census_groups"),
    (lambda: services.DataServices(population="census", dataset="movielens"), "dataset"),
    (lambda: reject.SyntheticReject(scenario="separable", separation=1.0), "separation"),
    (lambda: reject.SyntheticReject(separation=9.0), "separation"),
    (lambda: reject.SyntheticReject(settle="later"), "settle"),
    (lambda: reject.DatasetReject(dataset="guide", replacement=1), "replacement"),
    (lambda: reject.DatasetReject(dataset="guide", query_cost=-1.0), "query_cost"),
    (lambda: apple.SyntheticApple(scenario="gappy", positive_rate=0.3), "positive_rate"),
    (lambda: apple.SyntheticApple(scenario="separable", gap_width=0.3), "gap_width"),
    (lambda: apple.SyntheticApple(gain=-1.0), "gain"),
    (lambda: apple.DatasetApple(dataset="sms_spam", positive_class=2), "positive_class"),
    (lambda: apple.DatasetApple(dataset="sms_spam", rows="some"), "rows"),
    (
        lambda: apple.DatasetApple(
            dataset="reuters_r8", first_positive_first=True, order="adversarial"
        ),
        "first_positive_first",
    ),
]


#: each family's count argument (the episode's length)
SIZE = {"MultiServiceChoice-v0": "n_services"}
#: small worlds where the defaults are big
SMALL = {"MultiServiceChoice-v0": {"n_users": 30, "reference_restarts": 0}}


def _episode(env: gym.Env, seed: int = 1, steps: int = 12) -> list:
    obs, info = env.reset(seed=seed)
    out = [obs, info["feedback"]]
    env.action_space.seed(seed)
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        out += [obs, reward, info["oracle"]["loss"], info["feedback"]["revealed"]]
        if terminated or truncated:
            break
    return out


@pytest.mark.parametrize(("env_id", "kwargs", "config"), SAME)
def test_a_config_and_its_keywords_make_the_same_env(env_id, kwargs, config):
    by_keywords = gym.make(env_id, **kwargs)
    by_config = gym.make(env_id, config=config)
    assert by_keywords.unwrapped.config == config == by_config.unwrapped.config
    first, second = _episode(by_keywords), _episode(by_config)
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        if isinstance(a, dict):
            assert a.keys() == b.keys()
        else:
            np.testing.assert_array_equal(a, b)  # the same code path: bit for bit


@pytest.mark.parametrize("env_id", FAMILIES)
def test_the_keywords_pick_the_world_type(env_id):
    cls, (synthetic, dataset), _, _ = FAMILIES[env_id]
    assert type(cls(**SMALL.get(env_id, {})).config) is synthetic
    world = DATA_WORLD.get(env_id, {"dataset": "breast_cancer"})
    folder = DATA_FOLDER.get(env_id)
    if folder is not None and osfb_data(folder) is None:
        pytest.skip(f"the data world reads {folder} from OSFB_DATA")
    made = cls(**world).config
    assert type(made) is dataset and made.dataset == world.get("dataset", "adult")


@pytest.mark.parametrize("env_id", FAMILIES)
def test_a_config_is_frozen_and_its_checks_are_idempotent(env_id):
    _, (synthetic, _), _, _ = FAMILIES[env_id]
    size = SIZE.get(env_id, "horizon")
    config = synthetic(**{size: np.int64(3)})
    assert type(getattr(config, size)) is int and getattr(config, size) == 3
    assert dataclasses.replace(config) == config  # a checked config checks again to itself
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(config, size, 5)


@pytest.mark.parametrize(("make", "named"), BAD)
def test_a_config_refuses_bad_values_when_made_naming_them(make, named):
    with pytest.raises((ValueError, TypeError), match=named):
        make()


@pytest.mark.parametrize("env_id", FAMILIES)
def test_world_types_take_only_their_own_arguments(env_id):
    _, (synthetic, dataset), _, _ = FAMILIES[env_id]
    with pytest.raises(TypeError, match="data_home"):
        synthetic(data_home="somewhere")
    with pytest.raises(TypeError, match="world_seed"):
        dataset(world_seed=3)


@pytest.mark.parametrize("env_id", FAMILIES)
def test_a_config_beside_other_keywords_is_refused_naming_them(env_id):
    cls, (synthetic, _), _, _ = FAMILIES[env_id]
    with pytest.raises(TypeError, match="n_services|horizon"):
        cls(**{SIZE.get(env_id, "horizon"): 3}, config=synthetic())
    with pytest.raises(TypeError, match="config"):
        cls(config={"horizon": 3})


@pytest.mark.parametrize("env_id", FAMILIES)
def test_the_env_signature_and_the_configs_agree_on_every_default(env_id):
    """The keywords are the configs' fields with the same defaults (None: resolved later)."""
    cls, types, arguments, make = FAMILIES[env_id]
    parameters = inspect.signature(cls).parameters
    assert set(arguments) == set(parameters) - {"render_mode", "render_truth", "config"}
    for config_type in types:
        for field in dataclasses.fields(config_type):
            default = parameters[field.name].default
            if field.default is not dataclasses.MISSING and default is not None:
                assert field.default == default, field.name
    assert make() == types[0]()


def test_the_retention_world_is_a_population_config_and_its_own_terms():
    kwargs = {"n_users": 40, "n_services": 4, "replace": True, "tolerance": 0.5}
    config = services.RetentionConfig(
        services=services.SyntheticServices(n_users=40, n_services=4, reference_restarts=0),
        replace=True,
        tolerance=0.5,
    )
    by_keywords = gym.make("MultiServiceChoice-Retention-v0", **kwargs)
    by_config = gym.make("MultiServiceChoice-Retention-v0", config=config)
    assert by_keywords.unwrapped.config == config == by_config.unwrapped.config
    assert config.horizon == 8 and config.outside_loss == 0.5  # 2 k, the tolerance
    assert dataclasses.replace(config) == config
    for a, b in zip(_episode(by_keywords), _episode(by_config), strict=True):
        if not isinstance(a, dict):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="n_users"):
        services.MultiServiceChoiceRetentionEnv(n_users=30, config=config)
    with pytest.raises(ValueError, match="replace"):
        services.RetentionConfig(services=services.DataServices(population="census"), replace=True)
    with pytest.raises(ValueError, match="dynamics_rounds"):
        services.RetentionConfig(services=services.SyntheticServices(dynamics_rounds=2))
    with pytest.raises(TypeError, match="services"):
        services.RetentionConfig(services={"n_users": 3})
