"""The AcQUIre reproduction: a spec on the engine, a tiny run, its statements."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

from osfb_gym.bench.driver import RunOptions
from osfb_gym.bench.suites import bose, run
from osfb_gym.bench.suites.bose import analysis as bose_report
from osfb_gym.bench.suites.bose.analysis import match_per_seed
from osfb_gym.cli import main


def test_the_suite_is_a_spec_on_the_engine_and_reads_no_oracle():
    spec = bose.sweep_spec(bose.Settings(seeds=1, absent=("adult", "movielens")))
    assert spec.curve_stride == 1  # every k of the family's curves is stored
    by_agent = {agent.name: set(agent.envs) for agent in spec.agents}
    curves = {env.label for env in spec.envs if env.label.startswith("curves | ")}
    fairness = {env.label for env in spec.envs if env.label.startswith("fairness | ")}
    assert len(curves) == len(bose.SYNTHETIC) and len(fairness) == 1  # no data at hand
    assert by_agent["FairAcQUIre"] == fairness and by_agent["MaxLossGreedy"] & fairness == set()
    assert curves <= by_agent["AcQUIre"] and fairness <= by_agent["AcQUIre"]
    reference = next(env.kwargs for env in spec.envs if env.label in curves)
    assert reference["reference_ks"] == [5, 10, 20, 30] and reference["reference_restarts"] == 5
    for module in (bose, bose_report):
        source = inspect.getsource(module)
        for reader in ('"oracle"', "OracleLog", "_world", "run_episode", "gym.Wrapper"):
            assert reader not in source


def test_a_tiny_run_gives_paired_curves_references_and_dynamics(tmp_path):
    options = RunOptions(seeds=1, horizon=3, progress=False, data_home=str(tmp_path / "no-data"))
    result = run("bose-services", tmp_path, options)
    curves = result.curves
    assert set(curves["k"]) == {1, 2, 3} and set(curves["agent"]) == {
        "AcQUIre",
        "Uniform",
        "Greedy",
    }
    # same world and agent seed, a uniform first pick for all three: the same first user
    first = curves[curves["k"] == 1].groupby("setting")["total_loss"].nunique()
    assert first.max() == 1
    assert set(result.references["k"]) == {1}
    joined = curves.merge(result.references, on=["setting", "seed", "k"])
    assert (joined["total_loss"] >= joined["reference_loss"] * (1 - 1e-6)).mean() > 0.9
    dyn = result.dynamics
    assert (dyn["after_dynamics"] <= dyn["after_initialisation"] * (1 + 1e-9)).all()
    assert "## Fairness" in result.text and (tmp_path / "total_loss.png").exists()
    # one seed: every comparison is paired over one world and can name no winner
    assert "## Verdicts" in result.text and "cannot tell at n=1" in result.text
    assert " lower than " not in result.text.split("## Verdicts")[1]


@pytest.mark.slow
def test_cli_runs_a_tiny_reproduction_under_the_old_name_too(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OSFB_DATA", raising=False)  # no MovieLens: the synthetic settings
    (tmp_path / "no-data").mkdir()
    argv = [
        "run",
        "dean-services",
        "--seeds",
        "2",
        "--horizon",
        "5",
        "--out",
        str(tmp_path),
        "--data-home",
        str(tmp_path / "no-data"),
        "--no-progress",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "## Total loss against k" in printed and "## Learning dynamics" in printed
    curves = pd.read_csv(tmp_path / "curves.csv")
    assert set(curves["k"]) == set(range(1, 6)) and set(curves["seed"]) == {0, 1}
    last = curves[curves["k"] == 5].groupby(["setting", "seed"])["total_loss"].nunique()
    assert last.min() > 1
    assert (tmp_path / "report.md").read_text().startswith("# osfb-bench bose-services")


def test_uniform_match_counts_a_seed_never_matched_as_one_more_than_the_range():
    frame = pd.DataFrame(
        {
            "setting": "s",
            "seed": 0,
            "agent": ["AcQUIre"] * 2 + ["Uniform"] * 2,
            "k": [1, 2] * 2,
            "excess_loss": [5.0, 1.0, 5.0, 4.0],
        }
    )
    per_seed = match_per_seed(frame, k=2)
    assert per_seed["censored"].tolist() == [1] and per_seed["median"].tolist() == [3.0]


@pytest.mark.slow
def test_movielens_runs_when_its_ratings_are_found_and_reports_excess(tmp_path):
    from tests.osfb_gym.envs.test_services import write_ratings

    home = write_ratings(tmp_path / "data", users=260, movies=80)
    options = RunOptions(seeds=1, horizon=3, progress=False, data_home=home)
    result = run("bose-services", tmp_path / "out", options)
    assert bose.MOVIELENS.label in set(result.curves["setting"])
    assert bose.MOVIELENS.env_kwargs["report"] == "excess"  # the paper's Eq. 4
    movielens = result.curves[result.curves["setting"].str.startswith("MovieLens")]
    assert len(movielens) == 3 * 3 and (movielens["excess_loss"] >= 0).all()


# ---------------------------------------------------------------- Theorem 1, exact optima
def _line(points, family="squared"):
    import numpy as np

    from osfb_gym.envs.services.world import Population

    phi = np.asarray(points, dtype=float).reshape(len(points), -1)
    n = len(phi)
    return Population(family, phi, np.ones(n), np.zeros(n, dtype=np.int64))


def test_exact_optimum_is_the_hand_computed_k_means_optimum():
    from osfb_gym.bench.suites.bose.exact import exact_optimum, preference_optimum

    world = _line([0, 1, 10, 11, 12])
    # k = 2: {0, 1} (mean 0.5: 0.25 + 0.25) and {10, 11, 12} (mean 11: 1 + 0 + 1)
    assert exact_optimum(world, 2) == pytest.approx(2.5)
    assert exact_optimum(world, 1) == pytest.approx(((world.preferences - 6.8) ** 2).sum())
    assert exact_optimum(world, 5) == pytest.approx(0.0)
    # at users' preferences: {0 or 1} costs 1, {11} costs 2
    assert preference_optimum(world, 2) == pytest.approx(3.0)


@pytest.mark.parametrize("loss", ["squared", "mahalanobis", "cosine"])
def test_exact_optimum_matches_brute_force_over_every_assignment(loss):
    import itertools

    import gymnasium as gym
    import numpy as np

    from osfb_gym.bench.suites.bose.exact import exact_optimum, preference_optimum

    env = gym.make("MultiServiceChoice-v0", n_users=7, n_services=3, loss=loss, dim=3, world_seed=4)
    env.reset(seed=0)
    world = env.unwrapped._world
    for k in (2, 3):
        best = np.inf
        for labels in itertools.product(range(k), repeat=world.n):  # k^n assignments
            assignment = np.array(labels)
            start = world.preferences[
                [
                    int(np.flatnonzero(assignment == j)[0]) if (assignment == j).any() else 0
                    for j in range(k)
                ]
            ]
            services = world.refit(start, assignment)
            best = min(best, world.loss_matrix(services).min(axis=1).sum())
        assert exact_optimum(world, k) == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert preference_optimum(world, k) >= exact_optimum(world, k) - 1e-12


def test_exact_acquire_expectation_is_the_agents_mean_within_its_error():
    import gymnasium as gym
    import numpy as np

    from agents.services.acquire import AcQUIre
    from osfb_gym.bench.suites.bose.exact import acquire_expectation
    from osfb_gym.runner import run_episode

    env = gym.make("MultiServiceChoice-v0", n_users=6, n_services=3, dim=2, world_seed=1)
    env.reset(seed=0)
    world = env.unwrapped._world
    losses = np.array(
        [run_episode(env, AcQUIre(), seed=s).metrics["total_loss"] for s in range(400)]
    )
    sem = losses.std(ddof=1) / np.sqrt(len(losses))
    assert abs(losses.mean() - acquire_expectation(world, 3)) < 4 * sem
    # by hand on the line: first pick uniform, then proportional to squared distance
    line = _line([0, 1, 3])
    # first 0: losses (0, 1, 9) -> 1 w.p. 0.1 (left 4), 3 w.p. 0.9 (left 1)
    # first 1: (1, 0, 4) -> 0 w.p. 0.2 (left 4), 3 w.p. 0.8 (left 1)
    # first 3: (9, 4, 0) -> 0 w.p. 9/13 (left 1), 1 w.p. 4/13 (left 1)
    expected = (0.1 * 4 + 0.9 * 1 + 0.2 * 4 + 0.8 * 1 + 1.0) / 3
    assert acquire_expectation(line, 2) == pytest.approx(expected)


def test_exact_optima_refuse_what_they_cannot_solve_exactly():
    from osfb_gym.bench.suites.bose.exact import exact_optimum
    from osfb_gym.envs.services.world import Population

    line = _line([0.0, 1.0])
    huber = Population("huber", line.preferences, line.weights, line.groups, deltas=line.weights)
    with pytest.raises(ValueError, match="family"):
        exact_optimum(huber, 1)
    with pytest.raises(ValueError, match="users"):
        exact_optimum(_line(list(range(15))), 2)
    with pytest.raises(ValueError, match="k must"):
        exact_optimum(_line([0, 1, 2]), 4)


def test_measure_reports_ratios_at_least_one_and_the_squared_bound():
    from osfb_gym.bench.suites.bose.exact import Case, measure, section

    frame = measure((Case("squared", "squared", n_users=6),), ks=(2,), worlds=(0,), episodes=20)
    row = frame.iloc[0]
    assert row["ratio_mean"] >= 1 - 1e-12 and row["exact_expected_ratio"] >= 1 - 1e-12
    assert row["at_preferences"] >= row["optimum"]
    assert row["bound"] == pytest.approx(8 * (np.log(2) + 2))
    assert "Theorem 1 against exact optima" in section(frame)
