"""The observation views (O0 plain, O1 estimator features, O2 feedback) and the RL-ready ids."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import osfb_gym  # noqa: F401  (registers the ids)
from agents.apple import MarginPerceptron
from agents.base import Agent
from agents.delayed_impact import MaxProfit
from agents.lending import Adaptive, Greedy
from agents.reject import DSOL
from agents.services import AcQUIre
from envs_registry import ENVS, RL_ENVS, rl_env_ids
from osfb_gym.core.channels import strip_oracle
from osfb_gym.runner import run_episode
from osfb_gym.wrappers import VIEWS, EstimatorFeatures, apply_view, rl_env
from tests.helpers import assert_same, differs
from tests.osfb_gym.envs.hidden import override_hidden

STEPS = 20

# Horizons beyond the rollout: the reject option's lump settled at the end would
# reveal the hidden losses' sum by design (as in the generic env suite).
CASES: list[tuple[str, dict[str, Any]]] = [
    ("OneSidedLending-v0", {"horizon": 30}),
    ("OneSidedLending-v0", {"batch_size": 3, "horizon": 30}),
    ("OneSidedLending-v0", {"link": "linear", "batch_size": 2, "horizon": 30}),
    ("OneSidedLending-v0", {"scenario": "greedy_trap", "horizon": 30, "world_seed": 3}),
    ("AppleTasting-v0", {"dim": 4, "noise": 0.1, "horizon": 30}),
    ("AppleTasting-v0", {"scenario": "minority", "gain": 2.0, "cost_fp": 0.5, "horizon": 30}),
    ("RejectOption-v0", {"horizon": 30}),
    ("RejectOption-v0", {"d": 0.4, "query_cost": 0.05, "settle": "never", "horizon": 30}),
    ("MultiServiceChoice-v0", {"n_users": 30, "n_services": 8}),
    ("MultiServiceChoice-v0", {"n_users": 25, "n_services": 6, "reveal_groups": False}),
    ("DelayedImpactLending-v0", {"horizon": 30}),
    ("DelayedImpactLending-v0", {"scenario": "bin_shift", "batch_size": 3, "horizon": 30}),
]
PARAMS = [
    pytest.param(env_id, kwargs, view, id=f"{env_id}-{view}-{'-'.join(map(str, kwargs.values()))}")
    for env_id, kwargs in CASES
    for view in VIEWS
]
# small worlds of each family for the RL-ready ids
SMALL = {
    "lending": {"horizon": 30},
    "apple": {"horizon": 30},
    "reject": {"horizon": 30},
    "services": {"n_users": 30, "n_services": 5},
    "delayed_impact": {"horizon": 30},
}


def public_state(obj: Any, depth: int = 4) -> Any:
    """Every public attribute of ``obj``, recursively: what a cheater's loop can reach."""
    if isinstance(obj, np.random.Generator):
        return obj.bit_generator.state
    if depth == 0 or obj is None or isinstance(obj, str | int | float | bool | np.ndarray):
        return obj
    if isinstance(obj, dict):
        return {key: public_state(value, depth - 1) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [public_state(value, depth - 1) for value in obj]
    if hasattr(obj, "__dict__") and not (isinstance(obj, type) or inspect.isroutine(obj)):
        return {
            key: public_state(value, depth - 1)
            for key, value in vars(obj).items()
            if not key.startswith("_")
        }
    return obj


def rollout(env: gym.Env, seed: int, probe: str | None = None) -> tuple[list, list]:
    """Seeded random actions; return what the agent sees and the oracle of each step."""
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    # the wrapper's public attributes and its view's (the learner's fitted state included)
    seen: list = [(obs, strip_oracle(info), public_state(env), public_state(env._view))]
    oracles: list = []
    for _ in range(STEPS):
        action = env.action_space.sample()
        if probe is not None:
            override_hidden(env.unwrapped, action, probe)
        obs, reward, terminated, truncated, info = env.step(action)
        state = (public_state(env), public_state(env._view))
        seen.append((obs, reward, terminated, truncated, strip_oracle(info), state))
        oracles.append(info["oracle"])
        if terminated or truncated:
            break
    return seen, oracles


@pytest.mark.parametrize(("env_id", "kwargs", "view"), PARAMS)
def test_nothing_hidden_reaches_the_view(env_id, kwargs, view):
    """Obs, reward, feedback and the wrapper's whole state are the same whatever is hidden."""
    low, low_oracle = rollout(apply_view(gym.make(env_id, **kwargs), view), 21, "low")
    high, high_oracle = rollout(apply_view(gym.make(env_id, **kwargs), view), 21, "high")
    assert_same(low, high)
    # the probe did change the hidden truth, so the comparison could have failed
    assert differs(low_oracle, high_oracle)


@pytest.mark.parametrize(("env_id", "kwargs", "view"), PARAMS)
def test_checkers_accept_the_view(env_id, kwargs, view):
    env = apply_view(gym.make(env_id, **kwargs), view)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # checking the wrapper, not the raw env, is the point here
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        gym_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=True)


