"""The osfb-bench command, run for real with tiny sizes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from osfb_gym.cli import main


@pytest.mark.slow
def test_quick_suite_writes_results_tables_and_plots(tmp_path, capsys):
    argv = "run quick --seeds 2 --horizon 20 --set total_timesteps=64 --no-progress".split()
    argv += ["--out", str(tmp_path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    for family in ("lending", "apple", "reject", "services"):
        assert f"## {family}:" in printed
    for agent in ("Adaptive", "Greedy", "PPO", "MarginPerceptron", "DSAL", "AcQUIre"):
        assert f"| {agent} " in printed
    assert "alpha=" in printed  # the tuned OneSidedEpsilonGreedy reports its chosen alpha
    results = pd.read_csv(tmp_path / "results.csv")
    # lending 3 settings x 2 agents + 2 x 4 alphas + PPO, apple 3, reject 3, services 4,
    # delayed impact 3
    assert len(results) == (6 + 8 + 1 + 3 + 3 + 4 + 3) * 2
    assert not results.duplicated(["key"]).any()
    horizon = results[results["env_id"] != "MultiServiceChoice-v0"]["steps"]
    assert set(horizon) == {20.0}
    assert (tmp_path / "table.md").read_text().startswith("# osfb-bench quick")
    for png in ("average_loss_lending", "average_loss_reject", "loss_vs_k_services"):
        assert (tmp_path / f"{png}.png").read_bytes()[:4] == b"\x89PNG"
    # a second run with --resume runs nothing and keeps every row
    assert main([*argv, "--resume"]) == 0
    assert "0 run now, 56 resumed" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "results.csv").equals(results)


def test_list_names_suites_envs_and_agents(capsys):
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "quick" in printed and "OneSidedLending-v0" in printed and "Adaptive" in printed
    assert "RejectOption-v0          DRAL, DSAL, DSOL, PPO" in printed
    assert "reject-option -> shah-reject" in printed


def test_console_script_is_installed():
    done = subprocess.run(
        [sys.executable, "-m", "osfb_gym.cli", "list"], capture_output=True, text=True, check=True
    )
    assert "OneSidedLending-v0" in done.stdout


def test_train_saves_a_model_and_scores_it_on_held_out_episodes(tmp_path, capsys):
    argv = [
        "train",
        "RejectOption-v0",
        "--algo",
        "A2C",
        "--total-timesteps",
        "40",
        "--env-kwargs",
        '{"horizon": 20}',
        "--world-seed",
        "1",
        "--algo-kwargs",
        '{"n_steps": 8}',
        "--save",
        str(tmp_path),
        "--eval-seeds",
        "2",
        "--no-progress",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert (tmp_path / "A2C_RejectOption-v0_seed0.zip").is_file()
    assert "scored on 2 held-out episodes" in printed and "average_risk" in printed


def test_tensorboard_without_its_package_is_explained(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        pytest.skip("tensorboard is installed here: the message is for machines without it")
    assert main(["train", "AppleTasting-v0", "--tensorboard", str(tmp_path), "--no-progress"]) == 2
    assert "osfb-gym[tensorboard]" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("alias", "suite"),
    [
        ("reject-option", "shah-reject"),
        ("acquire", "bose-services"),
        ("dean-services", "bose-services"),
        ("sculley-minority", "sculley-reuters"),
    ],
)
def test_the_old_and_the_issues_suite_names_run_the_paper_suites(alias, suite, monkeypatch):
    import dataclasses

    from osfb_gym.bench import catalog

    seen = []
    entry = catalog.SUITES[suite]
    fake = dataclasses.replace(entry, run=lambda name, out, **given: seen.append(name) or "")
    monkeypatch.setitem(catalog.SUITES, suite, fake)
    assert main(["run", alias, "--no-progress"]) == 0
    assert seen == [suite]


def test_version_is_the_packages(capsys):
    import osfb_gym

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"osfb-bench {osfb_gym.__version__}"


def test_help_imports_nothing_heavy_and_shows_defaults():
    code = (
        "import sys\nfrom osfb_gym.cli import build_parser\n"
        "text = build_parser()._subparsers._group_actions[0].choices['run'].format_help()\n"
        "print(text)\nprint(sorted(m for m in ('pandas', 'sklearn', 'torch', 'agents') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("[]")  # none of them imported
    assert "(default: local)" in done.stdout and "(default: 1)" in done.stdout
    assert "bose-services" in "".join(done.stdout.split())  # argparse may wrap at a hyphen


USER_ERRORS = [
    (["run", "nope"], "unknown suite 'nope'"),
    (["run", "quick", "--seeds", "0"], "argument --seeds: expected a positive integer, got '0'"),
    (["run", "quick", "--horizon", "x"], "argument --horizon"),
    (["run", "shah-reject", "--workers", "0"], "argument --workers"),
    (["run", "quick", "--data-home", "/nonexistent"], "--data-home: /nonexistent: not found"),
    (["run", "quick", "--out", __file__], "--out"),
    (["run", "quick", "--set", "nope=1"], "--set nope: suite quick has no such setting"),
    (["run", "quick", "--set", "total_timesteps=x"], "--set total_timesteps= expects"),
    (["run", "jiang-linear", "--set", "datasets=nosuch", "--no-progress"], "nosuch"),
    (["run", "jiang-linear", "--set", "alphas=1", "--no-progress"], "alphas= must read LOW:HIGH"),
    (["run", "quick", "--executor", "dask"], "argument --executor"),
    (["table", "jiang-linear", "/nonexistent.csv", "--out", "x"], "/nonexistent.csv"),
    (["sweep", "/nonexistent.toml"], "/nonexistent.toml: no such file; give a file"),
    (["sweep", str(Path(__file__).parent)], f"{Path(__file__).parent}: a folder; give a file"),
    (["train", "RejectOption-v0", "--env-kwargs", "[1]"], "--env-kwargs: expected a JSON object"),
    (["grade", "x.py", "--env", "AppleTasting-v0", "--env-kwargs", "{"], "--env-kwargs: expected"),
    (["train", "RejectOption-v0", "--env-kwargs", '{"d": 0.9}'], "d must be"),
    (["train", "NoSuchEnv-v0"], "NoSuchEnv"),
]


@pytest.mark.parametrize(("argv", "message"), USER_ERRORS)
def test_a_user_error_is_one_line_naming_the_flag_or_file_and_exit_code_2(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_info:  # argparse's own errors
        code = exit_info.code
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_a_spec_with_values_of_the_wrong_type_is_a_user_error(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text('[[envs]]\nid = "OneSidedLending-v0"\nkwargs = 5\n[[agents]]\nname = "Greedy"')
    assert main(["sweep", str(spec)]) == 2
    assert "envs[0].kwargs must be a table, got 5" in capsys.readouterr().err


def test_a_bug_shows_its_traceback_and_asks_for_a_report(monkeypatch, capsys):
    from osfb_gym.bench import catalog

    def broken(name, out, **given):
        raise KeyError("a bug")

    monkeypatch.setitem(catalog.SUITES, "quick", catalog.Suite("quick", "", {}, broken))
    assert main(["run", "quick"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "KeyError: 'a bug'" in err and "please report it" in err


def test_the_train_command_offers_every_algorithm_of_the_bench():
    from osfb_gym.bench.rl import ALGORITHMS
    from osfb_gym.cli import ALGORITHMS as OFFERED

    assert OFFERED == ALGORITHMS


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        ("count", "1e4", 10_000),
        ("counts", "20, 40", (20, 40)),
        ("names", "a,,b ", ("a", "b")),
        ("gammas", "1,2.5", (1.0, 2.5)),
        ("alphas", "-1:1", (0.5, 1.0, 2.0)),
        ("bool", "TRUE", True),
        ("count", "0", None),
        ("count", "2.5", None),
        ("gammas", "0,1", None),
        ("bool", "yes", None),
        ("alphas", "2:1", None),
    ],
)
def test_every_kind_of_setting_reads_its_text_or_refuses_it(kind, text, value):
    from osfb_gym.bench.catalog import KINDS

    parse, _ = KINDS[kind]
    if value is None:
        with pytest.raises(ValueError):
            parse(text)
    else:
        assert parse(text) == value
