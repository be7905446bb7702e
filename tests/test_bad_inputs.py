"""Every bad input named: the defects of issue 32's fuzz, each by name, and our own fuzz.

The fuzz (:mod:`tests.bad_inputs`) feeds every env id, agent class, data
loader, sweep spec, CLI command and the runner with bad inputs; each must be
refused with a ``ValueError``/``TypeError`` (``RuntimeError`` for a call out
of order) naming what was wrong, or be a documented valid input. The
products of every argument with every bad value run with ``-m slow``; the
rest runs by default.
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import osfb_gym  # noqa: F401  (registers the ids)
from agents.apple import Perceptron
from agents.base import SpaceCheck, check_finite_numbers
from agents.lending import Greedy
from agents.reject import DSAL
from osfb_gym.bench.sweep import spec_from_dict
from osfb_gym.cli import main
from osfb_gym.core.validation import check_memory, memory_limit
from osfb_gym.data import load
from tests.bad_inputs import GERMAN_BAD_CREDIT, GERMAN_ROW, Case, _spec, all_cases, classify

LENDING, APPLE, REJECT, SERVICES = (
    "OneSidedLending-v0",
    "AppleTasting-v0",
    "RejectOption-v0",
    "MultiServiceChoice-v0",
)
SMALL = {
    LENDING: {"horizon": 3},
    APPLE: {"horizon": 3},
    REJECT: {"horizon": 3},
    SERVICES: {"n_users": 6, "n_services": 3},
}


def started(cls, env_id, **params):
    env = gym.make(env_id, **SMALL[env_id])
    obs, info = env.reset(seed=0)
    agent = cls(**params)
    agent.reset(env.observation_space, env.action_space, seed=0, feedback=info["feedback"])
    return agent, env, obs, info


# ---------------------------------------------------------------------------- agents
def test_greedy_refuses_a_nan_cutoff_instead_of_approving_nobody():
    env = gym.make(LENDING, **SMALL[LENDING])
    _, info = env.reset(seed=0)
    feedback = {**info["feedback"], "cutoff": math.nan}
    with pytest.raises(ValueError, match=r"feedback\['cutoff'\] must be a finite number"):
        Greedy().reset(env.observation_space, env.action_space, seed=0, feedback=feedback)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_non_finite_number_inside_a_hyperparameter_is_refused_for_every_agent(value):
    agent = DSAL(kernel="rbf", kernel_params={"gamma": value})
    env = gym.make(REJECT, **SMALL[REJECT])
    with pytest.raises(ValueError, match=r"DSAL hyperparameter kernel_params\['gamma'\]"):
        agent.reset(env.observation_space, env.action_space, seed=0)


def test_perceptron_update_refuses_an_action_outside_discrete_2():
    agent, env, obs, _ = started(Perceptron, APPLE)
    _, reward, _, _, info = env.step(agent.act(obs))
    with pytest.raises(ValueError, match=r"Perceptron.update: action must lie in Discrete\(2\)"):
        agent.update(obs, 7, reward, info["feedback"])


def test_dsal_update_refuses_an_action_outside_its_multidiscrete_space():
    agent, env, obs, _ = started(DSAL, REJECT)
    action = agent.act(obs)
    _, reward, _, _, info = env.step(action)
    with pytest.raises(ValueError, match=r"DSAL.update: action must lie in MultiDiscrete"):
        agent.update(obs, [5, 1], reward, info["feedback"])
    agent.update(obs, action, reward, info["feedback"])  # the action it took is fine


@pytest.mark.parametrize(
    ("feedback", "error", "match"),
    [
        (None, TypeError, r"feedback must be the step's info\['feedback'\] \(a dict\)"),
        ({}, ValueError, r"feedback must hold 'revealed', 'y'"),
    ],
)
def test_update_names_a_feedback_that_is_not_the_steps(feedback, error, match):
    agent, env, obs, _ = started(Greedy, LENDING)
    action = agent.act(obs)
    _, reward, _, _, _ = env.step(action)
    with pytest.raises(error, match=match):
        agent.update(obs, action, reward, feedback)


def test_agent_reset_names_a_negative_seed_and_takes_a_numpy_one():
    env = gym.make(APPLE, **SMALL[APPLE])
    with pytest.raises(ValueError, match=r"Perceptron.reset: seed must be an integer >= 0"):
        Perceptron().reset(env.observation_space, env.action_space, seed=-1)
    Perceptron().reset(env.observation_space, env.action_space, seed=np.int64(3))


def test_an_observation_that_is_not_numbers_is_named():
    agent, *_ = started(Greedy, LENDING)
    with pytest.raises(TypeError, match="Greedy.act: observation must be an array of numbers"):
        agent.act("x")


def test_space_check_takes_what_the_envs_take():
    binary = SpaceCheck(gym.spaces.MultiBinary(3))
    binary(np.array([1, 0, 1], dtype=np.int8), "action")
    binary([1.0, 0.0, True], "action")  # floats exactly 0/1 (stable-baselines3), booleans
    with pytest.raises(ValueError, match="action must hold only 0 and 1"):
        binary([1, 2, 0], "action")
    discrete = SpaceCheck(gym.spaces.Discrete(2))
    discrete(np.int64(1), "action")
    discrete(True, "action")  # a bool is an action of Discrete(2), as AppleTasting takes it
    with pytest.raises(TypeError, match="action must be an integer"):
        discrete(0.5, "action")


def test_check_finite_numbers_walks_nested_tables():
    check_finite_numbers({"a": [1, {"b": 2.0}], "s": "text", "flag": True}, "x")
    with pytest.raises(ValueError, match=r"x\['a'\]\[1\]\['b'\]"):
        check_finite_numbers({"a": [1, {"b": -math.inf}]}, "x")


# ---------------------------------------------------------------------------- envs
@pytest.mark.parametrize("env_id", [LENDING, APPLE, REJECT, SERVICES])
def test_reset_refuses_an_unknown_options_key_by_name(env_id):
    env = gym.make(env_id, **SMALL[env_id])
    with pytest.raises(ValueError, match=f"options of {env_id}.reset has no key 'foo'"):
        env.reset(seed=0, options={"foo": 1})
    env.reset(seed=0, options={})  # empty options: nothing to refuse


@pytest.mark.parametrize("env_id", [LENDING, APPLE, REJECT, SERVICES])
def test_every_env_refuses_a_step_after_its_episode_ended(env_id):
    env = gym.make(env_id, **SMALL[env_id])
    env.reset(seed=0)
    done = False
    while not done:
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        env.step(env.action_space.sample())
    env.reset(seed=1)
    env.step(env.action_space.sample())  # a new episode steps again


def test_a_time_limit_below_the_horizon_truncates_without_ending_the_envs_own_episode():
    # Gymnasium's TimeLimit truncates; the env itself is not over (its horizon is later),
    # as Gymnasium's own envs behave
    env = gym.make(LENDING, horizon=5, max_episode_steps=2)
    env.reset(seed=0)
    env.step([0])
    *_, truncated, _ = env.step([0])
    assert truncated


@pytest.mark.parametrize(("argument", "value"), [("tau", 0.2), ("trap_probability", 0.2)])
def test_lending_refuses_greedy_trap_arguments_on_the_gaussian_scenario(argument, value):
    with pytest.raises(ValueError, match=f"{argument} applies to scenario='greedy_trap' only"):
        gym.make(LENDING, **{argument: value})
    gym.make(LENDING, scenario="greedy_trap", **{argument: value})


@pytest.mark.parametrize("scenario", ["gappy", "striped"])
def test_apple_refuses_positive_rate_where_the_boundary_is_fixed(scenario):
    with pytest.raises(ValueError, match="positive_rate applies to scenario='separable'"):
        gym.make(APPLE, scenario=scenario, positive_rate=0.3)


def test_lending_refuses_a_noise_std_whose_outcomes_overflow():
    with pytest.raises(ValueError, match="noise_std must be <= 1000000.0"):
        gym.make(LENDING, link="linear", noise_std=1e308)
    env = gym.make(LENDING, link="linear", noise_std=1e6)  # the largest: outcomes finite
    _, info = env.reset(seed=0)
    assert np.isfinite(info["feedback"]["warm_start"]["y"]).all()


@pytest.mark.parametrize("render_mode", [1.5, True, ["ansi"]])
def test_make_names_a_render_mode_that_is_not_a_string(render_mode):
    with pytest.raises(TypeError, match="render_mode must be one of 'ansi', 'rgb_array'"):
        gym.make(APPLE, render_mode=render_mode)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "named"),
    [
        (LENDING, {"batch_size": 10**9}, "batch_size x dim"),
        (LENDING, {"warm_start": 10**9}, "warm_start x dim"),
        (LENDING, {"dim": 10**9}, "batch_size x dim"),
        (APPLE, {"dim": 10**9}, "dim"),
        (APPLE, {"order": "adversarial", "horizon": 10**9}, "horizon x dim"),
        (REJECT, {"dim": 10**9}, "dim"),
        (SERVICES, {"n_users": 10**9}, "n_users x dim"),
        (SERVICES, {"n_users": 10**5, "dim": 10**4, "loss": "mahalanobis"}, "mahalanobis"),
    ],
)
def test_sizes_that_cannot_fit_are_refused_at_once_from_an_estimate(env_id, kwargs, named):
    with pytest.raises(ValueError, match=f"{named}.* needs about .* GB, more than"):
        gym.make(env_id, **kwargs)


def test_memory_limit_is_positive_and_the_check_passes_what_fits():
    assert memory_limit() > 0
    check_memory(10**6, "a megabyte")
    with pytest.raises(ValueError, match="n x d = 4 x 4 needs about"):
        check_memory(2e9, "n x d = 4 x 4", limit=10**9)


# ---------------------------------------------------------------------------- data
def test_load_refuses_a_download_that_is_not_a_bool():
    with pytest.raises(TypeError, match="download must be True or False, got 'no'"):
        load("breast_cancer", download="no")


def test_german_refuses_an_undocumented_code_naming_column_and_code(tmp_path):
    folder = tmp_path / "german_credit"
    folder.mkdir()
    bad = GERMAN_ROW.replace("A43", "A99", 1)
    (folder / "german.data").write_text(f"{GERMAN_ROW}\n{bad}\n{GERMAN_BAD_CREDIT}\n")
    with pytest.raises(ValueError, match=r"line 2, column 'purpose': 'A99' is not an allowed"):
        load("german", data_home=str(tmp_path), download=False)
    (folder / "german.data").write_text(f"{GERMAN_ROW}\n{GERMAN_BAD_CREDIT}\n")
    assert load("german", data_home=str(tmp_path), download=False).X.shape[0] == 2


# ---------------------------------------------------------------------------- sweep, CLI
@pytest.mark.parametrize("grid", [[1, 1.0], [0.5, 0.5], [[1, 2], [1.0, 2]]])
def test_a_sweep_grid_with_values_taken_as_equal_is_refused(grid):
    with pytest.raises(ValueError, match="the grid of 'alpha' lists .* more than once"):
        spec_from_dict(_spec(**{"agents.grid": {"alpha": grid}}))


def test_a_sweep_label_must_be_a_string():
    with pytest.raises(TypeError, match=r"envs\[0\].label must be a string, got 5"):
        spec_from_dict(_spec(**{"envs.label": 5}))


def test_train_refuses_negative_eval_seeds(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", LENDING, "--eval-seeds", "-3"])
    assert exit_.value.code == 2
    assert "--eval-seeds: expected an integer >= 0, got '-3'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "jiang-linear", "--set", "alphas=-2000:2000"], "--set alphas= must read LOW:HIGH"),
        (["run", "jiang-linear", "--seeds", "9" * 30], "seeds (--seeds) must be at most 100,000"),
        (["run", "quick", "--seeds", "9" * 30], "seeds (--seeds) must be at most 100,000"),
    ],
)
def test_overflowing_settings_are_one_line_user_errors(argv, says, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert says in err and "bug" not in err and len(err.strip().splitlines()) == 1


def test_table_on_a_csv_without_a_key_column_is_a_one_line_user_error(capsys, tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("a,b\n1,2\n")
    assert main(["table", "jiang-linear", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: no column 'key'" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- the fuzz
_TMP = Path(tempfile.mkdtemp(prefix="osfb-fuzz-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


def _is_product(case_id: str) -> bool:
    """Whether a case is of an argument x bad value product (``env X a=v``, ``agent X(p=v)``)."""
    words = case_id.split()
    if words[0] == "agent":
        return "(" in words[1] and "." not in words[1].split("(")[0]
    if words[0] == "env" and len(words) == 3 and "=" in words[2]:
        return not words[2].startswith(("render_mode=bogus", "view=")) and "10**9" not in words[2]
    return False


def _params() -> list:
    return [
        pytest.param(case, id=case.id, marks=[pytest.mark.slow] if _is_product(case.id) else [])
        for case in all_cases(_TMP)
    ]


@pytest.mark.parametrize("case", _params())
def test_every_bad_input_is_named_or_documented_valid(case: Case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium's warnings about odd arguments
        result = classify(case)
    assert result.kind in ("clear", "valid"), f"{result.kind}: {result.detail}"