@pytest.mark.parametrize(("env_id", "kwargs", "view"), PARAMS)
def test_observations_are_float32_vectors_inside_finite_bounds(env_id, kwargs, view):
    env = apply_view(gym.make(env_id, **kwargs), view)
    space = env.observation_space
    assert space.dtype == np.float32 and len(space.shape) == 1
    assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
    seen, _ = rollout(env, 5)
    for step in seen:
        assert step[0].dtype == np.float32 and space.contains(step[0]), step[0]


@pytest.mark.parametrize("env_id", rl_env_ids())
def test_rl_ready_ids_hide_the_oracle_and_pass_both_checkers(env_id):
    kwargs = SMALL[next(e.family for e in RL_ENVS if e.id == env_id)]
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        gym_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=True)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert "oracle" not in info and "feedback" in info
    assert env.observation_space.dtype == np.float32 and len(env.observation_space.shape) == 1


@pytest.mark.parametrize("env_id", rl_env_ids())
def test_rl_ready_ids_run_in_a_sync_vector_env(env_id):
    kwargs = SMALL[next(e.family for e in RL_ENVS if e.id == env_id)]
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", **kwargs)
    obs, _ = envs.reset(seed=[1, 2])
    envs.action_space.seed(0)
    ends = 0
    for _ in range(35):  # past every episode's end: the sub-envs autoreset
        obs, reward, terminated, truncated, _ = envs.step(envs.action_space.sample())
        assert envs.observation_space.contains(obs)
        ends += int(np.sum(terminated | truncated))
    assert ends >= 2
    envs.close()


def test_rl_ready_ids_cover_every_family_and_view():
    assert {(e.kwargs["env_id"], e.kwargs["view"]) for e in RL_ENVS} == {
        (e.id, view) for e in ENVS for view in VIEWS if view in e.rl_views
    }
    env = gym.make("OneSidedLending-RL-v0", view="features", horizon=10)
    assert env.observation_space.shape == (4,)


@pytest.mark.crossimpl
def test_features_let_a_memoryless_policy_act_as_greedy():
    """Approving where ``mu(x . beta_hat) - c > 0`` is Greedy's decision, step for step.

    The view's estimator and Greedy's are two codes of one fit: their scores may
    differ in the last bits on another CPU, which flips a decision only for a
    score within ~1e-13 of the cutoff (~1e-11 over these 120 decisions); a wrong
    feature flips many, so the actions must be equal.
    """
    env = apply_view(gym.make("OneSidedLending-v0", batch_size=2, horizon=60), "features")

    class FirstFeature(Agent):
        def act(self, observation: Any) -> np.ndarray:
            return (observation[0:4:2] > 0).astype(np.int8)

    mimic = run_episode(env, FirstFeature(), seed=3)
    greedy = run_episode(gym.make("OneSidedLending-v0", batch_size=2, horizon=60), Greedy(), 3)
    np.testing.assert_array_equal(mimic.actions, greedy.actions)
    assert 0 < greedy.actions.sum() < greedy.actions.size  # the test could fail


def test_features_let_a_memoryless_policy_act_as_max_profit():
    """Approving where the learner's approval probability is above 1/2 is MaxProfit's decision."""
    kwargs = {"batch_size": 3, "horizon": 80}
    env = apply_view(gym.make("DelayedImpactLending-v0", **kwargs), "features")

    class SecondFeature(Agent):
        def act(self, observation: Any) -> np.ndarray:
            return (observation[1:6:2] > 0.5).astype(np.int8)

    mimic = run_episode(env, SecondFeature(), seed=2)
    reference = run_episode(
        gym.make("DelayedImpactLending-v0", **kwargs), MaxProfit(burnin=50), seed=2
    )
    np.testing.assert_array_equal(mimic.actions, reference.actions)
    assert 0 < reference.actions[50:].sum() < reference.actions[50:].size  # past the burn-in


def test_features_of_apple_and_reject_reproduce_their_learners():
    apple = apply_view(gym.make("AppleTasting-v0", dim=5, noise=0.1, horizon=80), "features")
    obs, _ = apple.reset(seed=4)
    actions = []
    for _ in range(80):
        action = int(obs[0] >= 0)
        actions.append(action)
        obs, _, _, truncated, _ = apple.step(action)
    reference = run_episode(
        gym.make("AppleTasting-v0", dim=5, noise=0.1, horizon=80), MarginPerceptron(), seed=4
    )
    assert actions == reference.actions.tolist() and 0 < sum(actions) < 80

    reject = apply_view(gym.make("RejectOption-v0", horizon=80), "features")
    obs, _ = reject.reset(seed=4)
    decisions = []
    for _ in range(80):
        decision = 2 if obs[0] > 0 else 0 if obs[1] < 0 else 1
        decisions.append(decision)
        obs, *_ = reject.step([decision, 1])
    reference = run_episode(gym.make("RejectOption-v0", horizon=80), DSOL(), seed=4)
    assert decisions == reference.actions[:, 0].tolist() and len(set(decisions)) == 3


