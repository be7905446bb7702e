"""The osfb-bench command, run for real with tiny sizes."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from osfb_gym.cli import main


def test_quick_suite_writes_results_tables_and_plots(tmp_path, capsys):
    argv = ["run", "quick", "--seeds", "2", "--horizon", "20", "--total-timesteps", "64",
            "--out", str(tmp_path), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    for family in ("lending", "apple", "reject", "services"):
        assert f"## {family}:" in printed
    for agent in ("Adaptive", "Greedy", "PPO", "MarginPerceptron", "DSAL", "AcQUIre"):
        assert f"| {agent} " in printed
    assert "alpha=" in printed  # the tuned OneSidedEpsilonGreedy reports its chosen alpha
    results = pd.read_csv(tmp_path / "results.csv")
    # lending 3 settings x 2 agents + 2 x 4 alphas + PPO, apple 3, reject 3, services 4
    assert len(results) == (6 + 8 + 1 + 3 + 3 + 4) * 2
    assert not results.duplicated(["key"]).any()
    horizon = results[results["env_id"] != "MultiServiceChoice-v0"]["steps"]
    assert set(horizon) == {20.0}
    assert (tmp_path / "table.md").read_text().startswith("# osfb-bench quick")
    for png in ("average_loss_lending", "average_loss_reject", "loss_vs_k_services"):
        assert (tmp_path / f"{png}.png").read_bytes()[:4] == b"\x89PNG"
    # a second run with --resume runs nothing and keeps every row
    assert main([*argv, "--resume"]) == 0
    assert "0 run now, 50 resumed" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "results.csv").equals(results)


def test_list_names_suites_envs_and_agents(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "quick" in printed and "OneSidedLending-v0" in printed and "Adaptive" in printed
    assert "RejectOption-v0          DRAL, DSAL, DSOL, PPO" in printed
    assert "reject-option -> shah-reject" in printed


@pytest.mark.parametrize(
    "argv", [["run", "nope"], ["run", "quick", "--seeds", "0"], ["run", "quick", "--horizon", "x"]]
)
def test_bad_arguments_exit_with_a_message(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "osfb-bench" in capsys.readouterr().err


def test_console_script_is_installed():
    done = subprocess.run(
        [sys.executable, "-m", "osfb_gym.cli", "list"], capture_output=True, text=True, check=True
    )
    assert "OneSidedLending-v0" in done.stdout


def test_train_saves_a_model_and_scores_it_on_held_out_episodes(tmp_path, capsys):
    argv = ["train", "RejectOption-v0", "--algo", "A2C", "--total-timesteps", "40",
            "--env-kwargs", '{"horizon": 20}', "--world-seed", "1", "--algo-kwargs",
            '{"n_steps": 8}', "--save", str(tmp_path), "--eval-seeds", "2",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert (tmp_path / "A2C_RejectOption-v0_seed0.zip").is_file()
    assert "scored on 2 held-out episodes" in printed and "average_risk" in printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "RejectOption-v0", "--env-kwargs", "[1]"], "--env-kwargs must be a JSON object"),
        (["train", "RejectOption-v0", "--env-kwargs", '{"d": 0.9}'], "d must be"),
        (["train", "NoSuchEnv-v0"], "NoSuchEnv"),
    ],
)
def test_train_errors_are_one_line_messages(argv, message):
    with pytest.raises(SystemExit, match=message):
        main([*argv, "--no-progress"])


def test_tensorboard_without_its_package_is_explained(tmp_path):
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        pytest.skip("tensorboard is installed here: the message is for machines without it")
    with pytest.raises(SystemExit, match="osfb-gym\\[tensorboard\\]"):
        main(["train", "AppleTasting-v0", "--tensorboard", str(tmp_path), "--no-progress"])


@pytest.mark.parametrize(
    ("alias", "suite"),
    [("reject-option", "shah-reject"), ("acquire", "dean-services"),
     ("sculley-minority", "sculley-reuters")],
)  # fmt: skip
def test_the_issues_suite_names_run_the_paper_suites(alias, suite, monkeypatch):
    import osfb_gym.cli as cli

    seen = []
    for name in ("_run_shah_suite", "_run_dean_suite", "_run_sculley_suite"):
        monkeypatch.setattr(cli, name, lambda args: seen.append(args.suite) or 0)
    assert main(["run", alias, "--no-progress"]) == 0
    assert seen == [suite]
