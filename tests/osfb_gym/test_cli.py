"""The osfb-bench command, run for real with tiny sizes."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from osfb_gym.cli import main


def test_quick_suite_writes_results_table_and_plot(tmp_path, capsys):
    assert (
        main(
            [
                "run",
                "quick",
                "--seeds",
                "2",
                "--horizon",
                "30",
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "| setting" in printed and "Adaptive" in printed and "Greedy" in printed
    results = pd.read_csv(tmp_path / "results.csv")
    assert len(results) == 2 * 2 * 2  # settings x agents x seeds
    assert set(results["steps"]) == {30.0}
    assert (tmp_path / "table.md").read_text().startswith("# osfb-bench quick")
    assert (tmp_path / "average_loss.png").read_bytes()[:4] == b"\x89PNG"


def test_list_names_suites_envs_and_agents(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "quick" in printed and "OneSidedLending-v0" in printed and "Adaptive" in printed


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