def test_features_take_another_learner_and_refuse_the_wrong_one():
    env = EstimatorFeatures(gym.make("OneSidedLending-v0", horizon=10), learner=Adaptive())
    env.reset(seed=0)
    assert isinstance(env.learner_, Adaptive) and env.learner_ is not env.learner
    with pytest.raises(TypeError, match="learner must be a CutoffAgent"):
        EstimatorFeatures(gym.make("OneSidedLending-v0"), learner=DSOL())
    with pytest.raises(ValueError, match="learner must be None"):
        EstimatorFeatures(gym.make("MultiServiceChoice-v0", n_users=20), learner=AcQUIre())
    with pytest.raises(TypeError, match="osfb-gym's families"):
        EstimatorFeatures(gym.make("CartPole-v1"))


def test_an_unknown_view_is_named():
    with pytest.raises(ValueError, match="view must be one of"):
        rl_env("AppleTasting-v0", view="everything")
    with pytest.raises(ValueError, match="view must be one of"):
        apply_view(gym.make("AppleTasting-v0"), "everything")
    with pytest.raises(TypeError, match="takes no options"):
        apply_view(gym.make("AppleTasting-v0"), "plain", learner=MarginPerceptron())


def test_feedback_view_shows_the_last_step_and_zeros_at_reset():
    env = apply_view(gym.make("OneSidedLending-v0", batch_size=3, horizon=5), "feedback")
    obs, _ = env.reset(seed=0)
    assert not obs[15:].any()
    obs, reward, *_, info = env.step([1, 0, 1])
    block = obs[15:]
    np.testing.assert_array_equal(block[:3], [1, 0, 1])
    np.testing.assert_array_equal(block[3:6], info["feedback"]["revealed"])
    np.testing.assert_array_equal(block[6:9], info["feedback"]["y"].astype(np.float32))
    assert block[9] == np.float32(reward / 3)


@pytest.mark.slow  # torch's first use alone takes seconds
def test_ppo_learns_on_a_view_and_is_scored_through_it():
    """A smoke run: train a few hundred steps on an RL-ready id, score with the runner."""
    from stable_baselines3 import PPO

    from agents.rl import SB3Agent

    model = PPO(
        "MlpPolicy",
        gym.make("OneSidedLending-RL-Features-v0", horizon=20),
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=128)
    env = apply_view(gym.make("OneSidedLending-v0", horizon=20), "features")
    trajectory = run_episode(env, SB3Agent(model), seed=7)
    assert trajectory.oracle_loss.shape == (20,)


def test_encoders_and_views_pickle_and_encode_the_same_bits():
    """make_encoder is made of partials; a view's writer closure is remade on unpickling."""
    import pickle

    from osfb_gym.wrappers.views import encode, make_encoder, make_view

    env = gym.make("MultiServiceChoice-v0", n_users=30, n_services=4)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(3)
    space = env.observation_space
    encoder = pickle.loads(pickle.dumps(make_encoder(space)))
    np.testing.assert_array_equal(encoder(obs).astype(np.float32), encode(space, obs))
    for view in VIEWS:
        original = make_view(env, view)
        original.reset({})
        copy = pickle.loads(pickle.dumps(original))
        assert_same(copy.encode(obs), original.encode(obs))


def test_the_views_read_the_familys_record(monkeypatch):
    """A family's views class is its record's: without one, only the plain view exists."""
    import dataclasses

    import osfb_gym.envs.apple as apple
    from osfb_gym.wrappers.views import family_of, make_view

    env = gym.make("AppleTasting-v0", horizon=5)
    assert family_of(env) == "apple"
    assert type(make_view(env, "features").family_views).__name__ == "AppleViews"
    monkeypatch.setattr(apple, "FAMILY", dataclasses.replace(apple.FAMILY, views=None))
    for view in ("feedback", "features"):
        with pytest.raises(TypeError, match="view='plain'"):
            make_view(env, view)
    assert make_view(env, "plain").observation_space.shape == (20,)


def test_family_of_names_an_env_of_no_family():
    from osfb_gym.wrappers.views import family_of

    with pytest.raises(TypeError, match="lending, apple"):
        family_of(gym.make("CartPole-v1"))
