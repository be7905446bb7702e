"""The rl-vs-bandit comparison, run for real with a tiny budget."""

from __future__ import annotations

import pandas as pd
import pytest

from osfb_gym.bench.suites.rl_vs_bandit import MATCHUPS, run_rl_vs_bandit, summary, verdicts
from osfb_gym.cli import main

TINY = {"PPO": {"n_steps": 32, "batch_size": 16, "n_epochs": 1}}
RUN = dict(
    families=["reject"],
    regimes=["fixed", "resampled"],
    algos=["PPO"],
    total_timesteps=64,
    eval_seeds=3,
    checkpoints=2,
    algo_kwargs=TINY,
    progress=False,
)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield run_rl_vs_bandit(tmp_path_factory.mktemp("rl"), **RUN)
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_every_agent_is_scored_on_the_same_held_out_episodes(result):
    frame = result.results
    agents = {"DSOL", "DRAL", "DSAL", "PPO"}
    assert set(frame["agent"]) == agents
    seeds = frame.groupby(["regime", "agent"])["seed"].apply(frozenset)
    assert len(set(seeds)) == 1 and len(next(iter(set(seeds)))) == 3
    rl = frame[frame["kind"] == "rl"]
    assert (rl["experience"] == 200 + 64).all()  # the training steps and the scored episode
    assert (frame[frame["kind"] == "principled"]["experience"] == 200).all()


@pytest.mark.slow
def test_learning_curve_points_and_files(result):
    curves = result.curves
    assert sorted(curves[curves["regime"] == "fixed"]["timesteps"]) == [32, 64]
    for path in result.files:
        assert path.stat().st_size > 0
    assert "## Verdicts" in result.report
    assert len(verdicts(summary(result.results))) == 2  # one per regime


def test_verdict_reads_the_direction_of_the_objective():
    rows = [
        {"family": "f", "regime": "fixed", "agent": a, "kind": k, "seed": s, "value": v,
         "objective": "f1", "experience": e, "train_seconds": 0.0, "lower_is_better": False}
        for a, k, e, values in [("PPO", "rl", 1000, [0.9, 0.92]), ("M", "principled", 10,
                                                                   [0.5, 0.52])]
        for s, v in enumerate(values)
    ]  # fmt: skip
    (line,) = verdicts(summary(pd.DataFrame(rows)))
    assert "PPO (0.91 f1, 1,000 env steps) beats M" in line


def test_the_matchups_cover_each_family_with_its_papers_agents():
    from envs_registry import env_ids

    assert {m.env_id for m in MATCHUPS} == set(env_ids())
    assert all(m.principled for m in MATCHUPS)


def test_bad_choices_exit_with_a_message(capsys):
    assert main(["run", "rl-vs-bandit", "--set", "families=poker", "--no-progress"]) == 2
    assert "unknown families" in capsys.readouterr().err
    assert main(["run", "rl-vs-bandit", "--set", "regimes=weekly", "--no-progress"]) == 2
    assert "regime" in capsys.readouterr().err


@pytest.mark.slow
def test_resume_reads_every_finished_cell_back_instead_of_training_again(result, monkeypatch):
    import osfb_gym.bench.suites.rl_vs_bandit as module

    def no_training(*args, **kwargs):
        raise AssertionError("a finished cell was trained again")

    monkeypatch.setattr(module, "train", no_training)
    again = run_rl_vs_bandit(result.files[0].parent, resume=True, **RUN)
    pd.testing.assert_frame_equal(again.results, result.results)
    pd.testing.assert_frame_equal(again.curves, result.curves)
    with pytest.raises(AssertionError, match="trained again"):  # a new budget is a new cell
        run_rl_vs_bandit(result.files[0].parent, resume=True, **{**RUN, "total_timesteps": 32})
