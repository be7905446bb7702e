"""The AcQUIre reproduction: a spec on the engine, a tiny run, its statements."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from osfb_gym.bench.suites import bose, bose_report
from osfb_gym.bench.suites.bose_report import match_per_seed
from osfb_gym.cli import main


def test_the_suite_is_a_spec_on_the_engine_and_reads_no_oracle():
    spec = bose.sweep_spec(bose.BoseSuite(seeds=(0,)), found=set(), data_home=None)
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
    result = bose.run_bose(
        bose.BoseSuite(),
        tmp_path,
        seeds=(0,),
        horizon=3,
        progress=False,
        data_home=str(tmp_path / "no-data"),
    )
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
    result = bose.run_bose(
        bose.BoseSuite(), tmp_path / "out", seeds=(0,), data_home=home, horizon=3, progress=False
    )
    assert bose.MOVIELENS.label in set(result.curves["setting"])
    assert bose.MOVIELENS.env_kwargs["report"] == "excess"  # the paper's Eq. 4
    movielens = result.curves[result.curves["setting"].str.startswith("MovieLens")]
    assert len(movielens) == 3 * 3 and (movielens["excess_loss"] >= 0).all()
